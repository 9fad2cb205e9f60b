/** Running a scorer's command in the workspace. */
import { constants } from "node:fs";
import { access, open } from "node:fs/promises";
import path from "node:path";
import type { Command } from "../sandbox/commands.js";
import { expandPlaceholders, plainArgv, toCommand } from "../sandbox/commands.js";
import type { ProcessOutcome } from "../sandbox/process.js";
import { tapFailures } from "./tap.js";
import type { ScorerContext, ScorerResult } from "./types.js";
import { mustResolveInside } from "./workspace-path.js";

export async function runScorerCommand(
  ctx: ScorerContext,
  options: { run: string | string[]; cwd?: string; env_passthrough?: string[] },
  captureStdout = false,
  /** More placeholders (a tests scorer's {REPORT_FILE}) and variables for this command. */
  extra: { placeholders?: Record<string, string>; env?: Record<string, string> } = {},
): Promise<ProcessOutcome> {
  const cwd = options.cwd ? path.resolve(ctx.workspace, options.cwd) : ctx.workspace;
  // A cwd the agent made a link to another folder (another attempt's) would grade that folder.
  if (options.cwd) await mustResolveInside(ctx.workspace, cwd, `cwd ${options.cwd}`);
  const env = { ...ctx.env(options.env_passthrough ?? []), ...extra.env };
  const command = expandPlaceholders(toCommand(options.run), {
    WORKSPACE: ctx.workspace,
    EVAL_DIR: ctx.spec.evalDir,
    ...extra.placeholders,
  });
  return ctx.runner.run({
    command: await withoutShell(command, cwd, env.PATH),
    cwd,
    env,
    timeoutMs: ctx.spec.timeoutMs,
    logFile: ctx.logFile,
    captureStdout,
  });
}

/**
 * A shell line without shell syntax whose program exists runs as an argv: one process instead of
 * `/bin/sh -c` and the program. A program that is not found keeps the shell, and so its message
 * and exit status 127.
 */
export async function withoutShell(
  command: Command,
  cwd: string,
  pathVar: string | undefined,
): Promise<Command> {
  if (!("shell" in command)) return command;
  const argv = plainArgv(command.shell);
  if (!argv) return command;
  const program = argv[0]!;
  const candidates = program.includes("/")
    ? [path.resolve(cwd, program)]
    : (pathVar ?? "")
        .split(":")
        .filter(Boolean)
        .map((d) => path.join(d, program));
  for (const c of candidates) {
    if (
      !(await access(c, constants.X_OK).then(
        () => true,
        () => false,
      ))
    )
      continue;
    // Found: a binary or a script with `#!` runs directly; a script without one needs the shell.
    return (await startsRunnable(c)) ? { argv } : command;
  }
  return command;
}

async function startsRunnable(file: string): Promise<boolean> {
  const head = Buffer.alloc(4);
  try {
    const f = await open(file, "r");
    try {
      const { bytesRead } = await f.read(head, 0, 4, 0);
      const h = head.subarray(0, bytesRead);
      return h.subarray(0, 2).toString("latin1") === "#!" || h.toString("latin1") === "\x7fELF";
    } finally {
      await f.close();
    }
  } catch {
    return false;
  }
}

/** The error result for a command that did not run to completion, or undefined when it did. */
export function notRun(outcome: ProcessOutcome, timeoutMs: number): ScorerResult | undefined {
  if (outcome.spawnError) return { state: "error", reason: `could not start: ${outcome.spawnError}` };
  if (outcome.timedOut) {
    return { state: "error", reason: `timed out after ${Math.round(timeoutMs / 1000)} s`, timedOut: true };
  }
  if (outcome.exitCode === null)
    return { state: "error", reason: `killed by ${outcome.signal ?? "a signal"}` };
  return undefined;
}

/** The last non-empty lines of output. */
export function lastLines(text: string, n = 3): string {
  return text
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim())
    .slice(-n)
    .join(" / ");
}

const FAILURE_LINE = /(^|\s)(not ok\b|FAIL\b|failed\b|failure\b|error\b|AssertionError|expected\b|✗|×|✕|✖)/i;
/** An exception's headline: `TypeError: Cannot read …`, `ValueError: …`, `AssertionError [ERR_ASSERTION]: …`. */
const EXCEPTION_LINE = /^[A-Z]\w*(Error|Exception)\b( \[\w+\])?:\s/;
const SUMMARY_LINE = /^\s*(#|ℹ|tests?\b|duration|pass\b|fail\b\s*\d)/i;

/**
 * The lines of a test command's output that say what failed ("not ok 2 - empty total"), or the
 * last lines when none stands out: the reason a reviewer reads first.
 */
export function failureExcerpt(text: string, n = 2): string {
  // TAP (tape, node --test, mocha's tap reporter): the failing points with their diagnostics.
  const tap = tapFailures(text, n);
  if (tap.length > 0) return tap.join(" / ");
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  // A test that threw counts by its exception's headline, not the stack below it.
  const telling = lines.filter(
    (l) =>
      (FAILURE_LINE.test(l) || EXCEPTION_LINE.test(l)) &&
      !SUMMARY_LINE.test(l) &&
      !/:\s*[|>]-?$/.test(l) &&
      !/^(expected|actual):/.test(l),
  );
  const picked = telling.length > 0 ? telling.slice(0, n) : lines.slice(-n);
  const shown = picked.map((l) => {
    // An assertion's headline ends with a colon: what it compared is on the lines that follow.
    const more = l.endsWith(":") ? continuation(lines, lines.indexOf(l)) : "";
    const line = more ? `${l} ${more}` : l;
    return line.length > 200 ? `${line.slice(0, 199)}…` : line;
  });
  const values = expectedActual(lines);
  const excerpt = shown.join(" / ");
  return values && !excerpt.includes(values) ? `${excerpt} (${values})` : excerpt;
}

const STACK_OR_KEY = /^(at\s|\w+:(\s|$)|\.\.\.$|---$|\{$|\}$)/;

/** The lines after an assertion's headline: `NaN !== 0`, or a diff's `+`/`-` lines. */
function continuation(lines: readonly string[], at: number): string {
  const next = lines[at + 1];
  if (next === undefined) return "";
  if (next === "+ actual - expected") {
    const diff: string[] = [];
    for (let j = at + 2; j < lines.length && diff.length < 4; j++) {
      const l = lines[j]!;
      if (/^at\s/.test(l) || /^\w+:(\s|$)/.test(l)) break;
      if (/^[+-]\s/.test(l)) diff.push(l.replace(/\s+/g, " "));
    }
    return diff.length ? `${next}: ${diff.join(" ")}` : "";
  }
  return STACK_OR_KEY.test(next) ? "" : next;
}

/** Scalar `expected:` / `actual:` fields of an assertion (TAP's YAML block, or the error's own). */
function expectedActual(lines: readonly string[]): string {
  const field = (name: string) => {
    const line = lines.find((l) => l.startsWith(`${name}: `));
    return line ? line.slice(name.length + 2).replace(/,$/, "") : undefined;
  };
  const expected = field("expected");
  const actual = field("actual");
  if (expected === undefined || actual === undefined) return "";
  return `expected ${expected}, actual ${actual}`;
}
