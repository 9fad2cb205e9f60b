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
import { viewOfRecords } from "./report-view.js";

export type { MergeOptions };

export async function mergeBundles(
  opts: MergeOptions,
): Promise<{ summary: WireSummary; rows: WireIndexRow[]; view: ReportView; baselineNote?: string }> {
  const { out, rows, summary, caseSummaries, baselineNote } = await mergeShards(opts);
  // The view of the records as written, not read back; the action renders more from it (its comment).
  const view = await viewOfRecords(
    { dir: out, summary, cases: rows.map((row, i) => ({ row, summary: caseSummaries[i] })) },
    { evidence: "all" },
  );
  await writeReports(out, view);
  const sealed = await sealBundle(out);
  return { summary: sealed.summary, rows, view, ...(baselineNote ? { baselineNote } : {}) };
}
