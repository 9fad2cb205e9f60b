/**
 * Isolation levels and the once-per-run probe (docs/decisions/0090). `sandbox: auto` (the default)
 * uses the strongest level the machine offers:
 *
 *   bwrap          bubblewrap: own filesystem view, PID namespace, evalgate's state out of reach
 *   pid-namespace  `unshare --pid` (as root): no survivors, evalgate's /proc out of sight; files shared
 *   subreaper      the reaper as a child subreaper: no survivors; files and /proc shared
 *   none           process group and descendants only: a double-forked daemon can survive
 *
 * Setup and scorer processes run the agent's code (its tests import it) and third-party install
 * scripts: they run under bubblewrap whenever the run has it, whatever the targets' sandbox, else
 * under the same reaper as an unsandboxed agent (docs/decisions/0185).
 */
import { readFileSync } from "node:fs";
import { execa } from "execa";
import { bwrapProgram, checkBwrap } from "./bwrap.js";
import type { Command } from "./commands.js";
import { findProgram } from "./commands.js";
import { type ProcessRunner, willStart } from "./process.js";
import { diesWithParentArgv, prctlSyscall, reaperArgv } from "./reaper.js";
import { gapSentence, openRows } from "./threat-model.js";

export const ISOLATION_LEVELS = ["bwrap", "pid-namespace", "subreaper", "none"] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];

/** How processes that are not under bubblewrap are contained. */
export interface Reaper {
  level: Exclude<IsolationLevel, "bwrap">;
  /** Why no stronger level (pid-namespace or subreaper) was available; null at the strongest. */
  why: string | null;
  /** The command line that runs `argv` contained; `argv` itself at level none. */
  wrap(argv: readonly string[]): string[];
}

export type BwrapCheck = { ok: true; program: string } | { ok: false; message: string };

export interface IsolationProbe {
  /** The bubblewrap program, or why it cannot be used here. */
  bwrap: BwrapCheck;
  reaper: Reaper;
  /** What evalgate changed on the runner to make bubblewrap work (installed it, allowed namespaces). */
  provisioned?: string[];
}

const sh = (argv: readonly string[]) => [...argv];

async function works(argv: string[], timeoutMs = 20_000): Promise<{ ok: boolean; why: string }> {
  const r = await execa(argv[0]!, argv.slice(1), {
    reject: false,
    timeout: timeoutMs,
    env: { PATH: "/usr/bin:/bin" },
    extendEnv: false,
    stdin: "ignore",
  });
  if (r.exitCode === 0) return { ok: true, why: "" };
  const why = String(r.stderr || r.stdout || r.message)
    .trim()
    .split("\n")[0];
  return { ok: false, why: why || `exit status ${r.exitCode}` };
}

/**
 * The reaper this machine allows: a PID namespace when evalgate runs as root and `unshare` works,
 * else the perl subreaper, else none. `EVALGATE_ISOLATION` caps the level (for tests and for
 * debugging an agent that misbehaves when contained).
 */
export async function probeReaper(env: NodeJS.ProcessEnv = process.env): Promise<Reaper> {
  const cap = capOf(env);
  const reasons: string[] = [];
  const path = env.PATH ?? "";
  const perl = findProgram("perl", path) ?? findProgram("perl", "/usr/bin:/bin");
  const nr = prctlSyscall();
  const root = process.getuid?.() === 0;
  if (rank(cap) <= rank("pid-namespace")) {
    const unshare = findProgram("unshare", path) ?? findProgram("unshare", "/usr/bin:/bin");
    if (!root) reasons.push("a PID namespace without bubblewrap needs root");
    else if (!unshare) reasons.push("unshare (util-linux) is not installed");
    else {
      const ns = [unshare, "--pid", "--fork", "--kill-child", "--mount-proc", "--"];
      const init = (argv: readonly string[]) => (perl ? reaperArgv(perl, 0, argv) : sh(argv));
      // unshare dies with evalgate (a kill -9 included), and --kill-child takes the namespace along.
      const outer = (argv: string[]) => (perl && nr ? diesWithParentArgv(perl, nr, argv, process.pid) : argv);
      const check = await works(outer([...ns, ...init(["/bin/true"])]));
      if (check.ok) {
        return { level: "pid-namespace", why: null, wrap: (argv) => outer([...ns, ...init(argv)]) };
      }
      reasons.push(`unshare cannot create a PID namespace (${check.why})`);
    }
  } else reasons.push(`EVALGATE_ISOLATION=${env.EVALGATE_ISOLATION}`);
  if (rank(cap) <= rank("subreaper")) {
    if (!perl) reasons.push("perl is not installed (the subreaper needs it)");
    else if (!nr) reasons.push(`no subreaper on ${process.arch}`);
    else {
      const check = await works(reaperArgv(perl, nr, ["/bin/true"], process.pid));
      if (check.ok) {
        // With evalgate's pid: the reaper kills everything under it when evalgate dies (0188).
        const wrap = (argv: readonly string[]) => reaperArgv(perl, nr, argv, process.pid);
        return { level: "subreaper", why: reasons.join("; "), wrap };
      }
      reasons.push(`the subreaper does not work here (${check.why})`);
    }
  }
  return { level: "none", why: reasons.join("; "), wrap: sh };
}

function rank(level: IsolationLevel): number {
  return ISOLATION_LEVELS.indexOf(level);
}

/** The weaker of two levels (what a run of both gets to claim). */
export function weakerLevel(a: IsolationLevel, b: IsolationLevel): IsolationLevel {
  return rank(b) > rank(a) ? b : a;
}

/** The strongest level `EVALGATE_ISOLATION` allows (default bwrap: no cap). */
function capOf(env: NodeJS.ProcessEnv): IsolationLevel {
  const v = env.EVALGATE_ISOLATION;
  return v && (ISOLATION_LEVELS as readonly string[]).includes(v) ? (v as IsolationLevel) : "bwrap";
}

/** Probes once per run: bubblewrap (when a target may use it) and the reaper. */
export async function probeIsolation(
  wantBwrap: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<IsolationProbe> {
  const cap = capOf(env);
  const provisioned: string[] = [];
  const bwrapCheck = async (): Promise<BwrapCheck> => {
    if (!wantBwrap) return { ok: false, message: "no target needs it" };
    if (cap !== "bwrap") return { ok: false, message: `EVALGATE_ISOLATION=${env.EVALGATE_ISOLATION}` };
    const first = await checkBwrap(env);
    if (first.ok || !mayProvision(env)) return first;
    provisioned.push(...(await provisionBwrap(env)));
    return provisioned.length > 0 ? checkBwrap(env) : first;
  };
  const [bwrap, reaper] = await Promise.all([bwrapCheck(), probeReaper(env)]);
  return { bwrap, reaper, ...(provisioned.length > 0 ? { provisioned } : {}) };
}

/**
 * Whether evalgate may change the machine to get bubblewrap working: only on a GitHub-hosted runner
 * (a throwaway virtual machine with password-less sudo), never on a self-hosted one or a laptop.
 */
export function mayProvision(env: NodeJS.ProcessEnv): boolean {
  return env.GITHUB_ACTIONS === "true" && env.RUNNER_ENVIRONMENT === "github-hosted" && !env.EVALGATE_BWRAP;
}

export interface ProvisionDeps {
  exec(argv: string[]): Promise<{ ok: boolean; why: string }>;
  /** The AppArmor switch that ubuntu-24.04 sets to 1 (unprivileged user namespaces restricted). */
  readSysctl(): string | undefined;
  installed(): boolean;
}

const REAL_DEPS = (env: NodeJS.ProcessEnv): ProvisionDeps => ({
  exec: (argv) => works(argv, 300_000),
  readSysctl: () => {
    try {
      return readFileSync("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "utf8").trim();
    } catch {
      return undefined;
    }
  },
  installed: () => bwrapProgram(env) !== undefined,
});

/**
 * On a GitHub-hosted runner: installs bubblewrap when it is missing (`apt-get install bubblewrap`,
 * after `apt-get update` if the first try fails) and lifts ubuntu-24.04's AppArmor restriction on
 * unprivileged user namespaces. Returns what it did, for the console; nothing when it did nothing.
 */
export async function provisionBwrap(
  env: NodeJS.ProcessEnv,
  deps: ProvisionDeps = REAL_DEPS(env),
): Promise<string[]> {
  const done: string[] = [];
  const sudo = ["sudo", "-n", "env", "DEBIAN_FRONTEND=noninteractive"];
  if (!deps.installed()) {
    const install = [...sudo, "apt-get", "install", "-y", "-q", "bubblewrap"];
    let r = await deps.exec(install);
    if (!r.ok && (await deps.exec([...sudo, "apt-get", "update", "-q"])).ok) r = await deps.exec(install);
    if (!r.ok) return done;
    done.push("installed bubblewrap (apt-get install bubblewrap)");
  }
  if (deps.readSysctl() === "1") {
    const r = await deps.exec([...sudo, "sysctl", "-w", "kernel.apparmor_restrict_unprivileged_userns=0"]);
    if (r.ok)
      done.push(
        "allowed unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns=0)",
      );
  }
  return done;
}

/**
 * A runner that starts every process under the reaper. A process already contained (bubblewrap's
 * own PID namespace) is passed through as it is.
 */
export function reapingRunner(inner: ProcessRunner, reaper: Reaper): ProcessRunner {
  if (reaper.level === "none") return inner;
  return {
    run: (spec) => {
      if (spec.contained || spec.reap === false) return inner.run(spec);
      const argv = "argv" in spec.command ? spec.command.argv : ["/bin/sh", "-c", spec.command.shell];
      // A program that will not start is started as it is, so the error stays the system's own.
      if (!willStart(spec.command, spec.cwd, spec.env.PATH ?? "")) return inner.run(spec);
      const command: Command = { argv: reaper.wrap(argv) };
      // SIGKILL would kill the subreaper before it killed the command's daemons.
      const stop = reaper.level === "subreaper" ? { stopSignal: "SIGUSR1" as const } : {};
      return inner.run({ ...spec, command, contained: true, ...stop });
    },
  };
}

/** What one target's agent runs under, and why not stronger. */
export interface TargetIsolation {
  name: string;
  level: IsolationLevel;
  reason: string | null;
}

export interface RunIsolation {
  /** The weakest level any agent of the run runs under; null when no target runs an agent program. */
  level: IsolationLevel | null;
  reason: string | null;
  targets: TargetIsolation[];
  /** The bubblewrap program, when some target runs under it. */
  bwrap?: string;
  bwrapTargets: Set<string>;
  /** The bubblewrap program for setup and scorers, when the run has it (whatever the targets say). */
  commandsBwrap?: string;
  /** What setup and scorers run under: bwrap when the run has it, else the reaper's level. */
  commandsLevel: IsolationLevel;
}

/**
 * Each target's level from the run's probe. `targets` are those that run an agent program: a
 * target without `sandbox` here opted out (`sandbox: none`). An explicit `sandbox: bwrap` that
 * cannot run is not decided here: the caller stops the run before it starts.
 */
export function planIsolation(
  targets: readonly { name: string; sandbox?: { kind: "bwrap" | "auto" } }[],
  probe: IsolationProbe,
): RunIsolation {
  const out: TargetIsolation[] = [];
  const bwrapTargets = new Set<string>();
  for (const t of targets) {
    if (!t.sandbox) {
      out.push({ name: t.name, level: "none", reason: "sandbox: none in the eval file" });
    } else if (probe.bwrap.ok) {
      bwrapTargets.add(t.name);
      out.push({ name: t.name, level: "bwrap", reason: null });
    } else {
      const r = probe.reaper;
      // The cap (EVALGATE_ISOLATION) is both bubblewrap's reason and the reaper's: said once.
      const reaperWhy = r.why === probe.bwrap.message ? null : r.why;
      const why = [`bubblewrap cannot run here: ${probe.bwrap.message}`, reaperWhy]
        .filter(Boolean)
        .join("; ");
      out.push({ name: t.name, level: r.level, reason: why });
    }
  }
  const weakest = out.reduce<TargetIsolation | null>(
    (w, t) => (!w || rank(t.level) > rank(w.level) ? t : w),
    null,
  );
  const run: RunIsolation = {
    level: weakest?.level ?? null,
    reason: weakest?.reason ?? (out.length === 0 ? "no target runs an agent program" : null),
    targets: out,
    bwrapTargets,
    commandsLevel: probe.bwrap.ok ? "bwrap" : probe.reaper.level,
  };
  if (probe.bwrap.ok && bwrapTargets.size > 0) run.bwrap = probe.bwrap.program;
  if (probe.bwrap.ok) run.commandsBwrap = probe.bwrap.program;
  return run;
}

/** What a level leaves open, in words for the console and the comment (sandbox/threat-model.ts). */
export function isolationGap(level: IsolationLevel, commands: IsolationLevel = level): string | null {
  return gapSentence(openRows(level, commands));
}
