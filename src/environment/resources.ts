/**
 * `resources: { memory, cpus, pids, disk }` in a container: the engine's own flags (what Docker and
 * Podman both honour), and how a process's end is read as a limit it ran into.
 */
import type { CgroupUsage } from "./cgroup.js";
import type { LimitHit, ResourceApplied, ResourceSpec } from "./types.js";

/** A size for messages: "256 MiB", "1.5 GiB", "700 KiB". */
export function showBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${Number(v.toFixed(v < 10 && u > 0 ? 2 : 1))} ${units[u]}`;
}

/** The engine's flags for a case's resources (disk is evalgate's own watch: see disk.ts). */
export function engineResourceFlags(r: ResourceSpec | undefined): string[] {
  if (!r) return [];
  const flags: string[] = [];
  if (r.memoryBytes !== undefined) {
    // Memory and swap together capped at the same figure: no swap beyond the limit.
    flags.push("--memory", String(r.memoryBytes), "--memory-swap", String(r.memoryBytes));
  }
  if (r.cpus !== undefined) flags.push("--cpus", String(r.cpus));
  if (r.pids !== undefined) flags.push("--pids-limit", String(r.pids));
  return flags;
}

/** How a case's resources are applied inside a container (disk: evalgate's watch of the attempt folder). */
export function appliedInContainer(r: ResourceSpec | undefined): ResourceApplied[] {
  if (!r) return [];
  const out: ResourceApplied[] = [];
  if (r.memoryBytes !== undefined) out.push({ resource: "memory", by: "engine" });
  if (r.cpus !== undefined) out.push({ resource: "cpus", by: "engine" });
  if (r.pids !== undefined) out.push({ resource: "pids", by: "engine" });
  if (r.diskBytes !== undefined) {
    out.push({
      resource: "disk",
      by: "watch",
      note: "counts what the attempt writes to its workspace, HOME and TMPDIR; the container's own layers are not counted",
    });
  }
  return out;
}

export interface EndFacts {
  exitCode: number | null;
  signal: string | null;
  /** evalgate stopped it (its timeout): a kill that is no limit's doing. */
  stoppedByEvalgate: boolean;
  /** What the cgroup evalgate made around it saw, when there was one. */
  usage?: CgroupUsage;
  /** The engine's own word (`State.OOMKilled`), when it was asked. */
  engineOom?: boolean;
  /** evalgate's disk watch stopped it: the attempt's folders had grown by this much. */
  diskGrown?: number;
}

/**
 * Whether a process that ended ran into a limit of `r`. Memory: the kernel's OOM killer ends the
 * process with SIGKILL (status 137 through an engine); the engine's word, the group's OOM count, or
 * a peak at the limit tells it from any other SIGKILL. Pids: forks were refused, or the count
 * reached the limit (the process may still have exited on its own).
 */
export function limitHitOf(r: ResourceSpec | undefined, end: EndFacts): LimitHit | undefined {
  if (!r) return undefined;
  if (r.diskBytes !== undefined && end.diskGrown !== undefined) {
    return {
      kind: "disk",
      detail: `stopped after writing ${showBytes(end.diskGrown)}, over its disk limit of ${showBytes(r.diskBytes)}`,
    };
  }
  const killed = end.signal === "SIGKILL" || end.exitCode === 137;
  const u = end.usage;
  if (r.memoryBytes !== undefined && killed && !end.stoppedByEvalgate) {
    const peakAtLimit = u?.memoryPeak !== undefined && u.memoryPeak >= r.memoryBytes * 0.9;
    if (end.engineOom || (u?.oomKills ?? 0) > 0 || peakAtLimit) {
      const peak = u?.memoryPeak !== undefined ? ` (peak ${showBytes(u.memoryPeak)})` : "";
      return { kind: "memory", detail: `killed at its memory limit of ${showBytes(r.memoryBytes)}${peak}` };
    }
  }
  if (r.pids !== undefined && u) {
    if ((u.pidsRefused ?? 0) > 0 || (u.pidsPeak ?? 0) >= r.pids) {
      const refused = u.pidsRefused ? `, ${u.pidsRefused} forks refused` : "";
      return { kind: "pids", detail: `reached its limit of ${r.pids} processes${refused}` };
    }
  }
  return undefined;
}
