/**
 * Cgroups evalgate makes for itself, where the machine lets it write them: one per process of an
 * attempt, under evalgate's own cgroup. For a process on the host (bubblewrap, the reaper) it holds
 * the attempt's limits; for a container it is the `--cgroup-parent`, where the engine's flags hold
 * the limits and evalgate reads what the container used: its memory peak and its processes, which
 * tell a kill at the memory limit, or a fork refused at the pids limit, from any other end.
 *
 * cgroup v1 (one hierarchy per controller, as on this project's machines) and v2 (one hierarchy,
 * controllers enabled per level). Where neither can be written (a normal user on a systemd machine)
 * `probeCgroups` says why and the caller falls back (rlimits on the host, engine flags in containers).
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { readdir, rmdir } from "node:fs/promises";
import path from "node:path";
import { machineTag } from "./cleanup.js";

const MOUNT = "/sys/fs/cgroup";
const V1_CONTROLLERS = ["memory", "pids", "cpu"] as const;

export interface CgroupHost {
  version: 1 | 2;
  /** The folder, relative to each hierarchy's root, under which evalgate makes its groups. */
  base: string;
}

/** One group: its limits written, processes moved in by `procsFiles`, usage read back. */
export interface Cgroup {
  /** Relative to the hierarchy root: what `--cgroup-parent` takes. */
  relative: string;
  /** Files a process writes its pid into to join (one per v1 controller). */
  procsFiles: string[];
  usage(): CgroupUsage;
  /** Records the process count now (v1 has no peak of its own): call it while the group runs. */
  sample(): void;
  remove(): Promise<void>;
}

export interface CgroupUsage {
  memoryPeak?: number;
  /** Kills by the OOM killer inside the group (v2 and kernels that count it in v1). */
  oomKills?: number;
  pidsPeak?: number;
  /** Forks refused at pids.max. */
  pidsRefused?: number;
}

function ownPath(version: 1 | 2, text: string): string {
  for (const line of text.split("\n")) {
    const [, controllers, p] = line.split(":");
    if (p === undefined) continue;
    if (version === 2 && controllers === "" && line.startsWith("0::")) return p;
    if (version === 1 && controllers!.split(",").includes("memory")) return p;
  }
  return "/";
}

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

function readNumber(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, "utf8").trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** `key value` lines (memory.events, pids.events, memory.oom_control) → a value. */
function readKey(file: string, key: string): number | undefined {
  try {
    const line = readFileSync(file, "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${key} `));
    return line ? Number(line.split(" ")[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Forks refused at a pids limit in the group at `dir`. v2 counts them up the tree (`pids.events`
 * max). v1 counts a refusal only in the group of the process that forked: a container's own group,
 * which its engine makes below evalgate's and removes when the container ends, so the groups below
 * are summed while they live (`sample`), and a container that ends within one sample of its last
 * refused fork may go uncounted (its process count at the limit still names it).
 */
function refusedForks(version: 1 | 2, dir: string, depth = 0): number {
  const own = readKey(path.join(dir, "pids.events"), "max") ?? 0;
  if (version === 2 || depth >= 3) return own;
  let below = 0;
  try {
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) below += refusedForks(version, path.join(dir, e.name), depth + 1);
  } catch {
    // the group ended between the listing and the read
  }
  return own + below;
}

/**
 * Whether evalgate can make cgroups here, and where: under its own cgroup (so whatever bounds
 * evalgate bounds its attempts too), else at the root of a v2 hierarchy it may write.
 */
export function probeCgroups(selfCgroup?: string): CgroupHost | string {
  let self = selfCgroup;
  try {
    self ??= readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return "no /proc/self/cgroup (not Linux)";
  }
  const tag = `evalgate/${machineTag()}-${process.pid}`;
  if (existsSync(path.join(MOUNT, "cgroup.controllers"))) {
    for (const parent of [ownPath(2, self), "/"]) {
      const base = path.posix.join(parent, tag);
      if (setUpV2(base)) return settled({ version: 2, base });
    }
    return `${MOUNT} cannot be written by this user (cgroup v2: a delegated subtree or root is needed)`;
  }
  if (!existsSync(path.join(MOUNT, "memory", "cgroup.procs"))) return `no memory cgroup under ${MOUNT}`;
  const base = path.posix.join(ownPath(1, self), tag);
  for (const c of V1_CONTROLLERS) {
    try {
      mkdirSync(path.join(MOUNT, c, base), { recursive: true });
    } catch (error) {
      return `cannot make a ${c} cgroup (${(error as NodeJS.ErrnoException).code}): cgroups need root or a delegated subtree`;
    }
  }
  return settled({ version: 1, base });
}

/** The host, with what earlier evalgate processes left (they were killed) removed, and its own removal at exit. */
function settled(host: CgroupHost): CgroupHost {
  const parent = path.posix.dirname(host.base);
  const dirs = host.version === 2 ? [MOUNT] : hierarchies();
  const tag = machineTag();
  for (const h of dirs) {
    let names: string[] = [];
    try {
      names = readdirSync(path.join(h, parent));
    } catch {
      continue;
    }
    for (const n of names) {
      const m = new RegExp(`^${tag}-(\\d+)$`).exec(n);
      if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
      removeTreeSync(path.join(h, parent, n));
    }
  }
  process.once("exit", () => removeBase(host));
  return host;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function removeTreeSync(dir: string): void {
  try {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) removeTreeSync(path.join(dir, e.name));
    }
    rmdirSync(dir);
  } catch {
    // busy (a process still in it) or gone
  }
}

/** v2: every level from the parent down must pass memory, pids and cpu on to the next. */
function setUpV2(base: string): boolean {
  try {
    mkdirSync(path.join(MOUNT, base), { recursive: true });
  } catch {
    return false;
  }
  const parts = base.split("/").filter(Boolean);
  for (let i = parts.length - 2; i <= parts.length - 1; i++) {
    const dir = path.join(MOUNT, ...parts.slice(0, i));
    for (const c of ["memory", "pids", "cpu"]) tryWrite(path.join(dir, "cgroup.subtree_control"), `+${c}`);
  }
  const enabled = readFileSync(path.join(MOUNT, base, "cgroup.controllers"), "utf8");
  return ["memory", "pids"].every((c) => enabled.includes(c));
}

export interface GroupLimits {
  memoryBytes?: number;
  cpus?: number;
  pids?: number;
}

/**
 * Makes a group named `name` below the host's base, with `limits` written into it (none for a
 * container's parent: the engine's flags hold those). Returns what could not be written.
 */
export function makeCgroup(
  host: CgroupHost,
  name: string,
  limits: GroupLimits = {},
): { group: Cgroup; failed: string[] } {
  const relative = path.posix.join(host.base, name);
  const failed: string[] = [];
  const dirs =
    host.version === 2
      ? [path.join(MOUNT, relative)]
      : V1_CONTROLLERS.map((c) => path.join(MOUNT, c, relative));
  for (const d of dirs) mkdirSync(d, { recursive: true });
  const at = (controller: (typeof V1_CONTROLLERS)[number], file: string) =>
    host.version === 2 ? path.join(MOUNT, relative, file) : path.join(MOUNT, controller, relative, file);
  const set = (resource: string, writes: [string, string][]) => {
    if (!writes.every(([file, value]) => tryWrite(file, value))) failed.push(resource);
  };
  if (limits.memoryBytes !== undefined) {
    const m = String(limits.memoryBytes);
    set(
      "memory",
      host.version === 2
        ? [
            [at("memory", "memory.max"), m],
            [at("memory", "memory.swap.max"), "0"],
          ]
        : [[at("memory", "memory.limit_in_bytes"), m]],
    );
    // v1: memory plus swap capped at the same figure, where the kernel accounts swap at all.
    if (host.version === 1) tryWrite(at("memory", "memory.memsw.limit_in_bytes"), m);
  }
  if (limits.pids !== undefined) set("pids", [[at("pids", "pids.max"), String(limits.pids)]]);
  if (limits.cpus !== undefined) {
    const period = 100_000;
    const quota = String(Math.max(1000, Math.round(limits.cpus * period)));
    set(
      "cpus",
      host.version === 2
        ? [[at("cpu", "cpu.max"), `${quota} ${period}`]]
        : [
            [at("cpu", "cpu.cfs_period_us"), String(period)],
            [at("cpu", "cpu.cfs_quota_us"), quota],
          ],
    );
  }
  let pidsPeak = 0;
  let refusedSeen = 0;
  const group: Cgroup = {
    relative,
    procsFiles: dirs.map((d) => path.join(d, "cgroup.procs")),
    sample: () => {
      const n = readNumber(at("pids", "pids.current"));
      if (n !== undefined && n > pidsPeak) pidsPeak = n;
      refusedSeen = Math.max(
        refusedSeen,
        refusedForks(host.version, path.dirname(at("pids", "pids.events"))),
      );
    },
    usage: () => {
      group.sample();
      const u: CgroupUsage = { pidsPeak };
      const peak =
        host.version === 2
          ? readNumber(at("memory", "memory.peak"))
          : readNumber(at("memory", "memory.max_usage_in_bytes"));
      if (peak !== undefined) u.memoryPeak = peak;
      const oom =
        host.version === 2
          ? readKey(at("memory", "memory.events"), "oom_kill")
          : readKey(at("memory", "memory.oom_control"), "oom_kill");
      if (oom !== undefined) u.oomKills = oom;
      if (refusedSeen > 0) u.pidsRefused = refusedSeen;
      if (host.version === 2) {
        const p = readNumber(at("pids", "pids.peak"));
        if (p !== undefined && p > pidsPeak) u.pidsPeak = p;
      }
      return u;
    },
    remove: async () => {
      // The engine makes the parent in every hierarchy (blkio, devices, …), not only these three.
      for (const d of host.version === 2 ? dirs : hierarchies().map((h) => path.join(h, relative))) {
        await removeTree(d);
      }
    },
  };
  return { group, failed };
}

/** Every v1 hierarchy mounted under /sys/fs/cgroup, once each (cpu may link to cpu,cpuacct). */
function hierarchies(): string[] {
  const seen = new Set<string>();
  try {
    for (const e of readdirSync(MOUNT)) {
      try {
        seen.add(realpathSync(path.join(MOUNT, e)));
      } catch {
        // gone
      }
    }
  } catch {
    // no cgroup mount
  }
  return [...seen];
}

/** Removes a cgroup folder and those the engine made inside it (deepest first). */
async function removeTree(dir: string): Promise<void> {
  let entries: string[] = [];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return;
  }
  for (const e of entries) await removeTree(path.join(dir, e));
  // A group whose last process is still exiting is busy for a moment.
  for (let i = 0; i < 20; i++) {
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Removes the host's base folders (evalgate is done with cgroups); quiet about what is left busy. */
export function removeBase(host: CgroupHost): void {
  const dirs =
    host.version === 2 ? [path.join(MOUNT, host.base)] : hierarchies().map((h) => path.join(h, host.base));
  for (const d of dirs) removeTreeSync(d);
}
