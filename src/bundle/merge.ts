/**
 * Shards of one run → one bundle. The gate is decided again over all cases, from each case's
 * tries (bundle/merge-decide.ts), so the merged verdict is the verdict the whole run would have had.
 */
import { constants } from "node:fs";
import { copyFile, lstat, mkdir, readdir, realpath, writeFile } from "node:fs/promises";
import path from "node:path";
import type { OptionNaming } from "../config/options.js";
import { UsageError } from "../errors.js";
import { decideRun } from "../gate/run.js";
import { isWithin } from "../paths.js";
import { comparisonSummary } from "./compare.js";
import type { BaseHistory } from "./history.js";
import { mergedGateCase } from "./merge-decide.js";
import { mergedIsolation, mergedSetupTrees } from "./merge-facts.js";
import { type Bundle, BundleError, confinedPath, readBundle, readCaseSummary, rowKey } from "./read.js";
import { historyForSuites } from "./suites.js";
import { buildSummary, examCounted, isProposed, type RunInfo, rootsOf } from "./summary.js";
import {
  type WireCaseSummary,
  type WireEval,
  type WireIndexRow,
  type WireSummary,
  wireAdmission,
  wireChange,
} from "./wire.js";
import { checkNewBundleFolder, writeJson } from "./write.js";

export interface MergeOptions {
  bundles: string[];
  out: string;
  /** The base runs to compare the merged cases with (the pooled baseline). */
  history?: BaseHistory;
  runId: string;
  version: string;
  /** How the edge that asked for the merge spells `out` and `shard`, for its messages. */
  naming: OptionNaming;
  /** Cases left out of the gate (quarantined), as a run leaves them out (RunOptions.gateExclude). */
  gateExclude?: (row: WireIndexRow) => boolean;
}

/** Checks that `shards` are the complete, distinct shards of one run. */
export function checkShards(shards: readonly Bundle[], naming: OptionNaming): void {
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

/**
 * Reads every shard; when some cannot be trusted, says so for each of them, in the order given
 * (not the order their checks happened to finish in).
 */
async function readShards(dirs: readonly string[]): Promise<Bundle[]> {
  const read = await Promise.allSettled(dirs.map((b) => readBundle(b)));
  const failed = read.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  if (failed.length === 1 || failed.some((e) => !(e instanceof BundleError))) throw failed[0];
  if (failed.length > 0) throw new BundleError(failed.map((e) => (e as Error).message).join("\n"));
  return read.map((r) => (r as PromiseFulfilledResult<Bundle>).value);
}

/**
 * Writes the merged bundle's data (the shards' case folders, index.jsonl, summary.json) into
 * `opts.out` and returns it, with every case's summary.json (checked) in row order; its reports and
 * seal are written by the caller (pipeline/merge.ts).
 */
export async function mergeShards(opts: MergeOptions): Promise<{
  out: string;
  summary: WireSummary;
  rows: WireIndexRow[];
  caseSummaries: WireCaseSummary[];
  /** How the baseline's suites fit the shards' (compared over some, or not at all), when they differ. */
  baselineNote?: string;
}> {
  if (opts.bundles.length === 0) throw new UsageError("merge needs at least one bundle");
  const shards = await readShards(opts.bundles);
  checkShards(shards, opts.naming);
  const out = path.resolve(opts.out);
  await checkNewBundleFolder(out, opts.out, opts.naming);
  await mkdir(out, { recursive: true });

  const { rows, owner } = await copiedRows(shards, out);
  // A baseline of other suites is not compared; one of some of the same is, over those.
  const suites = [...new Set(shards.flatMap((b) => b.summary.evals.map((e) => e.eval_path)))];
  const fitted = opts.history ? historyForSuites(opts.history, suites) : undefined;

  const evals = mergedEvals(shards, rows);
  const budgetStops = new Map<string, string>();
  for (const b of shards)
    for (const s of b.summary.gate.budget_stops ?? []) budgetStops.set(s.eval_path, s.reason);

  const first = shards[0]!.summary;
  // Decided as a run decides: each case from its tries, then the run gate over every case.
  const history = fitted?.history;
  const caseSummaries = await Promise.all(rows.map((r) => readCaseSummary(owner.get(rowKey(r))!, r)));
  const onInconclusive = new Map(evals.map((e) => [e.eval_path, e.on_inconclusive ?? "warn"] as const));
  const cases = rows.map((r, i) =>
    mergedGateCase(
      r,
      caseSummaries[i]!,
      history?.of(rowKey(r), r.history_key ?? null),
      onInconclusive.get(r.root_eval_path),
    ),
  );
  // Against a base, each row's change and admission are the merge's, over the case's history.
  if (history)
    rows.forEach((r, i) => {
      r.change = wireChange(cases[i]!.change!);
      if (cases[i]!.admission) r.admission = wireAdmission(cases[i]!.admission!);
    });
  // Proposed cases (new in the pull request, docs/exam.md) ran and are reported, but never gate;
  // nor do quarantined ones.
  const exclude = opts.gateExclude;
  const gate = decideRun(
    rootsOf(evals),
    cases.filter((_, i) => !isProposed(rows[i]!) && !exclude?.(rows[i]!)),
    budgetStops,
  );
  const hadComparison = shards.some((b) => b.summary.comparison);
  const summary = buildSummary(
    mergedRunInfo(shards, opts),
    evals,
    rows,
    gate,
    budgetStops,
    history?.newest
      ? comparisonSummary(history.newest, rows, false, history.bundles.length)
      : hadComparison
        ? mergedComparison(shards, rows)
        : null,
    first.exam ? examCounted(first.exam, rows) : null,
  );
  const isolation = mergedIsolation(shards);
  if (isolation) summary.isolation = isolation;
  const trees = mergedSetupTrees(shards);
  if (trees) summary.setup_trees = trees;
  await writeFile(
    path.join(out, "index.jsonl"),
    rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length ? "\n" : ""),
  );
  await writeJson(path.join(out, "summary.json"), summary);
  return { out, summary, rows, caseSummaries, ...(fitted?.note ? { baselineNote: fitted.note } : {}) };
}

/** The merged run: its shards' span of time, the first shard's settings, and which shards were interrupted. */
function mergedRunInfo(shards: readonly Bundle[], opts: MergeOptions): RunInfo {
  const first = shards[0]!.summary;
  const interrupted = shards
    .filter((b) => b.summary.status === "interrupted")
    .map((b) => `${b.summary.run.shard!.index}/${b.summary.run.shard!.total}`);
  return {
    id: opts.runId,
    startedAt: new Date(Math.min(...shards.map((b) => Date.parse(b.summary.run.started_at)))),
    finishedAt: new Date(Math.max(...shards.map((b) => Date.parse(b.summary.run.finished_at)))),
    version: opts.version,
    concurrency: first.run.concurrency,
    repeatOverride: first.run.repeat_override ?? undefined,
    filters: first.run.filters,
    git: first.git,
    mergedFrom: shards.map((b) => b.summary.run.id),
    ...(interrupted.length > 0
      ? {
          interrupted: `the run was interrupted: shard${interrupted.length > 1 ? "s" : ""} ${interrupted.join(", ")} stopped before every attempt ran`,
        }
      : {}),
  };
}

/**
 * Every shard's index rows, in key order, each case's result folder copied into `out`; with the
 * shard folder each case came from. A case in two shards is refused.
 */
async function copiedRows(
  shards: readonly Bundle[],
  out: string,
): Promise<{ rows: WireIndexRow[]; owner: Map<string, string> }> {
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
      await copyResultDir(b.dir, r.result_dir, out);
      rows.push({ ...r });
    }
  }
  rows.sort((a, b) => (rowKey(a) < rowKey(b) ? -1 : rowKey(a) > rowKey(b) ? 1 : 0));
  return { rows, owner };
}

/** The shards' eval files, each once, with its cases counted over every shard. */
function mergedEvals(shards: readonly Bundle[], rows: readonly WireIndexRow[]): WireEval[] {
  const evalsByPath = new Map<string, WireEval>();
  for (const b of shards)
    for (const e of b.summary.evals) if (!evalsByPath.has(e.eval_path)) evalsByPath.set(e.eval_path, e);
  return [...evalsByPath.values()].map((e) => ({
    ...e,
    cases: rows.filter((r) => r.root_eval_path === e.eval_path).length,
  }));
}

/**
 * Copies one case's result folder of a shard into the merged bundle: only folders and regular
 * files, from inside the shard to inside the output (index.jsonl is the shard's claim, not a path
 * to trust).
 */
async function copyResultDir(shardDir: string, rel: string, out: string): Promise<void> {
  const from = path.join(shardDir, rel);
  const to = path.join(out, rel);
  const shardReal = await realpath(shardDir);
  const fromReal = await realpath(from).catch(() => {
    throw new BundleError(`${shardDir}: the result folder ${rel} of index.jsonl is missing`);
  });
  if (!confinedPath(rel) || !isWithin(out, to) || !isWithin(shardReal, fromReal) || fromReal === shardReal)
    throw new BundleError(
      `${shardDir}/index.jsonl: result_dir ${JSON.stringify(rel)} leaves the bundle; refused`,
    );
  const copy = async (src: string, dest: string): Promise<void> => {
    const s = await lstat(src);
    if (s.isDirectory()) {
      await mkdir(dest, { recursive: true, mode: 0o755 });
      for (const name of await readdir(src)) await copy(path.join(src, name), path.join(dest, name));
    } else if (s.isFile()) {
      await copyFile(src, dest, constants.COPYFILE_EXCL).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
        throw new BundleError(`${path.relative(out, dest)} comes from two shards; refused`);
      });
    } else {
      throw new BundleError(
        `${path.relative(shardDir, src)} in ${shardDir} is not a folder or a regular file; a bundle holds only those`,
      );
    }
  };
  await copy(from, to);
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
