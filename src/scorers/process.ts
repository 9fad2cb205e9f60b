/** Running a scorer's command in the workspace. */
import path from "node:path";
import { expandPlaceholders, toCommand } from "../config/commands.js";
import type { ProcessOutcome } from "../sandbox/process.js";
import type { ScorerContext, ScorerResult } from "./types.js";
import { mustResolveInside } from "./workspace-path.js";

export async function runScorerCommand(
  ctx: ScorerContext,
  options: { run: string | string[]; cwd?: string; env_passthrough?: string[] },
  captureStdout = false,
): Promise<ProcessOutcome> {
  const cwd = options.cwd ? path.resolve(ctx.workspace, options.cwd) : ctx.workspace;
  // A cwd the agent made a link to another folder (another attempt's) would grade that folder.
  if (options.cwd) await mustResolveInside(ctx.workspace, cwd, `cwd ${options.cwd}`);
  return ctx.runner.run({
    command: expandPlaceholders(toCommand(options.run), {
      WORKSPACE: ctx.workspace,
      EVAL_DIR: ctx.spec.evalDir,
    }),
    cwd,
    env: ctx.env(options.env_passthrough ?? []),
    timeoutMs: ctx.spec.timeoutMs,
    logFile: ctx.logFile,
    captureStdout,
  });
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
const SUMMARY_LINE = /^\s*(#|ℹ|tests?\b|duration|pass\b|fail\b\s*\d)/i;

/**
 * The lines of a test command's output that say what failed ("not ok 2 - empty total"), or the
 * last lines when none stands out: the reason a reviewer reads first.
 */
export function failureExcerpt(text: string, n = 2): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const telling = lines.filter(
    (l) =>
      FAILURE_LINE.test(l) &&
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
