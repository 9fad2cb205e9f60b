/**
 * Option values a user types, shared by both edges: the CLI's flags and the action's inputs parse
 * them the same way and fail with the same words. `name` is how the user wrote the option
 * (`--shard`, `shard`).
 */
import { MAX_CONCURRENCY, type OptionNaming, repeatProblem } from "../config/options.js";
import { UsageError } from "../errors.js";

export const CLI_NAMING: OptionNaming = {
  given: (option, value) => `--${option} ${value}`,
  filters: "the --target / --test / --tag filters",
};

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
