/** Durations as users write them: "90s", "20m", "1h", "1h30m", "500ms", or a number of seconds. */

export const DURATION_PATTERN = /^\s*(?:\d+(?:\.\d+)?\s*(?:ms|s|m|h)\s*)+$/;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

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
