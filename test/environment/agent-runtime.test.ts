/**
 * The runtime of an agent CLI in an image (environment/agent-runtime.ts) and the forwarder of a
 * loopback model API (environment/forward.ts), without an engine: what is mounted, what the
 * container starts, and which URLs are pointed where. The real CLIs in real images:
 * test/e2e/presets-in-images.test.ts.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AgentRuntimes, RUNTIME_DIR } from "../../src/environment/agent-runtime.js";
import { forwardLoopback, loopbackUrls } from "../../src/environment/forward.js";
import { tempDir, writeFiles } from "../helpers.js";

describe("the runtime of an agent CLI", () => {
  it("starts a node program with the runner's node through its own loader, its node_modules beside it", async () => {
    const root = tempDir("evalgate-rt-");
    const install = tempDir("evalgate-rt-install-");
    writeFiles(install, {
      "node_modules/@acme/cli/package.json": JSON.stringify({ name: "@acme/cli" }),
      "node_modules/@acme/cli/dist/index.js": "#!/usr/bin/env node\nconsole.log('hi')\n",
    });
    const script = path.join(install, "node_modules/@acme/cli/dist/index.js");
    chmodSync(script, 0o755);
    mkdirSync(path.join(install, "node_modules/.bin"));
    symlinkSync("../@acme/cli/dist/index.js", path.join(install, "node_modules/.bin/acme"));
    const rt = await new AgentRuntimes(root).of(path.join(install, "node_modules/.bin/acme"));
    if (typeof rt === "string") throw new Error(rt);
    const loader = rt.head[0]!;
    expect(loader).toMatch(new RegExp(`^${RUNTIME_DIR}/lib/ld-[^/]+\\.so\\.\\d$`));
    expect(rt.head.slice(1)).toEqual([
      "--library-path",
      `${RUNTIME_DIR}/lib`,
      `${RUNTIME_DIR}/bin/${path.basename(process.execPath)}`,
      `${RUNTIME_DIR}/node_modules/@acme/cli/dist/index.js`,
    ]);
    expect(rt.mounts).toEqual(
      expect.arrayContaining([
        {
          host: path.join(install, "node_modules"),
          container: `${RUNTIME_DIR}/node_modules`,
          readOnly: true,
        },
        {
          host: expect.stringContaining(path.join(root, "agent-runtime")),
          container: `${RUNTIME_DIR}/lib`,
          readOnly: true,
        },
      ]),
    );
    expect(rt.mounts.every((m) => m.readOnly)).toBe(true);
    // The libraries ldd names, and the loader, copied once into the work root.
    const lib = rt.mounts.find((m) => m.container === `${RUNTIME_DIR}/lib`)!.host;
    const names = readdirSync(lib);
    expect(names).toContain(path.basename(loader));
    expect(names).toContain("libc.so.6");
    // The copy really runs node without the system's loader path.
    const v = execFileSync(
      path.join(lib, path.basename(loader)),
      ["--library-path", lib, process.execPath, "--version"],
      {
        encoding: "utf8",
      },
    );
    expect(v.trim()).toBe(process.version);
    // The same program again: the same runtime, nothing assembled twice.
    const runtimes = new AgentRuntimes(root);
    expect(await runtimes.of(script)).toEqual(await runtimes.of(script));
  });

  it("runs a static program as it is, with no loader and no libraries", async () => {
    const busybox = ["/bin/busybox", "/usr/bin/busybox"].find((p) => existsSync(p));
    if (!busybox || !/statically linked/.test(execFileSync("file", ["-L", busybox], { encoding: "utf8" })))
      return;
    const rt = await new AgentRuntimes(tempDir("evalgate-rt-")).of(busybox);
    if (typeof rt === "string") throw new Error(rt);
    expect(rt.head).toEqual([`${RUNTIME_DIR}/bin/busybox`]);
    expect(rt.mounts.map((m) => m.container)).toEqual([`${RUNTIME_DIR}/bin/busybox`]);
  });

  it("says why a program that is neither native nor node cannot run in an image", async () => {
    const dir = tempDir("evalgate-rt-");
    writeFiles(dir, { "agent.py": "#!/usr/bin/env python3\nprint('hi')\n" });
    const rt = await new AgentRuntimes(dir).of(path.join(dir, "agent.py"));
    expect(rt).toMatch(/is neither a native program nor a node script/);
  });
});

describe("a loopback model API forwarded to a container's network", () => {
  it("finds each loopback URL once, with its default port", () => {
    expect(
      loopbackUrls([
        "http://127.0.0.1:8080/v1",
        'openai_base_url="http://127.0.0.1:8080/v1"',
        "https://localhost/x",
        "http://[::1]:9/",
        "http://127.0.0.10:5/",
        "http://example.com:80/",
      ]).map((f) => f.authority),
    ).toEqual(["127.0.0.1:8080", "localhost:443", "[::1]:9"]);
  });

  it("rewrites the URLs to the gateway and pipes to the loopback port, for the network's subnet only", async () => {
    const server = http.createServer((_, res) => res.end("model\n"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const url = `http://127.0.0.1:${port}/v1`;
    // The "network" here is the loopback itself: its gateway 127.0.0.1, its subnet 127.0.0.0/8.
    const fwd = await forwardLoopback([url], { gateway: "127.0.0.1", subnet: "127.0.0.0/8" });
    const other = await forwardLoopback([url], { gateway: "127.0.0.1", subnet: "10.99.0.0/16" });
    const listed = await forwardLoopback([url], { gateway: "127.0.0.1", subnet: "127.0.0.0/8" }, () => false);
    try {
      expect(listed).toBeUndefined();
      const via = fwd!.rewrite(`-c openai_base_url="${url}"`);
      expect(via).toMatch(/^-c openai_base_url="http:\/\/127\.0\.0\.1:(\d+)\/v1"$/);
      expect(via).not.toContain(`:${port}/`);
      expect(fwd!.forwarded).toEqual([`127.0.0.1:${port}`]);
      const got = await fetch(/"(.*)"/.exec(via)![1]!).then((r) => r.text());
      expect(got).toBe("model\n");
      // From outside the network's subnet: closed before a byte.
      await expect(fetch(other!.rewrite(url))).rejects.toThrow();
    } finally {
      await fwd?.close();
      await other?.close();
      server.close();
    }
  });
});
