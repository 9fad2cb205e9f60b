/**
 * `resources:` on the host (no container): a cgroup of the process's own where evalgate may make
 * one, prlimit otherwise, and the disk watch. Before these, an attempt's processes had no limit: a
 * memory hog or a runaway writer ran until the machine gave out.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { probeCgroups } from "../../src/environment/cgroup.js";
import { allocatedBytes } from "../../src/environment/disk.js";
import {
  appliedOnHost,
  type HostLimits,
  limitedRunner,
  prlimitProgram,
} from "../../src/environment/limits.js";
import { ChildProcessRunner } from "../../src/sandbox/process.js";
import { tempDir } from "../helpers.js";

const base = new ChildProcessRunner();
const cgroups = probeCgroups();
const withCgroups: HostLimits | undefined = typeof cgroups === "string" ? undefined : { cgroups };
if (!withCgroups) console.warn(`skipping the host cgroup tests: ${cgroups}`);
const prlimit = prlimitProgram();

function attempt(): { dir: string; ws: string } {
  const dir = tempDir("evalgate-limits-");
  const ws = path.join(dir, "ws");
  mkdirSync(ws);
  return { dir, ws };
}

const spec = (ws: string, shell: string, timeoutMs = 30_000) => ({
  command: { shell },
  cwd: ws,
  env: { PATH: "/usr/bin:/bin" },
  timeoutMs,
  killGraceMs: 500,
});

describe("appliedOnHost", () => {
  it("says per resource what bounds it, and why not where nothing can", () => {
    const r = { memoryBytes: 2 ** 30, cpus: 1, pids: 100, diskBytes: 2 ** 30 };
    const cg = appliedOnHost(r, { cgroups: { version: 2, base: "/x" } });
    expect(cg.map((a) => `${a.resource}:${a.by}`)).toEqual([
      "memory:cgroup",
      "cpus:cgroup",
      "pids:cgroup",
      "disk:watch",
    ]);
    const bare = appliedOnHost(r, {
      cgroupsWhy: "/sys/fs/cgroup cannot be written",
      prlimit: "/usr/bin/prlimit",
    });
    expect(bare[0]).toMatchObject({ resource: "memory", by: "rlimit" });
    expect(bare[1]).toEqual({
      resource: "cpus",
      note: "no cgroup can be made here (/sys/fs/cgroup cannot be written)",
    });
    expect(bare[2]?.by).toBeUndefined();
    expect(appliedOnHost(r, { cgroupsWhy: "x" })[0]?.note).toMatch(/prlimit \(util-linux\) is not installed/);
  });
});

describe.skipIf(!withCgroups)("limitedRunner with a cgroup", () => {
  it("kills a memory hog at its limit and names it", async () => {
    const { dir, ws } = attempt();
    const r = await limitedRunner(base, { memoryBytes: 32 * 2 ** 20 }, withCgroups!, [dir]).run(
      spec(ws, 'x=a; while true; do x="$x$x"; done'),
    );
    expect(r.signal).toBe("SIGKILL");
    expect(r.limit).toEqual({
      kind: "memory",
      detail: expect.stringMatching(/^killed at its memory limit of 32 MiB/),
    });
  });

  it("refuses forks past the pids limit and names it", async () => {
    const { dir, ws } = attempt();
    const r = await limitedRunner(base, { pids: 10 }, withCgroups!, [dir]).run(
      spec(ws, "for i in $(seq 1 30); do sleep 3 & done 2>/dev/null; wait", 20_000),
    );
    expect(r.limit?.kind).toBe("pids");
  });

  it("passes a process that stays within its limits untouched", async () => {
    const { dir, ws } = attempt();
    const r = await limitedRunner(base, { memoryBytes: 256 * 2 ** 20, pids: 50, cpus: 0.5 }, withCgroups!, [
      dir,
    ]).run({
      ...spec(ws, "echo fine"),
      captureStdout: true,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("fine\n");
    expect(r.limit).toBeUndefined();
  });
});

describe("limitedRunner without a cgroup", () => {
  it.skipIf(!prlimit)(
    "caps each process's memory with prlimit: the hog cannot allocate, and no limit is claimed",
    async () => {
      const { dir, ws } = attempt();
      const r = await limitedRunner(
        base,
        { memoryBytes: 32 * 2 ** 20 },
        { cgroupsWhy: "test", prlimit: prlimit! },
        [dir],
      ).run(spec(ws, 'x=a; while true; do x="$x$x"; done'));
      expect(r.exitCode).not.toBe(0);
      expect(r.timedOut).toBe(false);
      expect(r.limit).toBeUndefined();
    },
  );
});

describe("the disk limit", () => {
  const writer = "while true; do head -c 1048576 /dev/zero >> big.bin; sleep 0.02; done";
  for (const [name, host] of [
    ["with a cgroup", withCgroups],
    ["without a cgroup (the process group)", { cgroupsWhy: "test" } as HostLimits],
  ] as const) {
    it.skipIf(!host)(`stops a writer past it (${name})`, async () => {
      const { dir, ws } = attempt();
      const t0 = Date.now();
      const r = await limitedRunner(base, { diskBytes: 8 * 2 ** 20 }, host!, [dir]).run(
        spec(ws, writer, 60_000),
      );
      expect(Date.now() - t0).toBeLessThan(30_000);
      expect(r.timedOut).toBe(false);
      expect(r.limit?.kind).toBe("disk");
      expect(r.limit?.detail).toMatch(/over its disk limit of 8 MiB/);
      // Stopped within about one walk of the limit.
      expect(await allocatedBytes([dir])).toBeLessThan(200 * 2 ** 20);
    });
  }
});
