/**
 * The core both edges call: eval files → plan → attempts → verdicts → bundle.
 * The CLI and the action only build RunOptions and present the result.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { comparisonSummary } from "./bundle/compare.js";
import { type Bundle, readBundleAs, rowKey } from "./bundle/read.js";
import { writeReports } from "./bundle/reports.js";
import { buildSummary, gateFromRows, wireEvals } from "./bundle/summary.js";
import type { WireIndexRow, WireSummary } from "./bundle/wire.js";
import { BundleWriter, checkNewBundleFolder, type FinishedCase } from "./bundle/write.js";
import { UsageError } from "./config/errors.js";
import { loadPlan, type PlanOptions } from "./config/plan.js";
import { identityKey, type Plan } from "./config/types.js";
import { decideCase } from "./gate/case.js";
import { compareCase } from "./gate/compare.js";
import type { Logger } from "./log.js";
import { installAgents } from "./providers/install.js";
import type { Progress } from "./report/console.js";
import type { ReportView } from "./report/view.js";
import { type ExecuteResult, executePlan } from "./run/schedule.js";
import { checkBwrap } from "./sandbox/bwrap.js";
import { type ProcessRunner, runnerWith } from "./sandbox/process.js";
import type { Redactor } from "./sandbox/redact.js";
import { runSecrets } from "./sandbox/secrets.js";
import { VERSION } from "./version.js";
import { git } from "./workspace/git.js";
import { tempRoot } from "./workspace/temp.js";

export interface RunOptions extends PlanOptions {
  /** The bundle folder. Default: .evalgate/results/<run_id> under cwd. */
  out?: string;
  /** Scratch folder for workspaces. Default: $RUNNER_TEMP or the system temp folder. */
  workDir?: string;
  keepWorkspaces?: boolean;
  /** Run only shard `index` of `total` (1-based): round-robin over the cases sorted by identity. */
  shard?: { index: number; total: number };
  /** A baseline bundle to compare with (the base branch's run): its folder, or the bundle already read. */
  baseline?: string | Bundle;
  /** The commit being evaluated (the action passes the PR head). Default: HEAD of projectRoot. */
  gitSha?: string;
  /** More values to redact like the plan's secrets: the action's GitHub token. */
  redact?: string[];
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
  /** Every case with its tries and verdict. */
  cases: FinishedCase[];
  /** The view the bundle's reports were rendered from (every case's evidence loaded). */
  view: ReportView;
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

/** Messages of evalgate itself, redacted like everything else it prints. */
function redactingLogger(logger: Logger, r: Redactor): Logger {
  if (!r.active) return logger;
  const wrapped: Logger = {
    info: (m) => logger.info(r.text(m)),
    warn: (m) => logger.warn(r.text(m)),
    error: (m) => logger.error(r.text(m)),
  };
  if (logger.group) wrapped.group = (title) => logger.group?.(r.text(title));
  if (logger.groupEnd) wrapped.groupEnd = () => logger.groupEnd?.();
  return wrapped;
}

export async function runEvals(opts: RunOptions, deps: RunDeps): Promise<RunOutcome> {
  const plan = shardPlan(await loadPlan({ ...opts, checkSecrets: true }), opts.shard);
  for (const note of plan.notes) deps.logger.info(`note: ${note}`);
  const given = opts.baseline || undefined;
  const baseline = typeof given === "string" ? await readBundleAs(given, "--baseline") : given;
  return runPlan(plan, opts, deps, baseline);
}

/**
 * Runs every attempt of a resolved plan and writes the bundle (`evalgate run`, `validate --solvable`).
 * Every secret of the plan is redacted from the console, the bundle and any error shown.
 */
export async function runPlan(
  plan: Plan,
  opts: Omit<RunOptions, "paths">,
  deps: RunDeps,
  baseline?: Bundle,
): Promise<RunOutcome> {
  const secrets = runSecrets(plan, process.env, opts.redact);
  const redactor = secrets.redactor;
  try {
    return await executeAndWrite(
      plan,
      opts,
      {
        ...deps,
        logger: redactingLogger(deps.logger, redactor),
        runner: runnerWith(deps.runner, { redactor }),
      },
      redactor,
      secrets.tooShort,
      baseline,
    );
  } catch (error) {
    // An unexpected error is shown to the user: it must not carry a secret either.
    if (error instanceof Error && redactor.active) {
      error.message = redactor.text(error.message);
      if (error.stack) error.stack = redactor.text(error.stack);
    }
    throw error;
  }
}

async function executeAndWrite(
  plan: Plan,
  opts: Omit<RunOptions, "paths">,
  deps: RunDeps,
  redactor: Redactor,
  tooShort: string[],
  baseline: Bundle | undefined,
): Promise<RunOutcome> {
  for (const name of tooShort) {
    deps.logger.info(
      `note: ${name} is passed through but its value is shorter than 4 characters, so it is not redacted from the bundle; pass settings that are not secret with env:`,
    );
  }
  await installAgents(
    plan.cases.map((c) => c.target),
    process.env,
    deps.logger,
  );
  const bwrap = await sandboxProgram(plan);
  const startedAt = new Date();
  const runId = newRunId(startedAt);
  const bundleDir = path.resolve(opts.cwd, opts.out ?? path.join(".evalgate", "results", runId));
  const workRoot = path.resolve(opts.workDir ?? path.join(tempRoot(), `evalgate-${runId}`));
  if (opts.out !== undefined) await checkNewBundleFolder(bundleDir, opts.out, opts.naming);
  const bundle = new BundleWriter(bundleDir, redactor);
  await bundle.init();

  deps.progress.start(plan.cases.reduce((a, c) => a + c.repeat, 0));
  let executed: ExecuteResult;
  try {
    executed = await executePlan({
      plan,
      workRoot,
      runner: deps.runner,
      keepWorkspaces: opts.keepWorkspaces ?? false,
      ...(bwrap ? { bwrap, bundleDir } : {}),
      hooks: {
        evidenceDir: (spec, dirName) => bundle.evidenceDir(spec, dirName),
        attemptStarted: () => deps.progress.attemptStarted(),
        retryPlanned: () => deps.progress.addPlanned(1),
        attemptFinished: async (spec, raw) => {
          const r = await bundle.writeAttempt(
            spec,
            raw,
            existsSync(path.join(bundle.evidenceDir(spec, raw.dirName), "setup.log")),
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
  const rows = await bundle.writeCases(finished);
  const evals = wireEvals(plan.roots, rows);
  const gate = gateFromRows(evals, rows, executed.budgetStops);
  const filtered = Boolean(opts.targets?.length || opts.tests?.length || opts.tags?.length || opts.shard);
  const built = buildSummary(
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
      ...(opts.shard ? { shard: opts.shard } : {}),
    },
    evals,
    rows,
    gate,
    executed.budgetStops,
    baseline ? comparisonSummary(baseline, rows, filtered) : null,
  );
  const summary = await bundle.writeSummary(built);
  const { view } = await writeReports(bundleDir);
  return { runId, bundleDir, summary, rows, plan, cases: finished, view };
}

/**
 * When a target asks for sandbox: bwrap, bubblewrap must be installed and able to create namespaces
 * here: checked once before anything runs, so the run stops with one clear message instead of
 * failing every attempt.
 */
async function sandboxProgram(plan: Plan): Promise<string | undefined> {
  const targets = [...new Set(plan.cases.filter((c) => c.target.sandbox).map((c) => c.target.name))];
  if (targets.length === 0) return undefined;
  const check = await checkBwrap();
  if (check.ok) return check.program;
  const who = `target${targets.length > 1 ? "s" : ""} ${targets.join(", ")}`;
  throw new UsageError(`${who} use${targets.length > 1 ? "" : "s"} sandbox: bwrap, but ${check.message}`);
}

/** The cases of one shard: round-robin over the cases sorted by identity, so shards stay balanced. */
export function shardPlan(plan: Plan, shard: RunOptions["shard"]): Plan {
  if (!shard) return plan;
  const sorted = [...plan.cases].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const mine = new Set(sorted.filter((_, i) => i % shard.total === shard.index - 1));
  const cases = plan.cases.filter((c) => mine.has(c));
  return {
    ...plan,
    cases,
    roots: plan.roots.filter((r) => cases.some((c) => c.rootEvalPath === r.evalPath)),
  };
}
