/**
 * Shards of one run → one bundle. The gate is decided again over all cases, so the merged verdict
 * is the verdict the whole run would have had.
 */
import { cp, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { CLI_NAMING, type OptionNaming } from "../config/args.js";
import { UsageError } from "../config/errors.js";
import type { ReportView } from "../report/view.js";
import { applyBaseline, comparisonSummary } from "./compare.js";
import { type Bundle, readBundle, rowKey } from "./read.js";
import { writeReports } from "./reports.js";
import { buildSummary, gateFromRows, type WireEval } from "./summary.js";
import type { WireIndexRow, WireSummary } from "./wire.js";
import { checkNewBundleFolder, writeJson } from "./write.js";

export interface MergeOptions {
  bundles: string[];
  out: string;
  baseline?: Bundle;
  runId: string;
  version: string;
  /** How the user spelled `out` and `shard` (default: the CLI's flags). */
  naming?: OptionNaming;
}

/** Checks that `shards` are the complete, distinct shards of one run. */
export function checkShards(shards: readonly Bundle[], naming: OptionNaming = CLI_NAMING): void {
  const totals = new Set(shards.map((b) => b.summary.run.shard?.total ?? null));
  const unsharded = shards.filter((b) => !b.summary.run.shard);
  if (unsharded.length > 0) {
    throw new UsageError(
      `${unsharded.map((b) => b.dir).join(", ")}: not a shard (run with ${naming.given("shard", "I/N")})`,
    );
  }
  if (totals.size > 1)
    throw new UsageError(`the bundles are shards of different splits (${[...totals].join(", ")} shards)`);
  const total = shards[0]!.summary.run.shard!.total;
  const seen = new Map<number, string>();
  for (const b of shards) {
    const i = b.summary.run.shard!.index;
    if (seen.has(i)) throw new UsageError(`shard ${i}/${total} appears twice: ${seen.get(i)} and ${b.dir}`);
    seen.set(i, b.dir);
  }
  const missing = Array.from({ length: total }, (_, i) => i + 1).filter((i) => !seen.has(i));
  if (missing.length > 0) {
    throw new UsageError(
      `shard${missing.length > 1 ? "s" : ""} ${missing.map((i) => `${i}/${total}`).join(", ")} missing: a merged verdict needs every shard`,
    );
  }
  const shas = new Set(shards.map((b) => b.summary.git?.sha ?? null));
  if (shas.size > 1)
    throw new UsageError(`the shards were run on different commits (${[...shas].join(", ")})`);
}

export async function mergeBundles(
  opts: MergeOptions,
): Promise<{ summary: WireSummary; rows: WireIndexRow[]; view: ReportView }> {
  if (opts.bundles.length === 0) throw new UsageError("merge needs at least one bundle");
  const shards = await Promise.all(opts.bundles.map((b) => readBundle(b)));
  checkShards(shards, opts.naming);
  const out = path.resolve(opts.out);
  await checkNewBundleFolder(out, opts.out, opts.naming);
  await mkdir(out, { recursive: true });

  const rows: WireIndexRow[] = [];
  const owner = new Map<string, string>();
  for (const b of shards) {
    for (const r of b.rows) {
      const key = rowKey(r);
      if (owner.has(key)) {
        throw new UsageError(
          `case ${r.test_id} on ${r.target} (${r.eval_path}) is in two shards: ${owner.get(key)} and ${b.dir}`,
        );
      }
      owner.set(key, b.dir);
      await cp(path.join(b.dir, r.result_dir), path.join(out, r.result_dir), { recursive: true });
      rows.push({ ...r });
    }
  }
  rows.sort((a, b) => (rowKey(a) < rowKey(b) ? -1 : rowKey(a) > rowKey(b) ? 1 : 0));
  if (opts.baseline) applyBaseline(rows, opts.baseline);

  const evalsByPath = new Map<string, WireEval>();
  for (const b of shards)
    for (const e of b.summary.evals) if (!evalsByPath.has(e.eval_path)) evalsByPath.set(e.eval_path, e);
  const evals = [...evalsByPath.values()].map((e) => ({
    ...e,
    cases: rows.filter((r) => r.root_eval_path === e.eval_path).length,
  }));
  const budgetStops = new Map<string, string>();
  for (const b of shards)
    for (const s of b.summary.gate.budget_stops ?? []) budgetStops.set(s.eval_path, s.reason);

  const first = shards[0]!.summary;
  const started = Math.min(...shards.map((b) => Date.parse(b.summary.run.started_at)));
  const finished = Math.max(...shards.map((b) => Date.parse(b.summary.run.finished_at)));
  const gate = gateFromRows(evals, rows, budgetStops);
  const hadComparison = shards.some((b) => b.summary.comparison);
  const summary = buildSummary(
    {
      id: opts.runId,
      startedAt: new Date(started),
      finishedAt: new Date(finished),
      version: opts.version,
      concurrency: first.run.concurrency,
      repeatOverride: first.run.repeat_override ?? undefined,
      filters: first.run.filters,
      git: first.git,
      mergedFrom: shards.map((b) => b.summary.run.id),
    },
    evals,
    rows,
    gate,
    budgetStops,
    opts.baseline
      ? comparisonSummary(opts.baseline, rows, false)
      : hadComparison
        ? mergedComparison(shards, rows)
        : null,
  );
  await writeFile(
    path.join(out, "index.jsonl"),
    rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length ? "\n" : ""),
  );
  await writeJson(path.join(out, "summary.json"), summary);
  // The view the reports were rendered from, to render more from (the action's comment).
  const { view } = await writeReports(out);
  return { summary, rows, view };
}

/** Without a new baseline, the shards' own comparisons add up (none of them can know removals). */
function mergedComparison(
  shards: readonly Bundle[],
  rows: readonly WireIndexRow[],
): WireSummary["comparison"] {
  const first = shards.find((b) => b.summary.comparison)!.summary.comparison!;
  const count = (k: string) => rows.filter((r) => r.change?.change === k).length;
  return {
    ...first,
    regressed: count("regressed"),
    improved: count("improved"),
    unchanged: count("unchanged"),
    new: count("new"),
    removed: 0,
    significant: rows.filter((r) => r.change?.significant).length,
    removed_cases: [],
  };
}
