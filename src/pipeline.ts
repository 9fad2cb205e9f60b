/**
 * The core both edges call: eval files → plan → attempts → verdicts → bundle.
 * The CLI and the action only build RunOptions and present the result.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { buildSummary } from "./bundle/summary.js";
import type { WireIndexRow, WireSummary } from "./bundle/wire.js";
import { BundleWriter, type FinishedCase } from "./bundle/write.js";
import { loadPlan, type PlanOptions } from "./config/plan.js";
import type { Plan } from "./config/types.js";
import { decideCase } from "./gate/case.js";
import { decideRun } from "./gate/run.js";
import type { Logger } from "./log.js";
import type { Progress } from "./report/console.js";
import { executePlan } from "./run/schedule.js";
import type { ProcessRunner } from "./sandbox/process.js";
import { VERSION } from "./version.js";
import { git } from "./workspace/git.js";

export interface RunOptions extends PlanOptions {
  /** The bundle folder. Default: .evalgate/results/<run_id> under cwd. */
  out?: string;
  /** Scratch folder for workspaces. Default: $RUNNER_TEMP or the system temp folder. */
  workDir?: string;
  keepWorkspaces?: boolean;
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
  const startedAt = new Date();
  const runId = newRunId(startedAt);
  const bundleDir = path.resolve(opts.cwd, opts.out ?? path.join(".evalgate", "results", runId));
  const workRoot = path.resolve(
    opts.workDir ?? path.join(process.env.RUNNER_TEMP || os.tmpdir(), `evalgate-${runId}`),
  );
  const bundle = new BundleWriter(bundleDir);
  await bundle.init();

  deps.progress.start(plan.cases.reduce((a, c) => a + c.repeat, 0));
  let runs: Awaited<ReturnType<typeof executePlan>>;
  try {
    runs = await executePlan({
      plan,
      workRoot,
      runner: deps.runner,
      keepWorkspaces: opts.keepWorkspaces ?? false,
      hooks: {
        evidenceDir: (spec, dirName) => bundle.evidenceDir(spec, dirName),
        attemptStarted: () => deps.progress.attemptStarted(),
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

  const finished: FinishedCase[] = runs.map((r) => ({
    spec: r.spec,
    tries: r.tries,
    decision: decideCase(r.tries, r.spec.repeat, r.spec.gate),
    onError: "fail",
    change: null,
  }));
  const gate = decideRun(
    plan.roots,
    finished.map((c) => ({
      identity: c.spec.identity,
      rootEvalPath: c.spec.rootEvalPath,
      suite: c.spec.suite,
      decision: c.decision,
    })),
  );
  const rows = await bundle.writeCases(finished);
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
  );
  await bundle.writeSummary(summary);
  return { runId, bundleDir, summary, rows, plan };
}
