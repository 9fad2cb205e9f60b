import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SandboxSpec } from "../../src/sandbox/bwrap.js";
import { bwrapArgs, packageRoot } from "../../src/sandbox/bwrap.js";
import { tempDir } from "../helpers.js";

/** The pairs of `flag a b` in an argument list. */
function binds(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1]!] : []));
}

describe("bwrapArgs", () => {
  const root = tempDir();
  const nm = path.join(root, "app", "node_modules");
  mkdirSync(path.join(nm, ".bin"), { recursive: true });
  const agents = path.join(root, "evals", "agents");
  const tools = path.join(root, "tools");
  const attempt = path.join(root, "work", "attempts", "0-t", "run-1");
  for (const d of [agents, tools, attempt]) mkdirSync(d, { recursive: true });
  const spec = {
    command: { argv: [path.join(agents, "run.sh"), "x"] },
    cwd: path.join(attempt, "ws"),
    env: { PATH: `${path.join(nm, ".bin")}:/usr/bin:relative/bin:/no/such/dir` },
    timeoutMs: 1000,
  };

  it("mounts the system, PATH, the program's folder and read_only read-only; the attempt writable", () => {
    const args = bwrapArgs(spec, { kind: "bwrap", network: false, readOnly: [tools] }, [attempt]);
    const ro = binds(args, "--ro-bind");
    expect(ro).toContain("/usr");
    expect(ro).toContain(path.join(nm, ".bin"));
    expect(ro).toContain(nm);
    expect(ro).toContain(agents);
    expect(ro).toContain(tools);
    expect(ro).not.toContain(path.join(root, "evals"));
    expect(ro.some((d) => d.includes("relative") || d.includes("/no/such"))).toBe(false);
    expect(binds(args, "--bind")).toEqual([attempt]);
    expect(args).toContain("--unshare-all");
    expect(args).not.toContain("--share-net");
    expect(args.slice(-4)).toEqual(["--remount-ro", "/", "--chdir", spec.cwd]);
  });

  it("mounts the package or folder a linked program points into", () => {
    // bin: ./tools/node_modules/.bin/agent → ../agent-pkg/cli.js, not on PATH.
    const pkgs = path.join(root, "tools", "node_modules");
    mkdirSync(path.join(pkgs, ".bin"), { recursive: true });
    mkdirSync(path.join(pkgs, "agent-pkg"), { recursive: true });
    writeFileSync(path.join(pkgs, "agent-pkg", "cli.js"), "");
    symlinkSync("../agent-pkg/cli.js", path.join(pkgs, ".bin", "agent"));
    // An installer's link: ~/.local/bin/claude → ~/.local/share/claude/versions/1.0.0.
    const versions = path.join(root, "home", ".local", "share", "claude", "versions");
    mkdirSync(versions, { recursive: true });
    mkdirSync(path.join(root, "home", ".local", "bin"), { recursive: true });
    writeFileSync(path.join(versions, "1.0.0"), "");
    symlinkSync(path.join(versions, "1.0.0"), path.join(root, "home", ".local", "bin", "claude"));
    const none: SandboxSpec = { kind: "bwrap", network: false, readOnly: [] };
    const npm = binds(
      bwrapArgs({ ...spec, command: { argv: [path.join(pkgs, ".bin", "agent")] } }, none, [attempt]),
      "--ro-bind",
    );
    expect(npm).toContain(path.join(pkgs, ".bin"));
    expect(npm).toContain(pkgs);
    const native = binds(
      bwrapArgs({ ...spec, command: { argv: [path.join(root, "home", ".local", "bin", "claude")] } }, none, [
        attempt,
      ]),
      "--ro-bind",
    );
    expect(native).toContain(path.join(root, "home", ".local", "bin"));
    expect(native).toContain(versions);
    expect(native).not.toContain(path.join(root, "home"));
  });

  it("shares the network only with network: true", () => {
    expect(bwrapArgs(spec, { kind: "bwrap", network: true, readOnly: [] }, [attempt])).toContain(
      "--share-net",
    );
  });
});

describe("bwrapArgs under sandbox: auto", () => {
  const root = tempDir();
  const attempt = path.join(root, "work", "attempts", "0-t", "run-1");
  const data = path.join(root, "fixtures");
  const real = path.join(root, "real-bin");
  const bin = path.join(root, "bin");
  for (const d of [attempt, data, real, bin]) mkdirSync(d, { recursive: true });
  writeFileSync(path.join(data, "stream.jsonl"), "");
  writeFileSync(path.join(real, "agent.mjs"), "", { mode: 0o755 });
  symlinkSync(path.join(real, "agent.mjs"), path.join(bin, "agent"));
  const spec = {
    command: { argv: ["agent", path.join(data, "stream.jsonl"), path.join(attempt, "prompt.md"), "/"] },
    cwd: path.join(attempt, "ws"),
    env: {
      PATH: `${bin}:/usr/bin`,
      STREAM: path.join(data, "stream.jsonl"),
      HOME: path.join(attempt, "home"),
    },
    timeoutMs: 1000,
  };

  it("shows what the agent was named read-only: a linked program's real folder, absolute paths on its command line and in its env", () => {
    const ro = binds(bwrapArgs(spec, { kind: "auto", network: true, readOnly: [] }, [attempt]), "--ro-bind");
    expect(ro).toContain(real);
    expect(ro).toContain(data);
    // never the root, the attempt folder or a folder that holds it
    expect(ro).not.toContain("/");
    expect(ro.some((d) => d.startsWith(path.join(root, "work")))).toBe(false);
  });

  it("under sandbox: bwrap shows none of it", () => {
    const ro = binds(
      bwrapArgs(spec, { kind: "bwrap", network: false, readOnly: [] }, [attempt]),
      "--ro-bind",
    );
    expect(ro).not.toContain(real);
    expect(ro).not.toContain(data);
  });
});

describe("packageRoot", () => {
  it.each<[string, string | undefined]>([
    ["/repo/node_modules/.bin", "/repo/node_modules"],
    ["/opt/hostedtoolcache/node/20.11.1/x64/bin", "/opt/hostedtoolcache/node/20.11.1/x64"],
    ["/home/runner/work/repo/repo/bin", undefined],
    ["/usr/local/bin", undefined],
  ])("%s → %s", (dir, root) => {
    expect(packageRoot(dir)).toBe(root);
  });
});
