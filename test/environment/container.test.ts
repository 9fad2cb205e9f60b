/**
 * The container runner with a real engine (Podman with runc on this project's machines) and images
 * made offline. Before this runner, evalgate had no way to run a command in an image at all: each
 * "before:" below says what the host runner did instead.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeCgroups } from "../../src/environment/cgroup.js";
import { liveContainers } from "../../src/environment/cleanup.js";
import {
  containerRunner,
  type Mount,
  rewritePaths,
  toContainerPath,
} from "../../src/environment/container.js";
import { engineExec } from "../../src/environment/engine.js";
import { type PreparedImage, prepareImage } from "../../src/environment/image.js";
import { type AllowNetwork, createAllowNetwork, removeAllowNetwork } from "../../src/environment/network.js";
import { ChildProcessRunner } from "../../src/sandbox/process.js";
import { tempDir } from "../helpers.js";
import { busyboxImage, testEngine } from "./images.js";

const { engine } = await testEngine();
const host = new ChildProcessRunner();
/** The cgroup evalgate reads a container's use from (this project's machines run evalgate as root). */
const cgroups = probeCgroups();
const meter = () => (typeof cgroups === "string" ? {} : { cgroups });

describe("container paths", () => {
  const mounts: Mount[] = [
    { host: "/tmp/a/run-1/ws", container: "/app" },
    { host: "/tmp/a/run-1", container: "/evalgate" },
  ];
  it("maps a host path to the deepest mount's container path", () => {
    expect(toContainerPath(mounts, "/tmp/a/run-1/ws/src")).toBe("/app/src");
    expect(toContainerPath(mounts, "/tmp/a/run-1/home")).toBe("/evalgate/home");
    expect(toContainerPath(mounts, "/tmp/a/run-10")).toBeUndefined();
  });
  it("rewrites mounted paths inside text, and only whole path components", () => {
    expect(rewritePaths(mounts, "cat /tmp/a/run-1/ws/x '/tmp/a/run-1/prompt.md'")).toBe(
      "cat /app/x '/evalgate/prompt.md'",
    );
    expect(rewritePaths(mounts, "/tmp/a/run-10/x")).toBe("/tmp/a/run-10/x");
  });
});

describe.skipIf(!engine)("containerRunner (real engine)", () => {
  let image: PreparedImage;
  let root: string;
  let ws: string;
  let home: string;
  const setup = (extra: Partial<Parameters<typeof containerRunner>[1]> = {}) =>
    containerRunner(host, {
      engine: engine!,
      image,
      label: "test",
      mounts: [
        { host: ws, container: "/app" },
        { host: path.join(root, "home"), container: "/evalgate/home" },
      ],
      network: false,
      ...extra,
    });
  const spec = (shell: string, more: Record<string, unknown> = {}) => ({
    command: { shell },
    cwd: ws,
    env: { PATH: "/host/only/bin", HOME: home, SECRET_TOKEN: "s3cr3t value\nwith a newline" },
    timeoutMs: 60_000,
    captureStdout: true,
    ...more,
  });

  beforeAll(async () => {
    const ref = await busyboxImage(engine!);
    const prepared = await prepareImage(engine!, { kind: "image", image: ref });
    if ("error" in prepared) throw new Error(prepared.error);
    image = prepared;
    root = tempDir("evalgate-ctr-");
    ws = path.join(root, "ws");
    home = path.join(root, "home");
    mkdirSync(ws);
    mkdirSync(home);
  });

  it("runs in the image with the workspace at workdir, the image's PATH and the variables it is given", async () => {
    // before: the host runner ran `exam-tool`-less host programs in the host's folders.
    writeFileSync(path.join(ws, "in.txt"), "from the host\n");
    const r = await setup().run(
      spec(
        'pwd; echo "$PATH"; echo "$HOME"; cat in.txt; printf %s "$SECRET_TOKEN" | wc -l; echo made > out.txt; ls /evalgate',
      ),
    );
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("/app");
    expect(lines[1]).toBe("/usr/local/bin:/bin");
    expect(lines[2]).toBe("/evalgate/home");
    expect(lines[3]).toBe("from the host");
    expect(lines[4]?.trim()).toBe("1");
    // Only what was mounted: the attempt's home, nothing else of the host.
    expect(lines[5]).toBe("home");
    expect(readFileSync(path.join(ws, "out.txt"), "utf8")).toBe("made\n");
  });

  it("masks the answer key, .git and .evalgate inside a read-only mount, never inside the workspace", async () => {
    // before: a folder mounted for a scorer showed everything in it, the reference patch included.
    const evalDir = path.join(root, "evals");
    mkdirSync(path.join(evalDir, ".git"), { recursive: true });
    mkdirSync(path.join(evalDir, "verifiers"), { recursive: true });
    writeFileSync(path.join(evalDir, ".git", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(evalDir, "verifiers", "check.sh"), "secret check\n");
    writeFileSync(path.join(evalDir, "fix.patch"), "the answer\n");
    writeFileSync(path.join(evalDir, "scorer.sh"), "echo scoring\n");
    mkdirSync(path.join(ws, ".git"), { recursive: true });
    writeFileSync(path.join(ws, ".git", "HEAD"), "workspace head\n");
    const r = await setup({
      mounts: [
        { host: ws, container: "/app" },
        { host: evalDir, container: evalDir, readOnly: true },
      ],
      hidden: [path.join(evalDir, "fix.patch"), path.join(evalDir, "verifiers"), path.join(ws, ".git")],
    }).run(
      spec(
        `sh ${evalDir}/scorer.sh; cat ${evalDir}/fix.patch | wc -c; ls ${evalDir}/verifiers | wc -l; ls ${evalDir}/.git | wc -l; cat .git/HEAD; touch ${evalDir}/new 2>/dev/null || echo read-only`,
      ),
    );
    expect(r.stdout.split("\n").map((l) => l.trim())).toEqual([
      "scoring",
      "0",
      "0",
      "0",
      "workspace head",
      "read-only",
      "",
    ]);
  });

  it("passes exit statuses through, and reads a program the image lacks as a start error", async () => {
    const failed = await setup().run(spec("exit 3"));
    expect(failed.exitCode).toBe(3);
    expect(failed.spawnError).toBeUndefined();
    const missing = await setup().run({ ...spec(""), command: { argv: ["no-such-program", "x"] } });
    expect(missing.exitCode).toBeNull();
    expect(missing.spawnError).toMatch(/could not run the command/);
  });

  it("gives a command its stdin", async () => {
    const r = await setup().run(spec("cat", { input: "typed in\n" }));
    expect(r.stdout).toBe("typed in\n");
  });

  it("stops a command at its timeout and leaves no container behind", async () => {
    // before: killing the engine's client left the container running under the engine's monitor.
    const t0 = Date.now();
    const r = await setup({ label: "timeout" }).run(spec("sleep 120", { timeoutMs: 1500, killGraceMs: 500 }));
    expect(r.timedOut).toBe(true);
    expect(Date.now() - t0).toBeLessThan(30_000);
    const ps = await engineExec(engine!, ["ps", "-a", "--format", "{{.Names}}"]);
    expect(ps.stdout).not.toMatch(new RegExp(`-${process.pid}-\\d+-timeout`));
    expect(liveContainers()).toEqual([]);
  });

  it("stops a memory hog at its memory limit and names the limit", async () => {
    // before: no limit at all; the hog grew until the machine's OOM killer chose a victim.
    const r = await setup({ label: "hog", resources: { memoryBytes: 32 * 2 ** 20 }, ...meter() }).run(
      spec('x=a; while true; do x="$x$x"; done'),
    );
    expect(r.signal).toBe("SIGKILL");
    expect(r.limit?.kind).toBe("memory");
    expect(r.limit?.detail).toMatch(/memory limit of 32 MiB/);
  });

  it("holds a fork bomb at its pids limit, and the machine goes on", async () => {
    // before: a fork bomb took every process slot of the machine.
    const r = await setup({ label: "forks", resources: { pids: 20 }, ...meter() }).run(
      // Held until the timeout by a sleep started before the bomb, waited for by the shell's builtin:
      // the holding shell forks nothing once the bomb runs. (Before: `while :; do sleep 1; done` after
      // the bomb; under load its own `sleep` was refused a fork, the shell gave up, and the bomb ended
      // before the timeout.)
      spec("sleep 30 & held=$!; bomb() { bomb | bomb & }; bomb; wait $held", {
        timeoutMs: 5000,
        killGraceMs: 500,
      }),
    );
    expect(r.timedOut).toBe(true);
    expect(r.limit?.kind).toBe("pids");
    expect(r.limit?.detail).toMatch(/limit of 20 processes/);
    // The refusals are counted where the kernel counts them: on cgroup v1 in the container's own
    // group below evalgate's, read while it lives (before, v1 read evalgate's group: always 0).
    if (typeof cgroups !== "string") expect(r.limit?.detail).toMatch(/, \d+ forks refused/);
    const after = await host.run({
      command: { argv: ["/bin/echo", "still here"] },
      cwd: root,
      env: {},
      timeoutMs: 10_000,
      captureStdout: true,
    });
    expect(after.stdout).toBe("still here\n");
  });

  it("stops a writer past its disk limit", async () => {
    // before: an agent could fill the runner's disk through its workspace.
    const r = await setup({ label: "disk", resources: { diskBytes: 8 * 2 ** 20 } }).run(
      spec("while true; do head -c 1048576 /dev/zero >> big.bin; sleep 0.02; done", { timeoutMs: 60_000 }),
    );
    expect(r.timedOut).toBe(false);
    expect(r.limit?.kind).toBe("disk");
    expect(r.signal).toBe("SIGKILL");
  });

  describe("network", () => {
    let server: http.Server;
    let port: number;
    let hostAddress: string;
    beforeAll(async () => {
      // Listens on every address, so a container on a network with a route to the host reaches it.
      server = http.createServer((_, res) => res.end("reached\n"));
      await new Promise<void>((r) => server.listen(0, "0.0.0.0", r));
      port = (server.address() as net.AddressInfo).port;
      const route = await setup({ network: true }).run(spec("ip route | awk '/default/ {print $3}'"));
      hostAddress = route.stdout.trim();
    });
    afterAll(() => server.close());

    describe("allow-list", () => {
      let network: AllowNetwork;
      let other: http.Server;
      let allowedPort: number;
      let otherPort: number;
      let rangeServer: http.Server;
      let rangePort = 0;
      beforeAll(async () => {
        rangeServer = http.createServer((_, res) => res.end("in range\n"));
        for (let p = 41_000 + Math.floor(Math.random() * 900); !rangePort; p++) {
          rangePort = await new Promise<number>((resolve) => {
            rangeServer.once("error", () => resolve(0));
            rangeServer.listen(p, "0.0.0.0", () => resolve(p));
          });
        }
        const made = await createAllowNetwork(engine!);
        if (typeof made === "string") throw new Error(made);
        network = made;
        // Two servers on the runner's loopback: one on the list, one not.
        const allowed = http.createServer((_, res) => res.end("allowed host\n"));
        other = http.createServer((_, res) => res.end("other host\n"));
        await new Promise<void>((r) => allowed.listen(0, "127.0.0.1", r));
        await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
        allowedPort = (allowed.address() as net.AddressInfo).port;
        otherPort = (other.address() as net.AddressInfo).port;
        other.on("close", () => allowed.close());
      });
      afterAll(async () => {
        other.close();
        rangeServer.close();
        if (network) await removeAllowNetwork(engine!, network);
      });

      it("reaches a listed host through the proxy, and neither an unlisted one nor anything directly", async () => {
        // before: network was on or off; an agent given its model API could reach every host.
        const log = path.join(root, "allow.log");
        writeFileSync(log, "");
        const r = await setup({
          label: "allow",
          network: { allow: [{ host: "127.0.0.1", port: allowedPort }] },
          allowNetwork: network,
        }).run(
          spec(
            [
              `wget -q -O- http://127.0.0.1:${allowedPort}/ || echo "allowed failed"`,
              `wget -q -O- http://127.0.0.1:${otherPort}/ 2>&1 || echo "other refused"`,
              `nc -w 3 ${hostAddress} ${port} </dev/null && echo "direct open" || echo "direct closed"`,
              // The gateway is the runner itself: its server on every address is not reachable either.
              `nc -w 3 ${network.gateway} ${port} </dev/null && echo "gateway open" || echo "gateway closed"`,
              // Nor one that listens where the proxies once all listened (41000-41999 were let through).
              `nc -w 3 ${network.gateway} ${rangePort} </dev/null && echo "range open" || echo "range closed"`,
            ].join("; "),
            { logFile: log },
          ),
        );
        expect(r.stdout).toContain("allowed host");
        expect(r.stdout).not.toContain("other host");
        expect(r.stdout).toContain("other refused");
        expect(r.stdout).toContain("direct closed");
        // Where evalgate cannot add the firewall rule it says so (network.firewallGap); here it can.
        expect(network.firewallGap).toBeUndefined();
        expect(r.stdout).toContain("gateway closed");
        expect(r.stdout).toContain("range closed");
        // The proxy's own port was opened for its life only: the network's three rules are left.
        const rules = spawnSync("iptables", ["-w", "-S", "INPUT"], { encoding: "utf8" }).stdout;
        expect(rules.split("\n").filter((l) => l.includes(`evalgate ${network.name}`))).toHaveLength(3);
        expect(readFileSync(log, "utf8")).toContain(
          `refused (not on the network allow-list): 127.0.0.1:${otherPort}`,
        );
      });
    });

    it("forwards a URL on the runner's loopback to a container on the engine's default network", async () => {
      // before (Docker): the default bridge's inspect names no gateway, so nothing was forwarded and
      // the agent's 127.0.0.1 URL was its own container's ("Connection refused").
      const loopback = http.createServer((_, res) => res.end("loopback reached\n"));
      await new Promise<void>((r) => loopback.listen(0, "127.0.0.1", r));
      const api = `http://127.0.0.1:${(loopback.address() as net.AddressInfo).port}/v1`;
      try {
        const base = spec('wget -q -O - "$API_URL"');
        const r = await setup({ network: true, forwardLoopback: true }).run({
          ...base,
          env: { ...base.env, API_URL: api },
        });
        expect([r.exitCode, r.stdout.trim()]).toEqual([0, "loopback reached"]);
      } finally {
        loopback.close();
      }
    });

    it("network: false reaches nothing, where network: true reaches the runner's server", async () => {
      expect(hostAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      const probe = `nc -w 3 ${hostAddress} ${port} </dev/null && echo open || echo closed`;
      const open = await setup({ network: true }).run(
        spec(`printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${hostAddress} ${port}`),
      );
      expect(open.stdout).toContain("reached");
      const none = await setup({ network: false }).run(spec(probe));
      expect(none.stdout.trim()).toBe("closed");
      const loop = await setup({ network: false }).run(
        spec(`nc -w 3 127.0.0.1 ${port} </dev/null && echo open || echo closed`),
      );
      expect(loop.stdout.trim()).toBe("closed");
    });
  });
});
