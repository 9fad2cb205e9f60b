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

const FAILURE_LINE = /(^|\s)(not ok\b|FAIL\b|failed\b|failure\b|error\b|AssertionError|expected\b|✗|×|✕)/i;
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
    (l) => FAILURE_LINE.test(l) && !SUMMARY_LINE.test(l) && !/:\s*[|>]-?$/.test(l),
  );
  const picked = telling.length > 0 ? telling.slice(0, n) : lines.slice(-n);
  return picked.map((l) => (l.length > 200 ? `${l.slice(0, 199)}…` : l)).join(" / ");
}
