/**
 * The container engine: Docker or Podman, found on PATH (or named by `EVALGATE_CONTAINER`), probed
 * once per run, with what this machine needs handled without the user's hand (docs/environments.md):
 *
 * - Podman as root raises every container's open-files and process limits to its own defaults
 *   (1,048,576 and 4,194,304); where evalgate's hard limits are lower and it may not raise them (a
 *   container, a CI sandbox) runc refuses to start anything ("error setting rlimit type 7"). evalgate
 *   passes its own limits as `--ulimit` instead, leaving the user's containers.conf alone.
 * - crun (Podman's default runtime where installed) refuses hybrid cgroup hierarchies (v1
 *   controllers beside a v2 `unified` mount); runc runs there, so evalgate picks it when it is installed.
 * - A rootful Docker daemon runs containers as root (as images and task sets expect: Harbor's
 *   verifiers write /logs), so the files they leave in the workspace would be root's, which evalgate
 *   running as a normal user (GitHub-hosted runners) could not change or delete: after each process
 *   evalgate gives the writable mounts back to its own user (`chownAfter`).
 */
import { existsSync, readFileSync } from "node:fs";
import { findProgram } from "../sandbox/commands.js";

export const ENGINES = ["docker", "podman"] as const;
export type EngineKind = (typeof ENGINES)[number];

/** The engine's program as found on this machine (not yet probed). */
export interface FoundEngine {
  kind: EngineKind;
  program: string;
}

export interface Engine extends FoundEngine {
  /** Flags before the engine's subcommand (`--runtime runc`). */
  globalArgs: string[];
  /** Flags of every `run` (ulimits, the user). */
  runArgs: string[];
  /** The environment the engine's own program runs with (its socket, storage and credentials). */
  env: Record<string, string>;
  rootless: boolean;
  cgroupVersion: 1 | 2;
  /** cgroupfs: `--cgroup-parent` is a path evalgate may create; systemd: a slice name. */
  cgroupManager: "cgroupfs" | "systemd";
  /** The engine can run a small init as PID 1 (signals forwarded, zombies reaped). */
  init: boolean;
  /** `uid:gid` to give the writable mounts back to after each process (rootful Docker, evalgate not root). */
  chownAfter?: string;
  /** What evalgate did about this machine's quirks, for the console. */
  notes: string[];
}

/**
 * Variables the engine's program itself reads (its socket, storage, registries and credentials);
 * nothing else of evalgate's environment reaches it.
 */
const ENGINE_VARIABLES = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "TMPDIR",
  "XDG_RUNTIME_DIR",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "DOCKER_HOST",
  "DOCKER_CONFIG",
  "DOCKER_CONTEXT",
  "DOCKER_CERT_PATH",
  "DOCKER_TLS_VERIFY",
  "DOCKER_BUILDKIT",
  "CONTAINERS_CONF",
  "CONTAINERS_STORAGE_CONF",
  "CONTAINERS_REGISTRIES_CONF",
  "REGISTRY_AUTH_FILE",
  "CONTAINER_HOST",
] as const;

/** Whether a variable name is one the engine's program reads (so it cannot carry an agent's value). */
export function isEngineVariable(name: string): boolean {
  return (ENGINE_VARIABLES as readonly string[]).includes(name);
}

function engineEnv(from: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENGINE_VARIABLES) {
    const v = from[name];
    if (v !== undefined) env[name] = v;
  }
  env.PATH ??= "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  return env;
}

/**
 * The engine this machine has: `EVALGATE_CONTAINER` (docker or podman), else docker, else podman
 * on PATH. A string says why there is none, in words that name the fix.
 */
export function findEngines(env: NodeJS.ProcessEnv = process.env): FoundEngine[] | string {
  const path = env.PATH ?? "";
  const asked = env.EVALGATE_CONTAINER;
  if (asked !== undefined && asked !== "") {
    if (!(ENGINES as readonly string[]).includes(asked)) {
      return `EVALGATE_CONTAINER is "${asked}": set it to docker or podman`;
    }
    const program = findProgram(asked, path);
    if (!program) return `EVALGATE_CONTAINER=${asked}, but ${asked} is not installed (not on PATH)`;
    return [{ kind: asked as EngineKind, program }];
  }
  const found = ENGINES.flatMap((kind) => {
    const program = findProgram(kind, path);
    return program ? [{ kind, program }] : [];
  });
  if (found.length === 0) {
    return "no container engine on this machine: install Docker, or Podman with runc (Debian/Ubuntu: apt-get install podman runc)";
  }
  return found;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the engine's program (no shell), with its own environment; never throws for a failure. */
export async function engineExec(
  engine: Pick<Engine, "program" | "env"> & { globalArgs?: string[] },
  args: readonly string[],
  opts: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<ExecResult> {
  // Loaded on first use: `evalgate validate` reaches this module and never runs an engine
  // (docs/decisions/0221).
  const { execa } = await import("execa");
  const r = await execa(engine.program, [...(engine.globalArgs ?? []), ...args], {
    reject: false,
    env: { ...engine.env, ...opts.env },
    extendEnv: false,
    stdin: "ignore",
    timeout: opts.timeoutMs ?? 600_000,
  });
  return {
    exitCode: r.exitCode ?? (r.timedOut ? 124 : 1),
    stdout: String(r.stdout ?? ""),
    stderr: String(r.stderr ?? r.message ?? ""),
  };
}

/** The first line of what a failed engine command said, for a message. */
export function firstLine(r: ExecResult): string {
  const text = (r.stderr.trim() || r.stdout.trim()).replace(/^Error:\s*/i, "");
  return text.split("\n").find((l) => l.trim() !== "") ?? `exit status ${r.exitCode}`;
}

interface InfoFacts {
  runtime?: string;
  cgroupVersion: 1 | 2;
  cgroupManager: "cgroupfs" | "systemd";
  rootless: boolean;
}

function podmanFacts(info: Record<string, unknown>): InfoFacts {
  const host = (info.host ?? {}) as Record<string, unknown>;
  const runtime = ((host.ociRuntime ?? {}) as Record<string, unknown>).name;
  const security = (host.security ?? {}) as Record<string, unknown>;
  return {
    runtime: typeof runtime === "string" ? runtime : undefined,
    cgroupVersion: host.cgroupVersion === "v2" ? 2 : 1,
    cgroupManager: host.cgroupManager === "systemd" ? "systemd" : "cgroupfs",
    rootless: security.rootless === true,
  };
}

function dockerFacts(info: Record<string, unknown>): InfoFacts {
  const options = Array.isArray(info.SecurityOptions) ? info.SecurityOptions.map(String) : [];
  return {
    runtime: typeof info.DefaultRuntime === "string" ? info.DefaultRuntime : undefined,
    cgroupVersion: info.CgroupVersion === "2" ? 2 : 1,
    cgroupManager: info.CgroupDriver === "systemd" ? "systemd" : "cgroupfs",
    rootless: options.some((o) => o.includes("rootless")),
  };
}

/** `{soft, hard}` of one limit of evalgate's own process ("Max open files"), from /proc/self/limits. */
export function ownLimit(name: string, text?: string): { soft: number; hard: number } | undefined {
  let limits = text;
  try {
    limits ??= readFileSync("/proc/self/limits", "utf8");
  } catch {
    return undefined;
  }
  const line = limits.split("\n").find((l) => l.startsWith(name));
  const m = line ? /^.+?\s{2,}(\S+)\s+(\S+)/.exec(line) : null;
  if (!m) return undefined;
  const n = (v: string) => (v === "unlimited" ? Number.POSITIVE_INFINITY : Number(v));
  return { soft: n(m[1]!), hard: n(m[2]!) };
}

/** Podman's built-in limits for a container as root (`nofile` and `nproc`). */
const PODMAN_ROOT_LIMITS = { nofile: 1_048_576, nproc: 4_194_304 } as const;
/**
 * Podman 4.3 lowers its own process limit to 32,768 before it starts the runtime (measured: conmon's
 * /proc/PID/limits), so a container may not be given more than that.
 */
const PODMAN_OWN_NPROC = 32_768;

/**
 * `--ulimit` flags that keep rootful Podman from raising limits beyond evalgate's own hard limits.
 * Empty when evalgate's limits are at least Podman's.
 */
export function podmanUlimits(limitsText?: string): string[] {
  const out: string[] = [];
  const pairs = [
    ["nofile", "Max open files"],
    ["nproc", "Max processes"],
  ] as const;
  for (const [flag, name] of pairs) {
    const own = ownLimit(name, limitsText);
    if (!own || own.hard >= PODMAN_ROOT_LIMITS[flag]) continue;
    const hard = flag === "nproc" ? Math.min(own.hard, PODMAN_OWN_NPROC) : own.hard;
    out.push("--ulimit", `${flag}=${Math.min(own.soft, hard)}:${hard}`);
  }
  return out;
}

/** A hybrid cgroup layout: v1 controllers with a v2 hierarchy beside them, which crun refuses. */
function hybridCgroups(): boolean {
  return existsSync("/sys/fs/cgroup/unified") && existsSync("/sys/fs/cgroup/memory");
}

const CATATONIT = [
  "/usr/libexec/podman/catatonit",
  "/usr/local/libexec/podman/catatonit",
  "/usr/lib/podman/catatonit",
  "/usr/bin/catatonit",
];

/** Probes one engine: whether it answers, and the flags this machine needs. */
async function probeOne(found: FoundEngine, from: NodeJS.ProcessEnv): Promise<Engine | string> {
  const env = engineEnv(from);
  const base = { ...found, env };
  const format = found.kind === "podman" ? "json" : "{{json .}}";
  const r = await engineExec(base, ["info", "--format", format], { timeoutMs: 60_000 });
  if (r.exitCode !== 0) return `${found.kind} info failed: ${firstLine(r)}`;
  let info: Record<string, unknown>;
  try {
    info = JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    return `${found.kind} info did not print JSON`;
  }
  const facts = found.kind === "podman" ? podmanFacts(info) : dockerFacts(info);
  const engine: Engine = {
    ...base,
    globalArgs: [],
    runArgs: [],
    rootless: facts.rootless,
    cgroupVersion: facts.cgroupVersion,
    cgroupManager: facts.cgroupManager,
    init: found.kind === "docker" || CATATONIT.some((p) => existsSync(p)),
    notes: [],
  };
  if (found.kind === "podman") {
    const runc = findProgram("runc", env.PATH) ?? findProgram("runc", "/usr/sbin:/usr/bin:/sbin:/bin");
    if (facts.runtime === "crun" && hybridCgroups() && runc) {
      engine.globalArgs.push("--runtime", runc);
      engine.notes.push("podman: runc instead of crun (crun refuses this machine's hybrid cgroups)");
    }
    if (!facts.rootless) {
      const ulimits = podmanUlimits();
      engine.runArgs.push(...ulimits);
      if (ulimits.length > 0) {
        engine.notes.push(
          `podman: containers keep evalgate's own limits (${ulimits.filter((_, i) => i % 2 === 1).join(", ")}), which it may not raise`,
        );
      }
    }
  }
  const uid = process.getuid?.();
  if (found.kind === "docker" && !facts.rootless && uid !== undefined && uid !== 0) {
    engine.chownAfter = `${uid}:${process.getgid?.() ?? uid}`;
  }
  return engine;
}

/**
 * The engine a run uses: the first of `findEngines` that answers `info`. A string says why none
 * can run containers here.
 */
export async function probeEngine(from: NodeJS.ProcessEnv = process.env): Promise<Engine | string> {
  const found = findEngines(from);
  if (typeof found === "string") return found;
  const why: string[] = [];
  for (const f of found) {
    const engine = await probeOne(f, from);
    if (typeof engine !== "string") {
      if (why.length > 0) engine.notes.push(`${why.join("; ")}: using ${f.kind}`);
      return engine;
    }
    why.push(engine);
  }
  return why.join("; ");
}
