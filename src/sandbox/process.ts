/**
 * Child processes for agents, setup and scorers: a clean environment, their own process group, a
 * timeout that kills the whole tree, and output that is logged with a size cap.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import path from "node:path";
import { type Command, crlfShebang, findProgram } from "./commands.js";
import { CappedLog } from "./log.js";
import type { Redactor } from "./redact.js";

export interface ProcessSpec {
  command: Command;
  cwd: string;
  /** The complete environment: nothing is inherited. */
  env: Record<string, string>;
  timeoutMs: number;
  /** Where stdout and stderr go, interleaved and capped. */
  logFile?: string;
  logCapBytes?: number;
  /** Keep stdout in memory (capped) for parsing, e.g. a script scorer's score line. */
  captureStdout?: boolean;
  /** Called with every chunk of stdout (stderr) as it arrives: agents' events (API errors) are read live. */
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /** Text given on stdin; stdin is closed otherwise. */
  input?: string;
  /** Time between SIGTERM and SIGKILL once the timeout fires. */
  killGraceMs?: number;
  /** Secrets to redact from the log (and from `tail`); `stdout` is kept as printed, for parsing. */
  redactor?: Redactor;
  /** Set by runners that wrap a command in a PID namespace or the reaper: its strays die with it. */
  contained?: boolean;
  /**
   * Sent to the leader alone when the grace after SIGTERM ends, before the group gets SIGKILL: the
   * reaper kills the command on it and then everything left, where a SIGKILL would kill the reaper
   * first and set the command's daemons free.
   */
  stopSignal?: NodeJS.Signals;
  /** False for an agent whose target opted out (`sandbox: none`): started as it is, not reaped. */
  reap?: boolean;
}

export interface ProcessOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** Set when the program could not be started at all (ENOENT, EACCES). */
  spawnError?: string;
  /** stdout, when captureStdout was set (capped at 8 MiB). */
  stdout: string;
  /** The last lines of the combined output, for messages. */
  tail: string;
  /** Bytes of output that were not kept in the log. */
  droppedBytes: number;
  /** A resource limit of its attempt the process ran into (environment/), and what was seen. */
  limit?: { kind: "memory" | "pids" | "disk"; detail: string };
}

export interface ProcessRunner {
  run(spec: ProcessSpec): Promise<ProcessOutcome>;
}

const STDOUT_CAP = 8 * 1024 * 1024;
export const DEFAULT_LOG_CAP = 5 * 1024 * 1024;

/** Process groups still alive, killed if evalgate itself is interrupted. */
const liveGroups = new Map<number, NodeJS.Signals | undefined>();
let exitHookInstalled = false;

/** Kills every process group still running (evalgate is being interrupted or exits). */
export function killLiveGroups(): void {
  for (const [pgid, stop] of liveGroups) {
    // A reaper is told to stop (it kills everything under it, then itself); a SIGKILL to its
    // group would kill it first and set the daemons under it free.
    if (stop) {
      try {
        process.kill(pgid, stop);
      } catch {
        // gone
      }
    } else killTree(pgid, "SIGKILL");
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", killLiveGroups);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(sig, () => {
      killLiveGroups();
      // An edge that handles interrupts itself (run/interrupt.ts) ends the run; else die of it.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    });
  }
}

/** Pids of every descendant of `pid` (Linux /proc; empty elsewhere). */
export function descendants(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      // The command name is in parentheses and may itself hold spaces or parentheses.
      const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ppid = Number(after[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(e));
      children.set(ppid, list);
    } catch {
      // the process ended while we looked
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift()!;
    for (const c of children.get(p) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/**
 * Kills the process group led by `pgid`, and every descendant that left the group (setsid, a
 * new process group) as long as it is still a descendant.
 */
export function killTree(pgid: number, signal: NodeJS.Signals, contained = false): void {
  const strays = contained ? [] : descendants(pgid);
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone
  }
  for (const pid of strays) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Pids of processes still in group `pgid` (Linux /proc). */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // after: state ppid pgrp ...
      if (after[0] !== "Z" && Number(after[2]) === pgid) out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}

function argvOf(command: Command): [string, string[]] {
  if ("shell" in command) return ["/bin/sh", ["-c", command.shell]];
  const [file, ...args] = command.argv;
  return [file!, args];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/**
 * How long output may still arrive once the program has exited and its group is killed. A contained
 * program's pipes close as it exits; only an orphan outside any containment can hold them longer, and
 * evalgate does not wait for it (docs/decisions/0091).
 */
const DRAIN_MS = 1000;

/** Processes started and not yet ended, for the check that none is left when the bundle is written. */
export function liveProcesses(): number {
  return liveGroups.size;
}

/**
 * A runner whose every process log is redacted and capped as the run asks: setup, agents and
 * scorers get it without each call site having to remember.
 */
export function runnerWith(
  inner: ProcessRunner,
  defaults: { redactor?: Redactor; logCapBytes?: number },
): ProcessRunner {
  return {
    run: (spec) =>
      inner.run({
        ...spec,
        redactor: spec.redactor ?? defaults.redactor,
        logCapBytes: spec.logCapBytes ?? defaults.logCapBytes,
      }),
  };
}

/**
 * Starts the program in a session (and process group) of its own, with exactly `spec.env`. Node's
 * `spawn` rather than execa: this is every agent's and scorer's start, and execa's layers cost about
 * a millisecond and 100 KB of garbage per process (docs/decisions/0176). A program the system
 * refuses at once (E2BIG, an argument holding NUL) is returned as its error code; ENOENT and EACCES
 * come later, as the child's "error".
 */
function start(file: string, args: string[], spec: ProcessSpec): ChildProcess | string {
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: [spec.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      windowsHide: true,
    });
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "EINVAL";
  }
  if (spec.input !== undefined && child.stdin) {
    // The program may exit without reading all of it: that is no error of evalgate's.
    child.stdin.on("error", () => {});
    child.stdin.end(spec.input);
  }
  return child;
}

/** The real runner: child processes in their own process group. */
export class ChildProcessRunner implements ProcessRunner {
  async run(spec: ProcessSpec): Promise<ProcessOutcome> {
    installExitHook();
    const [file, args] = argvOf(spec.command);
    const log = new CappedLog(spec.logFile, spec.logCapBytes ?? DEFAULT_LOG_CAP, spec.redactor);
    const started = performance.now();
    let stdout = "";
    let stdoutBytes = 0;

    const launched = start(file, args, spec);
    const child = typeof launched === "string" ? undefined : launched;
    const pgid = child?.pid;
    if (pgid !== undefined) liveGroups.set(pgid, spec.stopSignal);

    child?.stdout?.on("data", (chunk: Buffer) => {
      log.write(chunk);
      spec.onStdout?.(chunk);
      if (spec.captureStdout && stdoutBytes < STDOUT_CAP) {
        stdoutBytes += chunk.length;
        stdout += chunk.toString("utf8");
      }
    });
    child?.stderr?.on("data", (chunk: Buffer) => {
      log.write(chunk);
      spec.onStderr?.(chunk);
    });

    let timedOut = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    // Set when the program could not be started (ENOENT, EACCES, E2BIG): no "exit" comes then.
    let notStarted = typeof launched === "string" ? launched : undefined;
    const exited = new Promise<void>((resolve) => {
      if (!child) return resolve();
      child.once("exit", (code, signal) => {
        exit = { code, signal };
        resolve();
      });
      child.once("error", (error: NodeJS.ErrnoException) => {
        if (exit) return;
        notStarted = error.code ?? "EINVAL";
        resolve();
      });
    });
    const contained = spec.contained === true;
    const timer = setTimeout(async () => {
      if (pgid === undefined) return;
      timedOut = true;
      killTree(pgid, "SIGTERM", contained);
      const grace = spec.killGraceMs ?? 2000;
      await Promise.race([exited, sleep(grace)]);
      if (spec.stopSignal && !exit) {
        try {
          process.kill(pgid, spec.stopSignal);
        } catch {
          // gone
        }
        await Promise.race([exited, sleep(Math.max(grace, 1000))]);
      }
      killTree(pgid, "SIGKILL", contained);
    }, spec.timeoutMs);

    // The leader's exit ends the attempt: anything it left running in its group is killed, so a
    // background child holding the output pipes cannot keep the attempt (or the runner) alive.
    await exited;
    clearTimeout(timer);
    if (pgid !== undefined) {
      // No /proc walk here: the leader has exited and been reaped, so whatever it started has been
      // handed to init (or the reaper above it) and is no longer its descendant; what is left of its
      // group still gets the signal. The walk is for a timeout, while the leader still lives.
      killTree(pgid, "SIGKILL", true);
      liveGroups.delete(pgid);
    }
    // Output still in the pipes is read; an orphan that holds them open (a daemon outside any
    // containment) is not waited for.
    const streams = [child?.stdout, child?.stderr].filter((s) => s != null);
    const drained = Promise.all(
      streams.map((s) =>
        s.readableEnded || s.destroyed ? undefined : new Promise((r) => s.once("close", r)),
      ),
    );
    await Promise.race([drained, sleep(DRAIN_MS)]);
    for (const s of streams) s.destroy();
    await log.close();

    const durationMs = Math.round(performance.now() - started);
    const outcome: ProcessOutcome = {
      exitCode: exit ? exit.code : null,
      signal: exit ? exit.signal : null,
      timedOut,
      durationMs,
      stdout,
      tail: log.tail(),
      droppedBytes: log.droppedBytes,
    };
    if (!exit && notStarted && !timedOut) outcome.spawnError = spawnErrorOf(file, notStarted, spec.cwd);
    return outcome;
  }
}

/**
 * Whether the system will start `command` (its program is found and executable, and a script's #!
 * interpreter exists). A wrapper (bubblewrap, the reaper) starts a program that will not start
 * as it is, so the system's own error, with evalgate's explanation of it, is kept.
 */
export function willStart(command: Command, cwd: string, envPath: string): boolean {
  if (!("argv" in command)) return true;
  const program = command.argv[0] ?? "";
  const found = program.includes("/")
    ? findProgram(path.resolve(cwd, program))
    : findProgram(program, envPath);
  if (!found) return false;
  let head = "";
  try {
    const fd = openSync(found, "r");
    try {
      const buf = Buffer.alloc(256);
      head = buf.subarray(0, readSync(fd, buf, 0, 256, 0)).toString("latin1");
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
  if (!head.startsWith("#!")) return true;
  // Not trimmed at the end: a CRLF script's interpreter is "/bin/sh\r", which does not exist.
  const interpreter =
    head
      .slice(2)
      .split("\n")[0]!
      .replace(/^[ \t]+/, "")
      .split(/[ \t]/)[0] ?? "";
  return interpreter.length > 0 && existsSync(interpreter);
}

/** Why the system refused to start a program, in words that name the fix. */
function spawnErrorOf(file: string, code: string, cwd: string): string {
  switch (code) {
    case "ENOENT": {
      if (!existsSync(cwd)) return `the working folder ${cwd} does not exist`;
      // A script that exists but is "not found": its #! interpreter is missing.
      const abs = path.resolve(cwd, file);
      if (file.includes("/") && existsSync(abs)) {
        return (
          crlfShebang(abs) ??
          `${file}: the program it needs to start (the interpreter on its #! line) was not found`
        );
      }
      return `${file}: not found (cwd ${cwd})`;
    }
    case "E2BIG":
      return `${file}: the command line is longer than the system allows (128 KiB for one argument): pass long text through {PROMPT_FILE} instead of {PROMPT}`;
    default:
      return `${file}: cannot be executed (${code})`;
  }
}
