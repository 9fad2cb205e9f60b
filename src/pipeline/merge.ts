/**
 * `evalgate merge` and the action's merge: the shards' bundles → one bundle with its reports and
 * seal. The merge is the only place a sharded run is gated (bundle/merge.ts decides it over all
 * cases).
 */
import { type MergeOptions, mergeShards } from "../bundle/merge.js";
import { sealBundle } from "../bundle/seal.js";
import type { WireIndexRow, WireSummary } from "../bundle/wire.js";
import type { ReportView } from "../report/view.js";
import { writeReports } from "./outputs.js";

export type { MergeOptions };

export async function mergeBundles(
  opts: MergeOptions,
): Promise<{ summary: WireSummary; rows: WireIndexRow[]; view: ReportView }> {
  const { out, rows } = await mergeShards(opts);
  // The view the reports were rendered from, to render more from (the action's comment).
  const { view } = await writeReports(out);
  const sealed = await sealBundle(out);
  return { summary: sealed.summary, rows, view };
}
