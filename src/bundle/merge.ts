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
import { ISOLATION_LEVELS, type IsolationLevel, weakerLevel } from "../sandbox/isolation.js";
import { openRows } from "../sandbox/threat-model.js";
import { comparisonSummary } from "./compare.js";
import type { BaseHistory } from "./history.js";
import { mergedGateCase } from "./merge-decide.js";
import { type Bundle, BundleError, confinedPath, readBundle, readCaseSummary, rowKey } from "./read.js";
import { historyForSuites } from "./suites.js";
import { buildSummary, examCounted, isProposed, rootsOf } from "./summary.js";
import {
  type WireCaseSummary,
  type WireContainerIsolation,
  type WireEval,
  type WireIndexRow,
  type WireIsolation,
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
  // A baseline of other suites is not compared; one of some of the same is, over those.
  const suites = [...new Set(shards.flatMap((b) => b.summary.evals.map((e) => e.eval_path)))];
  const fitted = opts.history ? historyForSuites(opts.history, suites) : undefined;

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
  const interrupted = shards
    .filter((b) => b.summary.status === "interrupted")
    .map((b) => `${b.summary.run.shard!.index}/${b.summary.run.shard!.total}`);
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
      ...(interrupted.length > 0
        ? {
            interrupted: `the run was interrupted: shard${interrupted.length > 1 ? "s" : ""} ${interrupted.join(", ")} stopped before every attempt ran`,
          }
        : {}),
    },
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
  await writeFile(
    path.join(out, "index.jsonl"),
    rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length ? "\n" : ""),
  );
  await writeJson(path.join(out, "summary.json"), summary);
  return { out, summary, rows, caseSummaries, ...(fitted?.note ? { baselineNote: fitted.note } : {}) };
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

const isLevel = (v: unknown): v is IsolationLevel =>
  typeof v === "string" && (ISOLATION_LEVELS as readonly string[]).includes(v);

/**
 * What the agents of the whole run ran under: the weakest level of the shards, each target at its
 * weakest, with the reasons of the shards at that level (docs/decisions/0130). A shard is an
 * artifact, so its `isolation` is read field by field: one that does not say (an older evalgate)
 * or says something unknown counts as `none`, never as isolated. Undefined when no shard says.
 */
export function mergedIsolation(shards: readonly Bundle[]): WireIsolation | undefined {
  if (!shards.some((b) => b.summary.isolation)) return undefined;
  const parts = shards.map((b) => {
    const name = b.summary.run.shard
      ? `shard ${b.summary.run.shard.index}/${b.summary.run.shard.total}`
      : b.dir;
    const iso = b.summary.isolation as Partial<Record<keyof WireIsolation, unknown>> | undefined;
    const unknown = {
      level: "none" as IsolationLevel,
      reason: `${name} does not say what its agents ran under`,
    };
    if (!iso || typeof iso !== "object") return { name, ...unknown, targets: [] };
    const targets = (Array.isArray(iso.targets) ? iso.targets : []).flatMap((t: unknown) => {
      const x = (t && typeof t === "object" ? t : {}) as Record<string, unknown>;
      if (typeof x.name !== "string") return [];
      const level = isLevel(x.level) ? x.level : "none";
      const reason = isLevel(x.level) ? (typeof x.reason === "string" ? x.reason : null) : unknown.reason;
      return [{ name: x.name, level, reason }];
    });
    if (iso.level === null) return { name, level: null, reason: null, targets };
    if (!isLevel(iso.level)) return { name, ...unknown, targets };
    return { name, level: iso.level, reason: typeof iso.reason === "string" ? iso.reason : null, targets };
  });
  const byTarget = new Map<string, WireIsolation["targets"][number]>();
  for (const p of parts) {
    for (const t of p.targets) {
      const seen = byTarget.get(t.name);
      if (!seen || weakerLevel(seen.level, t.level) !== seen.level) byTarget.set(t.name, t);
    }
  }
  const levels = parts.flatMap((p) => (p.level ? [p.level] : []));
  const containers = mergedContainers(shards);
  if (levels.length === 0) {
    return {
      level: null,
      reason:
        containers.length > 0
          ? "every agent runs in its case's container (isolation.containers)"
          : "no target runs an agent program",
      targets: [...byTarget.values()],
      ...(containers.length > 0 ? { containers } : {}),
    };
  }
  const level = levels.reduce(weakerLevel);
  const weakest = parts.filter((p) => p.level === level);
  // What any shard left open, as it says, or by its level (an older evalgate).
  const gaps = new Set<string>();
  shards.forEach((b, i) => {
    const said = (b.summary.isolation as { gaps?: unknown } | undefined)?.gaps;
    const lvl = parts[i]!.level;
    if (Array.isArray(said)) for (const g of said) if (typeof g === "string") gaps.add(g);
    if (!Array.isArray(said) && lvl) for (const r of openRows(lvl)) gaps.add(r.open);
  });
  const reasons = [...new Set(weakest.map((p) => p.reason).filter((r): r is string => r !== null))];
  const reason =
    reasons.length === 0
      ? null
      : reasons.length === 1
        ? reasons[0]!
        : weakest
            .filter((p) => p.reason !== null)
            .map((p) => `${p.name}: ${p.reason}`)
            .join("; ");
  return {
    level,
    reason,
    targets: [...byTarget.values()],
    ...(gaps.size > 0 ? { gaps: [...gaps] } : {}),
    ...(containers.length > 0 ? { containers } : {}),
  };
}

/** The shards' `isolation.containers`, row by row (an artifact: each field checked), cases summed. */
function mergedContainers(shards: readonly Bundle[]): WireContainerIsolation[] {
  const rows = new Map<string, WireContainerIsolation>();
  for (const b of shards) {
    const said = (b.summary.isolation as { containers?: unknown } | undefined)?.containers;
    if (!Array.isArray(said)) continue;
    for (const r of said as Record<string, unknown>[]) {
      const { target, engine, image, digest, cases } = r ?? {};
      if (![target, engine, image, digest].every((v) => typeof v === "string")) continue;
      if (typeof cases !== "number" || !Number.isInteger(cases) || cases < 0) continue;
      const key = JSON.stringify([target, engine, image, digest]);
      const row = rows.get(key);
      if (row) row.cases += cases;
      else rows.set(key, { target, engine, image, digest, cases } as WireContainerIsolation);
    }
  }
  return [...rows.values()];
}
