/** How long each case of a bundle took: what balances the shards of the next run (run/shard.ts). */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../paths.js";
import { type Bundle, rowKey } from "./read.js";

/**
 * The baseline's time per case: the sum of its attempts' durations, read from each case's
 * summary.json. A case whose summary cannot be read (or lies outside the bundle) has no duration.
 */
export async function baselineDurations(bundle: Bundle): Promise<Map<string, number>> {
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
