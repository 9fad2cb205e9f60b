/**
 * A bundle's time per case, for balancing shards by time (run/shard.ts): the bundle is read here,
 * at the data's edge, so the run stage is handed plain numbers and never reads a bundle itself.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../paths.js";
import type { Durations } from "../run/shard.js";
import { type Bundle, rowKey } from "./read.js";

/**
 * The bundle's time per case: the sum of its attempts' durations, read from each case's
 * summary.json. A case whose summary cannot be read (or lies outside the bundle) has no duration.
 */
export async function caseDurations(bundle: Bundle): Promise<Durations> {
  const out = new Map<string, number>();
  const root = path.resolve(bundle.dir);
  await Promise.all(
    bundle.rows.map(async (row) => {
      const file = path.resolve(root, row.summary_path);
      if (!isWithin(root, file)) return;
      try {
        const summary = JSON.parse(await readFile(file, "utf8")) as { runs?: { duration_ms?: unknown }[] };
        const ms = (summary.runs ?? [])
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
