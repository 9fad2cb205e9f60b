/**
 * The core both edges call: eval files → plan → attempts → verdicts → bundle.
 * The CLI and the action only build RunOptions and present the result.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type Bundle, BundleError, readBundle, rowKey } from "./bundle/read.js";
import { buildSummary } from "./bundle/summary.js";
import type { WireComparison, WireIndexRow, WireSummary } from "./bundle/wire.js";
import { BundleWriter, type FinishedCase } from "./bundle/write.js";
import { UsageError } from "./config/errors.js";
import { loadPlan, type PlanOptions } from "./config/plan.js";
import { identityKey, type Plan } from "./config/types.js";
import { decideCase } from "./gate/case.js";
import { compareCase } from "./gate/compare.js";
import { decideRun } from "./gate/run.js";
import type { Logger } from "./log.js";
import type { Progress } from "./report/console.js";
import { type ExecuteResult, executePlan } from "./run/schedule.js";
import type { ProcessRunner } from "./sandbox/process.js";
import { VERSION } from "./version.js";
import { git } from "./workspace/git.js";

export interface RunOptions extends PlanOptions {
  /** The bundle folder. Default: .evalgate/results/<run_id> under cwd. */
  out?: string;
  /** Scratch folder for workspaces. Default: $RUNNER_TEMP or the system temp folder. */
  workDir?: string;
  keepWorkspaces?: boolean;
  /** A baseline bundle folder to compare with (the base branch's run). */
  baseline?: string;
  /** The commit being evaluated (the action passes the PR head). Default: HEAD of projectRoot. */
  gitSha?: string;
}

export interface RunDeps {
  runner: ProcessRunner;
  progress: Progress;
  logger: Logger;
}

export interface RunOutcome {
  runId: string;
  bundleDir: string;
  summary: WireSummary;
  rows: WireIndexRow[];
  plan: Plan;
}

export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")
    .replace("T", "-");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

async function gitInfo(root: string, sha?: string): Promise<WireSummary["git"]> {
  if (!existsSync(root)) return null;
  try {
    const head = sha ?? (await git(["rev-parse", "HEAD"], { cwd: root })).trim();
    const branch = (await git(["rev-parse", "--abbrev-ref", "HEAD"], { cwd: root }).catch(() => "")).trim();
    const status = await git(["status", "--porcelain", "--untracked-files=no"], { cwd: root }).catch(
      () => "",
    );
    return {
      sha: head,
      branch: branch && branch !== "HEAD" ? branch : null,
      dirty: status.trim().length > 0,
    };
  } catch {
    return sha ? { sha, branch: null, dirty: null } : null;
  }
}

export async function runEvals(opts: RunOptions, deps: RunDeps): Promise<RunOutcome> {
  const plan = await loadPlan(opts);
  for (const note of plan.notes) deps.logger.info(`note: ${note}`);
  const baseline = opts.baseline ? await readBaseline(opts.baseline) : undefined;
  const startedAt = new Date();
  const runId = newRunId(startedAt);
  const bundleDir = path.resolve(opts.cwd, opts.out ?? path.join(".evalgate", "results", runId));
  const workRoot = path.resolve(
    opts.workDir ?? path.join(process.env.RUNNER_TEMP || os.tmpdir(), `evalgate-${runId}`),
  );
  const bundle = new BundleWriter(bundleDir);
  await bundle.init();

  deps.progress.start(plan.cases.reduce((a, c) => a + c.repeat, 0));
  let executed: ExecuteResult;
  try {
    executed = await executePlan({
      plan,
      workRoot,
      runner: deps.runner,
      keepWorkspaces: opts.keepWorkspaces ?? false,
      hooks: {
        evidenceDir: (spec, dirName) => bundle.evidenceDir(spec, dirName),
        attemptStarted: () => deps.progress.attemptStarted(),
        retryPlanned: () => deps.progress.addPlanned(1),
        attemptFinished: async (spec, r) => {
          await bundle.writeAttempt(
            spec,
            r,
            existsSync(path.join(bundle.evidenceDir(spec, r.dirName), "setup.log")),
          );
          deps.progress.attemptFinished({
            suite: spec.suite,
            testId: spec.test.id,
            target: spec.target.name,
            attempt: r.attempt,
            repeat: spec.repeat,
            retry: r.retry,
            status: r.status,
            durationMs: r.durationMs,
            message: r.message,
            score: r.grading?.score ?? null,
          });
        },
      },
    });
  } finally {
    deps.progress.stop();
    if (!opts.keepWorkspaces) await rm(workRoot, { recursive: true, force: true }).catch(() => undefined);
  }
  if (opts.keepWorkspaces) deps.logger.info(`workspaces kept in ${workRoot}`);

  const baseRows = new Map((baseline?.rows ?? []).map((r) => [rowKey(r), r]));
  const finished: FinishedCase[] = executed.runs.map((r) => {
    const decision = decideCase(r.tries, r.spec.repeat, r.spec.gate);
    const base = baseRows.get(identityKey(r.spec.identity));
    const change = baseline
      ? compareCase(
          base && { verdict: base.verdict, counted: base.attempts.counted, passed: base.attempts.passed },
          { verdict: decision.verdict, counted: decision.counts.counted, passed: decision.counts.passed },
        )
      : null;
    return { spec: r.spec, tries: r.tries, decision, change };
  });
  const gate = decideRun(
    plan.roots,
    finished.map((c) => ({
      identity: c.spec.identity,
      rootEvalPath: c.spec.rootEvalPath,
      suite: c.spec.suite,
      decision: c.decision,
      change: c.change,
    })),
    executed.budgetStops,
  );
  const rows = await bundle.writeCases(finished);
  const filtered = Boolean(opts.targets?.length || opts.tests?.length || opts.tags?.length);
  const summary = buildSummary(
    {
      id: runId,
      startedAt,
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
    },
    plan.roots,
    finished,
    gate,
    baseline ? summarizeComparison(baseline, finished, filtered) : null,
  );
  await bundle.writeSummary(summary);
  return { runId, bundleDir, summary, rows, plan };
}

async function readBaseline(dir: string): Promise<Bundle> {
  try {
    return await readBundle(dir);
  } catch (error) {
    if (error instanceof BundleError) throw new UsageError(`--baseline: ${error.message}`);
    throw error;
  }
}

/** Counts of changes, and the baseline's cases this run no longer has. */
export function summarizeComparison(
  baseline: Bundle,
  finished: readonly FinishedCase[],
  filtered: boolean,
): WireComparison {
  const count = (k: string) => finished.filter((c) => c.change?.change === k).length;
  const here = new Set(finished.map((c) => identityKey(c.spec.identity)));
  const evalPaths = new Set(finished.map((c) => c.spec.identity.evalPath));
  const removed = filtered
    ? []
    : baseline.rows.filter((r) => evalPaths.has(r.eval_path) && !here.has(rowKey(r)));
  return {
    baseline_run_id: baseline.summary.run.id,
    baseline_git_sha: baseline.summary.git?.sha ?? null,
    regressed: count("regressed"),
    improved: count("improved"),
    unchanged: count("unchanged"),
    new: count("new"),
    removed: removed.length,
    significant: finished.filter((c) => c.change?.significant).length,
    removed_cases: removed.map((r) => ({
      eval_path: r.eval_path,
      test_id: r.test_id,
      target: r.target,
      suite: r.suite,
      base_verdict: r.verdict,
    })),
  };
}
