/**
 * `resources:` where no container is used (an attempt under bubblewrap or the reaper): a cgroup of
 * the process's own where evalgate may make one (cgroup.ts: memory, pids and CPU exactly, and a
 * memory or pids limit it ran into named), else per-process rlimits through `prlimit` (memory only,
 * as a cap on each process's data segment: no total, and no word on whether it was hit), and the
 * disk watch in both cases. What was applied, and what could not be, is said per resource.
 */
import { writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Command } from "../sandbox/commands.js";
import { findProgram } from "../sandbox/commands.js";
import { type ProcessOutcome, type ProcessRunner, type ProcessSpec, willStart } from "../sandbox/process.js";
import { type CgroupHost, makeCgroup } from "./cgroup.js";
import { ownedName } from "./cleanup.js";
import { watchDisk } from "./disk.js";
import { limitHitOf, showBytes } from "./resources.js";
import type { ResourceApplied, ResourceSpec } from "./types.js";

/** How this machine can bound host processes: found once per run. */
export interface HostLimits {
  cgroups?: CgroupHost;
  /** Why there are no cgroups, when there are none. */
  cgroupsWhy?: string;
  /** util-linux prlimit, the fallback for memory. */
  prlimit?: string;
}

/** What each resource of `r` gets on the host, or why it gets nothing. */
export function appliedOnHost(r: ResourceSpec | undefined, host: HostLimits): ResourceApplied[] {
  if (!r) return [];
  const out: ResourceApplied[] = [];
  const none = `no cgroup can be made here (${host.cgroupsWhy ?? "unknown"})`;
  if (r.memoryBytes !== undefined) {
    if (host.cgroups) out.push({ resource: "memory", by: "cgroup" });
    else if (host.prlimit) {
      out.push({
        resource: "memory",
        by: "rlimit",
        note: `${none}: each process's data segment is capped instead (not the attempt's total), and a process over it fails to allocate rather than being named as stopped at the limit`,
      });
    } else out.push({ resource: "memory", note: `${none}, and prlimit (util-linux) is not installed` });
  }
  if (r.cpus !== undefined) {
    out.push(host.cgroups ? { resource: "cpus", by: "cgroup" } : { resource: "cpus", note: none });
  }
  if (r.pids !== undefined) {
    out.push(
      host.cgroups
        ? { resource: "pids", by: "cgroup" }
        : {
            resource: "pids",
            note: `${none}; an rlimit would count every process of the user, not the attempt's`,
          },
    );
  }
  if (r.diskBytes !== undefined) {
    out.push({ resource: "disk", by: "watch", note: "counts what the attempt writes to its own folders" });
  }
  return out;
}

/** The command line that joins the cgroup (writing its pid into each procs file), then runs `argv`. */
function joining(procsFiles: readonly string[], argv: readonly string[]): string[] {
  const script =
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
  return ["/bin/sh", "-c", script, "evalgate-limits", String(procsFiles.length), ...procsFiles, ...argv];
}

function argvOf(command: Command): string[] {
  return "argv" in command ? command.argv : ["/bin/sh", "-c", command.shell];
}

/** Kills every process still in a v1 or v2 cgroup (the disk watch stopping a process tree). */
async function killGroup(procsFiles: readonly string[]): Promise<void> {
  for (const f of procsFiles) {
    const kill = f.replace(/cgroup\.procs$/, "cgroup.kill");
    try {
      writeFileSync(kill, "1");
      return;
    } catch {
      // v1: no cgroup.kill; every pid in turn
    }
    const pids = (await readFile(f, "utf8").catch(() => "")).split("\n").filter(Boolean);
    for (const p of pids) {
      try {
        process.kill(Number(p), "SIGKILL");
      } catch {
        // gone
      }
    }
  }
}

/**
 * A runner that bounds every process it starts by `resources`. `writable` are the folders the disk
 * limit counts (the attempt's own). Put it beneath bubblewrap's runner: the process joins its
 * cgroup before bubblewrap hides /sys.
 */
export function limitedRunner(
  inner: ProcessRunner,
  resources: ResourceSpec,
  host: HostLimits,
  writable: readonly string[],
): ProcessRunner {
  return { run: (spec) => runLimited(inner, resources, host, writable, spec) };
}

async function runLimited(
  inner: ProcessRunner,
  resources: ResourceSpec,
  host: HostLimits,
  writable: readonly string[],
  spec: ProcessSpec,
): Promise<ProcessOutcome> {
  // A program that will not start is started as it is, so the error stays the system's own.
  if (!willStart(spec.command, spec.cwd, spec.env.PATH ?? "")) return inner.run(spec);
  const limits = {
    ...(resources.memoryBytes !== undefined ? { memoryBytes: resources.memoryBytes } : {}),
    ...(resources.cpus !== undefined ? { cpus: resources.cpus } : {}),
    ...(resources.pids !== undefined ? { pids: resources.pids } : {}),
  };
  const group =
    host.cgroups && Object.keys(limits).length > 0
      ? makeCgroup(host.cgroups, ownedName("limits"), limits).group
      : undefined;
  let argv = argvOf(spec.command);
  if (group) argv = joining(group.procsFiles, argv);
  else if (host.prlimit && resources.memoryBytes !== undefined) {
    argv = [host.prlimit, `--data=${resources.memoryBytes}`, "--", ...argv];
  }
  // Without a cgroup the disk watch stops the process group, whose leader writes its pid here.
  const pidDir =
    !group && resources.diskBytes !== undefined
      ? await mkdtemp(path.join(os.tmpdir(), "evalgate-pid-"))
      : undefined;
  if (pidDir) argv = ["/bin/sh", "-c", 'echo $$ > "$0"; exec "$@"', path.join(pidDir, "pid"), ...argv];
  let diskOver: number | undefined;
  const disk =
    resources.diskBytes !== undefined
      ? watchDisk(writable, resources.diskBytes, (grown) => {
          diskOver = grown;
          if (group) void killGroup(group.procsFiles);
          else if (pidDir) void killLeaderGroup(path.join(pidDir, "pid"));
        })
      : undefined;
  const sampler = group && resources.pids !== undefined ? setInterval(() => group.sample(), 200) : undefined;
  try {
    const outcome = await inner.run({ ...spec, command: { argv } });
    const limit = limitHitOf(resources, {
      exitCode: outcome.exitCode,
      signal: outcome.signal,
      stoppedByEvalgate: outcome.timedOut || diskOver !== undefined,
      ...(diskOver !== undefined ? { diskGrown: diskOver } : {}),
      ...(group ? { usage: group.usage() } : {}),
    });
    return limit ? { ...outcome, limit } : outcome;
  } finally {
    if (sampler) clearInterval(sampler);
    await disk?.stop();
    await group?.remove();
    if (pidDir) await rm(pidDir, { recursive: true, force: true });
  }
}

async function killLeaderGroup(pidFile: string): Promise<void> {
  const pid = Number((await readFile(pidFile, "utf8").catch(() => "")).trim());
  if (!(pid > 1)) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // gone
  }
}

/** The prlimit program, where util-linux has it. */
export function prlimitProgram(envPath = process.env.PATH ?? ""): string | undefined {
  return findProgram("prlimit", envPath) ?? findProgram("prlimit", "/usr/bin:/bin");
}

/** A limit for messages: "512 MiB of memory, 1.5 CPUs, 100 processes, 1 GiB of disk". */
export function describeResources(r: ResourceSpec): string {
  const parts: string[] = [];
  if (r.memoryBytes !== undefined) parts.push(`${showBytes(r.memoryBytes)} of memory`);
  if (r.cpus !== undefined) parts.push(`${r.cpus} CPU${r.cpus === 1 ? "" : "s"}`);
  if (r.pids !== undefined) parts.push(`${r.pids} processes`);
  if (r.diskBytes !== undefined) parts.push(`${showBytes(r.diskBytes)} of disk`);
  return parts.join(", ");
}
