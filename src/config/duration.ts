/** Durations as users write them: "90s", "20m", "1h", "1h30m", "500ms", or a number of seconds. */

export const DURATION_PATTERN = /^\s*(?:\d+(?:\.\d+)?\s*(?:ms|s|m|h)\s*)+$/;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * The range of every duration of an eval file: under a second is a typo (`0s`, `timeout: 1` meant as
 * minutes), and past a day Node's timers overflow (they hold at most 2^31-1 ms, about 24.8 days, and
 * fire at once beyond) while no CI job runs that long anyway.
 */
export const MIN_DURATION_MS = 1000;
export const MAX_DURATION_MS = 24 * 3_600_000;
export const DURATION_RANGE = "out of range: durations are between 1s and 24h";

/** Whether a duration that matches the pattern is within {@link MIN_DURATION_MS}..{@link MAX_DURATION_MS}. */
export function durationInRange(value: string | number): boolean {
  // Not a duration at all: the pattern's own message says so.
  if (typeof value === "string" ? !DURATION_PATTERN.test(value) : !(value > 0)) return true;
  const ms = parseDuration(value);
  return ms >= MIN_DURATION_MS && ms <= MAX_DURATION_MS;
}

/** Milliseconds for a duration; throws on text that does not match {@link DURATION_PATTERN}. */
export function parseDuration(value: string | number): number {
  if (typeof value === "number") return Math.round(value * 1000);
  if (!DURATION_PATTERN.test(value)) throw new Error(`not a duration: ${JSON.stringify(value)}`);
  let total = 0;
  for (const m of value.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|m|h)/g)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
  }
  return Math.round(total);
}

/** "6 m 12 s", "48 s", "1.2 s", "350 ms": a duration for people. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const totalSeconds = Math.round(ms / 1000);
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  if (h > 0) return `${h} h ${m} m`;
  if (m > 0) return `${m} m ${s} s`;
  return `${s} s`;
}
