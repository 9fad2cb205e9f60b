/**
 * The eval run's options as the core sees them: their bounds, shared by the eval file, the CLI and
 * the action, and how the edge that started the run spells them, for the core's messages. The
 * spellings themselves live with the edges (`cli/args.ts`, `github/inputs.ts`).
 */
import { UsageError } from "../errors.js";

/** The options whose values reach messages of the shared core (the plan, the bundle writer, merge). */
export type NamedOption = "out" | "target" | "shard" | "baseline" | "work-dir";

/**
 * How the user spelled the options, for the core's messages: the CLI's `--out DIR`, the action's
 * `out` input. An action user never typed a flag, so an error naming one sends them looking for it.
 */
export interface OptionNaming {
  /** The option with the value given: `--out dir` / `input out: dir`. */
  given(option: NamedOption, value: string): string;
  /** The option alone: `--baseline` / `input baseline`. */
  option(option: NamedOption): string;
  /** The filters together: `the --target / --test / --tag filters`. */
  filters: string;
  /** What to give when the disk is full: other folders for the bundle and the workspaces. */
  roomOnDisk: string;
}

/**
 * The most attempts per (test, target): the eval file's `repeat:`, `--repeat` and the action's
 * `repeat` input share it. Far more than any gate needs, and small enough that the attempts of a
 * case fit in memory (`--repeat 99999999999` used to end in an out-of-memory crash).
 */
export const MAX_REPEAT = 1000;
/** The most attempts at once: the eval file's `concurrency:`, `--concurrency` and the action input. */
export const MAX_CONCURRENCY = 256;

/** Why `n` attempts per case are not allowed, or undefined when they are. Shared by every repeat check. */
export function repeatProblem(n: number): string | undefined {
  if (!Number.isInteger(n) || n < 1) return "must be a whole number of at least 1";
  if (n > MAX_REPEAT) return `must be at most ${MAX_REPEAT} attempts per case`;
  return undefined;
}

/*
 * Option values as a user types them. The CLI's flags, the action's inputs and the bot's
 * `/evalgate run` commands parse them alike and fail with the same words; `name` is how the user
 * wrote the option (`--shard`, `input shard`).
 */

export function parsePositiveInt(value: string, name: string): number {
  const n = Number(value.trim());
  if (!value.trim() || !Number.isInteger(n) || n < 1)
    throw new UsageError(`${name} must be a whole number of at least 1 (got ${JSON.stringify(value)})`);
  return n;
}

/**
 * `--repeat N` (fixed) or `--repeat MIN..MAX` (adaptive attempts), each a whole number in
 * 1..{@link MAX_REPEAT}.
 */
export function parseRepeat(value: string, name: string): number | { min: number; max: number } {
  const m = /^\s*(\d+)\s*\.\.\s*(\d+)\s*$/.exec(value);
  const checked = (n: number) => {
    const why = repeatProblem(n);
    if (why) throw new UsageError(`${name} ${why} (got ${JSON.stringify(value)})`);
    return n;
  };
  if (!m) return checked(parsePositiveInt(value, name));
  const min = checked(Number(m[1]));
  const max = checked(Number(m[2]));
  if (max < min)
    throw new UsageError(`${name} MIN..MAX needs 1 <= MIN <= MAX, e.g. 3..10 (got ${JSON.stringify(value)})`);
  return { min, max };
}

/** `--concurrency N` / input `concurrency`: a whole number in 1..{@link MAX_CONCURRENCY}. */
export function parseConcurrency(value: string, name: string): number {
  const n = parsePositiveInt(value, name);
  if (n > MAX_CONCURRENCY)
    throw new UsageError(`${name} must be at most ${MAX_CONCURRENCY} (got ${JSON.stringify(value)})`);
  return n;
}

export function parseShard(value: string, name: string): { index: number; total: number } {
  const m = /^(\d+)\/(\d+)$/.exec(value.trim());
  const index = Number(m?.[1]);
  const total = Number(m?.[2]);
  if (!m || total < 1 || index < 1 || index > total) {
    throw new UsageError(`${name} takes I/N with 1 <= I <= N, e.g. 2/4 (got ${JSON.stringify(value)})`);
  }
  return { index, total };
}

/** Items separated by commas or new lines, trimmed, empty ones dropped. */
export function splitList(value: string): string[] {
  return value
    .split(/[,\n]/)
    .map((v) => v.trim())
    .filter(Boolean);
}
