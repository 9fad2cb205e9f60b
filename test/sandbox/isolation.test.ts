import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildEnv } from "../../src/sandbox/env.js";
import {
  mayProvision,
  planIsolation,
  probeReaper,
  provisionBwrap,
  type Reaper,
  reapingRunner,
} from "../../src/sandbox/isolation.js";
import { ChildProcessRunner } from "../../src/sandbox/process.js";
import { tempDir } from "../helpers.js";
import { daemonAgent, newTag, processesWith } from "./daemon.js";

const base = new ChildProcessRunner();
const env = () => buildEnv({ passthrough: [], home: "/tmp", tmp: "/tmp" });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function reaperAt(level: string): Promise<Reaper> {
  return probeReaper({ ...process.env, EVALGATE_ISOLATION: level });
}

describe("the reaper: no process outlives the command it was started for", () => {
  for (const level of ["pid-namespace", "subreaper"] as const) {
    it(`${level}: a double-forked, setsid daemon with stdio closed and no environment is dead when run() returns`, async () => {
      const reaper = await reaperAt(level);
      expect(reaper.level).toBe(level);
      const dir = tempDir();
      const target = path.join(dir, "summary.json");
      writeFileSync(target, "original\n");
      const tag = newTag();
      const runner = reapingRunner(base, reaper);
      const outcome = await runner.run({
        command: { argv: [daemonAgent(dir, target, tag, 1)] },
        cwd: dir,
        env: env(),
        timeoutMs: 20_000,
        captureStdout: true,
      });
      expect(outcome.exitCode).toBe(0);
      expect(outcome.stdout).toContain("agent done");
      expect(processesWith(tag)).toEqual([]);
      await sleep(2000);
      expect(readFileSync(target, "utf8")).toBe("original\n");
    });

    it(`${level}: a daemon holding stdout does not hold the run, and the timeout still kills a hung agent`, async () => {
      const reaper = await reaperAt(level);
      const dir = tempDir();
      const tag = newTag();
      const started = Date.now();
      const outcome = await reapingRunner(base, reaper).run({
        command: { argv: [daemonAgent(dir, path.join(dir, "x"), tag, 60, true)] },
        cwd: dir,
        env: env(),
        timeoutMs: 20_000,
      });
      expect(outcome.exitCode).toBe(0);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(processesWith(tag)).toEqual([]);

      const hung = Date.now();
      const t = await reapingRunner(base, reaper).run({
        command: { shell: `exec /bin/sh -c 'sleep 600' ${tag}` },
        cwd: dir,
        env: env(),
        timeoutMs: 1000,
        killGraceMs: 500,
      });
      expect(t.timedOut).toBe(true);
      expect(Date.now() - hung).toBeLessThan(15_000);
      expect(processesWith(tag)).toEqual([]);
    });

    it(`${level}: passes the exit status, stdin-less stdout and a missing program's error through`, async () => {
      const runner = reapingRunner(base, await reaperAt(level));
      const r = await runner.run({
        command: { shell: "echo out; echo err >&2; exit 7" },
        cwd: "/tmp",
        env: env(),
        timeoutMs: 10_000,
        captureStdout: true,
      });
      expect(r.exitCode).toBe(7);
      expect(r.stdout).toBe("out\n");
      expect(r.tail).toContain("err");
      const missing = await runner.run({
        command: { argv: ["/nonexistent/agent"] },
        cwd: "/tmp",
        env: env(),
        timeoutMs: 5000,
      });
      expect(missing.spawnError).toContain("/nonexistent/agent: not found");
    });
  }

  it("pid-namespace: the command cannot see evalgate's process or read its environment", async () => {
    const runner = reapingRunner(base, await reaperAt("pid-namespace"));
    const r = await runner.run({
      command: {
        shell: `test -e /proc/${process.pid}/environ && cat /proc/${process.pid}/environ; ls /proc | grep -c '^[0-9]'`,
      },
      cwd: "/tmp",
      env: env(),
      timeoutMs: 10_000,
      captureStdout: true,
    });
    expect(r.stdout).not.toContain("PATH=");
    expect(Number(r.stdout.trim().split("\n").at(-1))).toBeLessThan(10);
  });

  it("none: evalgate does not wait for a daemon that holds the agent's stdout after the agent exited 0", async () => {
    const reaper = await reaperAt("none");
    expect(reaper.level).toBe("none");
    expect(reaper.why).toContain("EVALGATE_ISOLATION=none");
    const dir = tempDir();
    const tag = newTag();
    const started = Date.now();
    const outcome = await reapingRunner(base, reaper).run({
      command: { argv: [daemonAgent(dir, path.join(dir, "x"), tag, 30, true)] },
      cwd: dir,
      env: env(),
      timeoutMs: 20_000,
      captureStdout: true,
    });
    expect(outcome.exitCode).toBe(0);
    expect(outcome.stdout).toContain("agent done");
    expect(Date.now() - started).toBeLessThan(15_000);
    // Without containment the daemon survives (what summary.json's isolation: none warns about).
    expect(processesWith(tag).length).toBeGreaterThan(0);
    for (const pid of processesWith(tag)) process.kill(pid, "SIGKILL");
    expect(existsSync(path.join(dir, "x"))).toBe(false);
  });
});

describe("planIsolation", () => {
  const reaper = (level: Reaper["level"], why: string | null): Reaper => ({
    level,
    why,
    wrap: (a) => [...a],
  });
  const auto = { kind: "auto" as const };

  it("bwrap for every sandboxed target when bubblewrap works; none, with the reason, for sandbox: none", () => {
    const r = planIsolation([{ name: "a", sandbox: auto }, { name: "b" }], {
      bwrap: { ok: true, program: "/usr/bin/bwrap" },
      reaper: reaper("pid-namespace", null),
    });
    expect(r.level).toBe("none");
    expect(r.reason).toBe("sandbox: none in the eval file");
    expect(r.targets).toEqual([
      { name: "a", level: "bwrap", reason: null },
      { name: "b", level: "none", reason: "sandbox: none in the eval file" },
    ]);
    expect([...r.bwrapTargets]).toEqual(["a"]);
    expect(r.bwrap).toBe("/usr/bin/bwrap");
  });

  it("the reaper's level when bubblewrap cannot run, saying why", () => {
    const r = planIsolation([{ name: "a", sandbox: auto }], {
      bwrap: { ok: false, message: "bubblewrap (bwrap) is not installed" },
      reaper: reaper("subreaper", "a PID namespace without bubblewrap needs root"),
    });
    expect(r.level).toBe("subreaper");
    expect(r.reason).toBe(
      "bubblewrap cannot run here: bubblewrap (bwrap) is not installed; a PID namespace without bubblewrap needs root",
    );
    expect(r.bwrap).toBeUndefined();
  });

  it("no level when no target runs an agent program", () => {
    const r = planIsolation([], { bwrap: { ok: false, message: "x" }, reaper: reaper("none", "y") });
    expect(r).toMatchObject({ level: null, reason: "no target runs an agent program", targets: [] });
  });
});

describe("provisionBwrap (GitHub-hosted runners only)", () => {
  const fake = (o: { installed: boolean; sysctl?: string; fail?: string[] }) => {
    const calls: string[] = [];
    let installed = o.installed;
    const failing = [...(o.fail ?? [])];
    return {
      calls,
      deps: {
        exec: async (argv: string[]) => {
          const cmd = argv.slice(4).join(" ");
          calls.push(cmd);
          const i = failing.indexOf(cmd);
          if (i >= 0) {
            failing.splice(i, 1);
            return { ok: false, why: "E: Unable to locate package" };
          }
          if (cmd.startsWith("apt-get install")) installed = true;
          return { ok: true, why: "" };
        },
        readSysctl: () => o.sysctl,
        installed: () => installed,
      },
    };
  };

  it("only where the runner is a GitHub-hosted throwaway machine", () => {
    expect(mayProvision({ GITHUB_ACTIONS: "true", RUNNER_ENVIRONMENT: "github-hosted" })).toBe(true);
    expect(mayProvision({ GITHUB_ACTIONS: "true", RUNNER_ENVIRONMENT: "self-hosted" })).toBe(false);
    expect(mayProvision({})).toBe(false);
    expect(
      mayProvision({ GITHUB_ACTIONS: "true", RUNNER_ENVIRONMENT: "github-hosted", EVALGATE_BWRAP: "/x" }),
    ).toBe(false);
  });

  it("installs bubblewrap (updating the package lists when the first try fails) and lifts ubuntu-24.04's AppArmor restriction", async () => {
    const f = fake({ installed: false, sysctl: "1", fail: ["apt-get install -y -q bubblewrap"] });
    const done = await provisionBwrap({}, f.deps);
    expect(f.calls).toEqual([
      "apt-get install -y -q bubblewrap",
      "apt-get update -q",
      "apt-get install -y -q bubblewrap",
      "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
    ]);
    expect(done).toHaveLength(2);
  });

  it("does nothing where nothing is wrong, and stops when the install fails", async () => {
    const ok = fake({ installed: true, sysctl: "0" });
    expect(await provisionBwrap({}, ok.deps)).toEqual([]);
    expect(ok.calls).toEqual([]);
    const broken = fake({
      installed: false,
      sysctl: "1",
      fail: ["apt-get install -y -q bubblewrap", "apt-get install -y -q bubblewrap"],
    });
    expect(await provisionBwrap({}, broken.deps)).toEqual([]);
    expect(broken.calls).not.toContain("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0");
  });
});

describe("the subreaper at the timeout", () => {
  it("an agent that ignores SIGTERM and left a daemon: both are dead when run() returns", async () => {
    const reaper = await probeReaper({ ...process.env, EVALGATE_ISOLATION: "subreaper" });
    const dir = tempDir();
    const tag = newTag();
    const script = path.join(dir, "stubborn.sh");
    writeFileSync(
      script,
      `#!/bin/sh
trap '' TERM
( env -i setsid /bin/sh -c 'trap "" TERM; exec </dev/null >/dev/null 2>&1; sleep 600' ${tag} & )
exec /bin/sh -c 'trap "" TERM; while :; do sleep 1; done' ${tag}
`,
      { mode: 0o755 },
    );
    const outcome = await reapingRunner(base, reaper).run({
      command: { argv: [script] },
      cwd: dir,
      env: env(),
      timeoutMs: 1500,
      killGraceMs: 300,
    });
    expect(outcome.timedOut).toBe(true);
    expect(processesWith(tag)).toEqual([]);
  });
});
