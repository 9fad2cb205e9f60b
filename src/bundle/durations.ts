/**
 * A bundle's time per case, for balancing shards by time (run/shard.ts): the bundle is read here,
 * at the data's edge, so the run stage is handed plain numbers and never reads a bundle itself.
 */
import type { Durations } from "../run/shard.js";
import { type Bundle, readCaseSummary, rowKey } from "./read.js";

/**
 * The bundle's time per case: the sum of its attempts' durations, read from each case's
 * summary.json through the confined reader and checked against its schema (a baseline is a
 * downloaded artifact). A case whose summary cannot be read or checked has no duration.
 */
export async function caseDurations(bundle: Bundle): Promise<Durations> {
  const out = new Map<string, number>();
  await Promise.all(
    bundle.rows.map(async (row) => {
      try {
        const summary = await readCaseSummary(bundle.dir, row);
        const ms = summary.runs
          .map((r) => r.duration_ms)
          .filter((d): d is number => typeof d === "number" && Number.isFinite(d) && d >= 0);
        if (ms.length)
          out.set(
            rowKey(row),
            ms.reduce((a, d) => a + d, 0),
          );
      } catch {
        // No duration for this case: it counts as the mean.
      }
    }),
  );
  return out;
}
