import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildEnv } from "../../src/sandbox/env.js";
import { probeReaper, type Reaper, reapingRunner } from "../../src/sandbox/isolation.js";
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
