/**
 * What a run leaves: each attempt's records as it finishes (attemptHooks), then, once its attempts
 * are done: the case summaries, index.jsonl and summary.json
 * (the gate decided from the in-memory results), the report files comment.md (the PR comment),
 * report.html and junit.xml, written at the end of every run and merge, and last the seal. The action rewrites comment.md from the returned view
 * with links once it knows the workflow run and the artifact, so comment.md is the comment as posted.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { comparisonSummary } from "../bundle/compare.js";
import type { BaseHistory } from "../bundle/history.js";
import { sealBundle } from "../bundle/seal.js";
import { buildSummary, type SetupTreeMode, wireEvals, wireExam, wireSetupTrees } from "../bundle/summary.js";
import type { WireIndexRow, WireIsolation, WireSummary } from "../bundle/wire.js";
import type { BundleWriter, FinishedCase } from "../bundle/write.js";
import type { Plan } from "../config/types.js";
import type { Logger } from "../log.js";
import { COMMENT_MAX_CHARS, type CommentOptions, renderComment } from "../report/comment.js";
import type { Progress } from "../report/console.js";
import { renderHtml } from "../report/html.js";
import { renderJUnit } from "../report/junit.js";
import type { ReportView } from "../report/view.js";
import type { RunHooks } from "../run/schedule.js";
import type { AttemptResult } from "../run/types.js";
import type { RunIsolation } from "../sandbox/isolation.js";
import { openRows } from "../sandbox/threat-model.js";
import { VERSION } from "../version.js";
import { git } from "../workspace/git.js";
import { foreignRepoArgs } from "../workspace/git-guard.js";
import { decideRunGate } from "./decide.js";
import { containerIsolation } from "./isolation.js";
import { viewOfRecords } from "./report-view.js";
import type { RunOptions } from "./run.js";

export const REPORT_FILES = { comment: "comment.md", html: "report.html", junit: "junit.xml" } as const;

export interface WrittenReports {
  /** The view the files were rendered from (every case's evidence loaded): render more from it. */
  view: ReportView;
  /** comment.md's text. */
  comment: string;
  /** Absolute paths of the files written. */
  files: { comment: string; html: string; junit: string };
}

/**
 * Renders `view` (every case's evidence loaded) into comment.md, report.html and junit.xml in the
 * bundle. `comment` defaults to key "default" and 65,536 characters.
 */
export async function writeReports(
  bundleDir: string,
  view: ReportView,
  comment: Partial<CommentOptions> = {},
): Promise<WrittenReports> {
  const dir = path.resolve(bundleDir);
  const text = renderComment(view, { key: "default", maxChars: COMMENT_MAX_CHARS, ...comment });
  const files = {
    comment: path.join(dir, REPORT_FILES.comment),
    html: path.join(dir, REPORT_FILES.html),
    junit: path.join(dir, REPORT_FILES.junit),
  };
  await writeFile(files.comment, text);
  await writeFile(files.html, renderHtml(view));
  await writeFile(files.junit, renderJUnit(view));
  return { view, comment: text, files };
}

async function gitInfo(root: string, sha?: string): Promise<WireSummary["git"]> {
  if (!existsSync(root)) return null;
  try {
    const head = sha ?? (await git(["rev-parse", "HEAD"], { cwd: root })).trim();
    const branch = (await git(["rev-parse", "--abbrev-ref", "HEAD"], { cwd: root }).catch(() => "")).trim();
    // An agent outside bubblewrap could have written the repository's configuration: its filters
    // are switched off (hooks and the file-system monitor are for every git evalgate runs).
    const status = await foreignRepoArgs(root)
      .then((off) => git([...off, "status", "--porcelain", "--untracked-files=no"], { cwd: root }))
      .catch(() => "");
    return {
      sha: head,
      branch: branch && branch !== "HEAD" ? branch : null,
      dirty: status.trim().length > 0,
    };
  } catch {
    return sha ? { sha, branch: null, dirty: null } : null;
  }
}

export interface RunOutputs {
  bundle: BundleWriter;
  plan: Plan;
  opts: Omit<RunOptions, "paths">;
  finished: readonly FinishedCase[];
  budgetStops: ReadonlyMap<string, string>;
  /** The base runs compared with (the pooled baseline). */
  history?: BaseHistory;
  isolation: RunIsolation;
  runId: string;
  startedAt: Date;
  /** The signal that interrupted the run, if one did. */
  stoppedBy?: string;
  logger: Logger;
}

/** What the scheduler tells the run's edge: each finished attempt is written to the bundle and shown as progress. */
export function attemptHooks(bundle: BundleWriter, progress: Progress): RunHooks {
  return {
    attemptsPlanned: (_spec, count) => progress.addAttempts(count),
    evidenceDir: (spec, dirName) => bundle.evidenceDir(spec, dirName),
    attemptStarted: () => progress.attemptStarted(),
    retryPlanned: () => progress.addPlanned(1),
    attemptFinished: async (spec, raw) => {
      const r = await bundle.writeAttempt(
        spec,
        raw,
        existsSync(path.join(bundle.evidenceDir(spec, raw.dirName), "setup.log")),
      );
      progress.attemptFinished({
        suite: spec.suite,
        testId: spec.test.id,
        target: spec.target.name,
        attempt: r.attempt,
        repeat: spec.repeatMax ?? spec.repeat,
        retry: r.retry,
        status: r.status,
        durationMs: r.durationMs,
        message: r.message,
        score: r.grading?.score ?? null,
      });
    },
  };
}

/**
 * Writes the run's cases, summary.json, reports and seal into its bundle. The gate is decided
 * from the finished cases in memory; the quarantine (`gateExclude`) is asked about each case's
 * index row as written.
 */
export async function writeRunOutputs(
  o: RunOutputs,
): Promise<{ summary: WireSummary; rows: WireIndexRow[]; view: ReportView }> {
  const { plan, opts, finished, budgetStops } = o;
  const baseline = o.history?.newest;
  const { rows, summaries } = await o.bundle.writeCases(finished);
  const exclude = opts.gateExclude;
  // writeCases writes one row per case, in order.
  const excluded = new Set(exclude ? finished.filter((_, i) => exclude(rows[i]!)) : []);
  const gate = decideRunGate(plan, finished, budgetStops, (c) => excluded.has(c));
  const evals = wireEvals(plan.roots, rows);
  const filtered = Boolean(opts.targets?.length || opts.tests?.length || opts.tags?.length || opts.shard);
  const tries = finished.flatMap((c) => c.tries);
  const done = tries.filter((t) => t.failureKind !== "cancelled").length;
  const built = buildSummary(
    {
      id: o.runId,
      startedAt: o.startedAt,
      finishedAt: new Date(),
      version: VERSION,
      concurrency: plan.concurrency,
      repeatOverride: opts.repeat,
      filters: {
        targets: [...(opts.targets ?? [])],
        tests: [...(opts.tests ?? [])],
        tags: [...(opts.tags ?? [])],
      },
      git: await gitInfo(plan.projectRoot, opts.gitSha),
      ...(opts.shard ? { shard: opts.shard } : {}),
      ...(o.stoppedBy
        ? {
            interrupted: `the run was interrupted (${o.stoppedBy}): ${done} of ${tries.length} attempts finished`,
          }
        : {}),
    },
    evals,
    rows,
    gate,
    budgetStops,
    baseline ? comparisonSummary(baseline, rows, filtered, o.history?.bundles.length) : null,
    plan.exam ? wireExam(plan.exam, rows, opts.quarantineChanges) : null,
  );
  const gaps = o.isolation.level
    ? openRows(o.isolation.level, o.isolation.commandsLevel).map((r) => r.open)
    : [];
  const containers = containerIsolation(finished);
  built.isolation = {
    level: o.isolation.level,
    reason: o.isolation.reason,
    targets: o.isolation.targets.map((t) => ({ name: t.name, level: t.level, reason: t.reason })),
    ...(gaps.length > 0 ? { gaps } : {}),
    ...(containers.length > 0 ? { containers } : {}),
  } satisfies WireIsolation;
  const trees = setupTreesSummary(tries);
  if (trees) built.setup_trees = trees;
  const summary = await o.bundle.writeSummary(built);
  // The view of the records as written (redacted), not read back: what `evalgate report` reads.
  const view = await viewOfRecords(
    { dir: o.bundle.dir, summary, cases: rows.map((row, i) => ({ row, summary: summaries[i] })) },
    { evidence: "all" },
  );
  await writeReports(o.bundle.dir, view);
  // Last: the digest of every file of the bundle, once every process of the run is gone.
  const sealed = await sealBundle(o.bundle.dir);
  for (const rel of sealed.removed)
    o.logger.warn(`removed ${rel} from the bundle: not a folder or a regular file, so not evalgate's`);
  return { summary: sealed.summary, rows, view };
}

/** How the attempts got what setup built (run/share.ts): each mode's count and why trees were copied. */
function setupTreesSummary(tries: readonly AttemptResult[]): WireSummary["setup_trees"] {
  const attempts: Partial<Record<SetupTreeMode, number>> = {};
  const reasons: string[] = [];
  for (const t of tries) {
    if (!t.setupTrees) continue;
    attempts[t.setupTrees.mode] = (attempts[t.setupTrees.mode] ?? 0) + 1;
    if (t.setupTrees.reason) reasons.push(t.setupTrees.reason);
  }
  return wireSetupTrees(attempts, reasons);
}
