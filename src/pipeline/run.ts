/**
 * The core both edges call: eval files → plan → attempts → verdicts → bundle.
 * The CLI and the action only build RunOptions and present the result.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, stat } from "node:fs/promises";
import path from "node:path";
import { comparisonSummary } from "../bundle/compare.js";
import { caseDurations } from "../bundle/durations.js";
import { type Bundle, readBundleAs, rowKey, unsealedNote } from "../bundle/read.js";
import { writeReports } from "../bundle/reports.js";
import { sealBundle } from "../bundle/seal.js";
import { buildSummary, gateFromRows, wireEvals } from "../bundle/summary.js";
import type { WireIndexRow, WireSummary } from "../bundle/wire.js";
import { BundleWriter, checkNewBundleFolder, defaultBundleDir, type FinishedCase } from "../bundle/write.js";
import type { PlanOptions } from "../config/plan/index.js";
import { runSecrets } from "../config/secrets.js";
import { type CaseSpec, identityKey, type Plan } from "../config/types.js";
import { isDiskFull, UsageError } from "../errors.js";
import { attemptsWanted } from "../gate/adaptive.js";
import { decideCase } from "../gate/case.js";
import { compareCase } from "../gate/compare.js";
import type { Logger } from "../log.js";
import { installAgents } from "../providers/install.js";
import type { Progress } from "../report/console.js";
import type { ReportView } from "../report/view.js";
import type { Interruption } from "../run/interrupt.js";
import { type ExecuteResult, executePlan } from "../run/schedule.js";
import { casesOfShard, type Durations } from "../run/shard.js";
import type { AttemptResult } from "../run/types.js";
import {
  isolationGap,
  planIsolation,
  probeIsolation,
  type Reaper,
  type RunIsolation,
  reapingRunner,
} from "../sandbox/isolation.js";
import { liveProcesses, type ProcessOutcome, type ProcessRunner, runnerWith } from "../sandbox/process.js";
import type { Redactor } from "../sandbox/redact.js";
import { VERSION } from "../version.js";
import { discardsSettled, removeTree } from "../workspace/discard.js";
import { git } from "../workspace/git.js";
import { tempRoot } from "../workspace/temp.js";
import { checkedPlan } from "./plan.js";

export interface RunOptions extends PlanOptions {
  /** The bundle folder. Default: .evalgate/results/<run_id> under cwd. */
  out?: string;
  /** Scratch folder for workspaces. Default: $RUNNER_TEMP or the system temp folder. */
  workDir?: string;
  keepWorkspaces?: boolean;
  /** Run only shard `index` of `total` (1-based): balanced by the baseline's durations, else by count (run/shard.ts). */
  shard?: { index: number; total: number };
  /** A bundle whose case durations balance the shards, when `baseline` is not given (a shard compares nothing). */
  shardTimes?: Bundle;
  /** Cases left out of the gate (quarantined): they run and are reported, but do not gate. */
  gateExclude?: (row: WireIndexRow) => boolean;
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
  /** Stops the run early (SIGINT, SIGTERM): the bundle is then written with status interrupted. */
  interruption?: Interruption;
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
  /** The signal that interrupted the run (the bundle's status is interrupted), if one did. */
  interrupted?: string;
}

/**
 * The run's private scratch folder (0700). A `--work-dir` that does not exist is made for the run
 * and removed after it; in a folder that exists (`--work-dir .`), a fresh `evalgate-<run_id>-*`
 * folder is made and only that is removed: evalgate never deletes what it did not create.
 */
async function makeWorkRoot(
  opts: Omit<RunOptions, "paths">,
  runId: string,
): Promise<{ root: string; cleanup: () => Promise<void> }> {
  const shown = `--work-dir ${opts.workDir}`;
  const given = opts.workDir ? path.resolve(opts.cwd, opts.workDir) : undefined;
  const s = given ? await stat(given).catch(() => undefined) : undefined;
  if (s && !s.isDirectory()) throw new UsageError(`${shown} is a file, not a folder`);
  const refuse = (where: string) => (error: NodeJS.ErrnoException) => {
    if (isDiskFull(error)) throw error;
    throw new UsageError(`${where}: cannot make the work folder (${error.code ?? error.message})`);
  };
  let root: string;
  if (given && !s) {
    await mkdir(given, { recursive: true, mode: 0o700 }).catch(refuse(shown));
    root = given;
  } else {
    const parent = given ?? tempRoot();
    root = await mkdtemp(path.join(parent, `evalgate-${runId}-`)).catch(refuse(given ? shown : parent));
  }
  return { root, cleanup: () => removeTree(root).catch(() => undefined) };
}

/** A runner that starts nothing once the run is interrupted (the running ones are killed by then). */
function stoppableRunner(inner: ProcessRunner, interruption: Interruption | undefined): ProcessRunner {
  if (!interruption) return inner;
  const refused: ProcessOutcome = {
    exitCode: null,
    signal: null,
    timedOut: false,
    durationMs: 0,
    spawnError: "not started: the run was interrupted",
    stdout: "",
    tail: "",
    droppedBytes: 0,
  };
  return {
    run: (spec) => (interruption.signal.aborted ? Promise.resolve({ ...refused }) : inner.run(spec)),
  };
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

/** The plan a run executes, before sharding: every eval file checked. Throws ConfigError. */
export async function planRun(opts: RunOptions): Promise<Plan> {
  return checkedPlan(opts, { variables: true });
}

/** Runs the eval files (or `planned`, from {@link planRun} with the same options) and writes the bundle. */
export async function runEvals(opts: RunOptions, deps: RunDeps, planned?: Plan): Promise<RunOutcome> {
  const loaded = planned ?? (await planRun(opts));
  const given = opts.baseline || undefined;
  const baseline = typeof given === "string" ? await readBundleAs(given, "--baseline") : given;
  const unsealed = baseline && unsealedNote(baseline, "the baseline");
  if (unsealed) deps.logger.info(`note: ${unsealed}`);
  const times = baseline ?? opts.shardTimes;
  const plan = shardPlan(loaded, opts.shard, opts.shard && times ? await caseDurations(times) : undefined);
  for (const note of plan.notes) deps.logger.info(`note: ${note}`);
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
  // Not through the redacting logger: the note names the variable, and the value is its own word.
  for (const name of secrets.plainWords) {
    deps.logger.info(
      `note: ${name} is passed through and its value is a plain word: it is masked as *** wherever it appears in logs, diffs and messages (never in verdicts, statuses or names); pass settings that are not secret with env:`,
    );
  }
  try {
    return await executeAndWrite(
      plan,
      opts,
      {
        ...deps,
        logger: redactingLogger(deps.logger, redactor),
        runner: runnerWith(stoppableRunner(deps.runner, deps.interruption), { redactor }),
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
  const isolation = await isolationOf(plan, deps.logger);
  reportIsolation(isolation, deps.logger);
  const startedAt = new Date();
  const runId = newRunId(startedAt);
  const bundleDir =
    opts.out !== undefined ? path.resolve(opts.cwd, opts.out) : await defaultBundleDir(opts.cwd, runId);
  if (opts.out !== undefined) await checkNewBundleFolder(bundleDir, opts.out, opts.naming);
  try {
    return await writeRun(plan, opts, deps, baseline, isolation, startedAt, runId, bundleDir, redactor);
  } catch (error) {
    if (!isDiskFull(error)) throw error;
    const file = (error as NodeJS.ErrnoException).path;
    const where = file ? ` (writing ${file})` : "";
    throw new UsageError(
      `no space left on the disk${where}: free some space, or give --out and --work-dir folders on a disk with room. The bundle folder ${bundleDir} keeps what was written`,
    );
  }
}

async function writeRun(
  plan: Plan,
  opts: Omit<RunOptions, "paths">,
  deps: RunDeps,
  baseline: Bundle | undefined,
  isolation: RunIsolation & { reaper: Reaper },
  startedAt: Date,
  runId: string,
  bundleDir: string,
  redactor: Redactor,
): Promise<RunOutcome> {
  const bundle = new BundleWriter(bundleDir, redactor);
  await bundle.init();
  const work = await makeWorkRoot(opts, runId);
  const workRoot = work.root;
  const interruption = deps.interruption;

  deps.progress.start(plan.cases.reduce((a, c) => a + c.repeat, 0));
  const baseRows = new Map((baseline?.rows ?? []).map((r) => [rowKey(r), r]));
  const moreAttempts = adaptiveAttempts(plan, baseRows);
  let executed: ExecuteResult;
  try {
    executed = await executePlan({
      plan,
      workRoot,
      // Setup, scorers and agents outside bubblewrap run under the run's reaper: nothing they start
      // outlives them (docs/decisions/0090).
      runner: reapingRunner(deps.runner, isolation.reaper),
      keepWorkspaces: opts.keepWorkspaces ?? false,
      bundleDir,
      ...(isolation.bwrap ? { bwrap: isolation.bwrap, bwrapTargets: isolation.bwrapTargets } : {}),
      ...(interruption ? { interruption } : {}),
      moreAttempts,
      hooks: {
        attemptsPlanned: (_spec, count) => deps.progress.addPlanned(count),
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
            repeat: spec.repeatMax ?? spec.repeat,
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
    // Attempt folders are deleted in the background as attempts end (workspace/discard.ts).
    await discardsSettled();
    if (!opts.keepWorkspaces) await work.cleanup();
  }
  if (opts.keepWorkspaces) deps.logger.info(`workspaces kept in ${workRoot}`);

  const finished: FinishedCase[] = executed.runs.map((r) => {
    const planned = Math.max(r.spec.repeat, ...r.tries.map((t) => t.attempt));
    const decision = decideCase(r.tries, planned, r.spec.gate);
    const base = baseRows.get(identityKey(r.spec.identity));
    const change = baseline
      ? compareCase(
          base && {
            verdict: base.verdict,
            counted: base.attempts.counted,
            passed: base.attempts.passed,
            flaky: base.flaky,
          },
          { verdict: decision.verdict, counted: decision.counts.counted, passed: decision.counts.passed },
        )
      : null;
    return { spec: r.spec, tries: r.tries, decision, change };
  });
  // The bundle's final files are written only once no process of the run is left (with the reaper
  // or a PID namespace this holds by construction: each process's containment ended with it).
  if (liveProcesses() > 0) {
    throw new Error(
      `internal: ${liveProcesses()} processes of the run are still running before the bundle is written`,
    );
  }
  const rows = await bundle.writeCases(finished);
  const evals = wireEvals(plan.roots, rows);
  const exclude = opts.gateExclude;
  const gate = gateFromRows(evals, exclude ? rows.filter((r) => !exclude(r)) : rows, executed.budgetStops);
  const filtered = Boolean(opts.targets?.length || opts.tests?.length || opts.tags?.length || opts.shard);
  const stoppedBy = interruption?.signal.aborted ? (interruption.received ?? "a stop request") : undefined;
  const tries = finished.flatMap((c) => c.tries);
  const done = tries.filter((t) => t.failureKind !== "cancelled").length;
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
      ...(stoppedBy
        ? {
            interrupted: `the run was interrupted (${stoppedBy}): ${done} of ${tries.length} attempts finished`,
          }
        : {}),
    },
    evals,
    rows,
    gate,
    executed.budgetStops,
    baseline ? comparisonSummary(baseline, rows, filtered) : null,
  );
  built.isolation = {
    level: isolation.level,
    reason: isolation.reason,
    targets: isolation.targets.map((t) => ({ name: t.name, level: t.level, reason: t.reason })),
  };
  await bundle.writeSummary(built);
  const { view } = await writeReports(bundleDir);
  // Last: the digest of every file of the bundle, once every process of the run is gone.
  const sealed = await sealBundle(bundleDir);
  for (const rel of sealed.removed)
    deps.logger.warn(`removed ${rel} from the bundle: not a folder or a regular file, so not evalgate's`);
  return {
    runId,
    bundleDir,
    summary: sealed.summary,
    rows,
    plan,
    cases: finished,
    view,
    ...(stoppedBy ? { interrupted: stoppedBy } : {}),
  };
}

/**
 * Probes the machine once per run and decides each target's isolation (docs/decisions/0090). When a
 * target asks for sandbox: bwrap, bubblewrap must be installed and able to create namespaces here:
 * checked before anything runs, so the run stops with one clear message instead of failing every
 * attempt.
 */
async function isolationOf(plan: Plan, logger: Logger): Promise<RunIsolation & { reaper: Reaper }> {
  const targets = new Map<string, Plan["cases"][number]["target"]>();
  for (const c of plan.cases) {
    if (c.target.provider !== "reference" && c.target.provider !== "noop")
      targets.set(c.target.name, c.target);
  }
  const probe = await probeIsolation([...targets.values()].some((t) => t.sandbox));
  for (const note of probe.provisioned ?? []) logger.info(`isolation: ${note}`);
  const strict = [...targets.values()].filter((t) => t.sandbox?.kind === "bwrap").map((t) => t.name);
  if (strict.length > 0 && !probe.bwrap.ok) {
    const who = `target${strict.length > 1 ? "s" : ""} ${strict.join(", ")}`;
    throw new UsageError(
      `${who} use${strict.length > 1 ? "" : "s"} sandbox: bwrap, but ${probe.bwrap.message}`,
    );
  }
  return { ...planIsolation([...targets.values()], probe), reaper: probe.reaper };
}

/**
 * The scheduler's question for adaptive attempts, answered by the gate: the case's verdict so far,
 * and (against a baseline case that passed, with `regressions.evidence: significant`) whether a drop
 * is still open at the root's α divided by the cases compared (the strictest step of Holm's
 * correction, so a drop decided here stays decided in the gate).
 */
function adaptiveAttempts(
  plan: Plan,
  baseRows: ReadonlyMap<string, WireIndexRow>,
): (spec: CaseSpec, tries: readonly AttemptResult[], planned: number) => number {
  const roots = new Map(plan.roots.map((r) => [r.evalPath, r]));
  const compared = new Map<string, number>();
  for (const c of plan.cases) {
    if (baseRows.has(identityKey(c.identity)))
      compared.set(c.rootEvalPath, (compared.get(c.rootEvalPath) ?? 0) + 1);
  }
  return (spec, tries, planned) => {
    const d = decideCase(tries, planned, spec.gate);
    const counted = d.counts.counted;
    const root = roots.get(spec.rootEvalPath);
    const base = baseRows.get(identityKey(spec.identity));
    const tests = root && root.regressions !== "ignore" && root.regressionEvidence === "significant";
    return attemptsWanted({
      gate: spec.gate,
      range: { min: spec.repeat, max: spec.repeatMax ?? spec.repeat },
      planned,
      head: { counted, passed: d.counts.passed, passRateSum: (d.stats.meanPassRate ?? 0) * counted },
      base:
        base && tests
          ? { verdict: base.verdict, counted: base.attempts.counted, passed: base.attempts.passed }
          : undefined,
      alpha: (root?.regressionAlpha ?? 0.05) / Math.max(1, compared.get(spec.rootEvalPath) ?? 1),
    });
  };
}

/** One line on the console; a warning, with what is left open, when an agent runs without bubblewrap. */
function reportIsolation(isolation: RunIsolation, logger: Logger): void {
  if (isolation.level === null) return;
  const weak = isolation.targets.filter((t) => t.level !== "bwrap");
  if (weak.length === 0) {
    logger.info("isolation: bwrap (every agent runs under bubblewrap)");
    return;
  }
  const byLevel = new Map<string, typeof weak>();
  for (const t of weak) byLevel.set(t.level, [...(byLevel.get(t.level) ?? []), t]);
  for (const [level, ts] of byLevel) {
    logger.warn(
      `isolation: ${level} for ${ts.map((t) => t.name).join(", ")}: ${isolationGap(ts[0]!.level)}. Why: ${ts[0]!.reason}`,
    );
  }
}

/** The cases of one shard: balanced by the baseline's durations when known, else by count (run/shard.ts). */
export function shardPlan(plan: Plan, shard: RunOptions["shard"], durations?: Durations): Plan {
  if (!shard) return plan;
  const cases = casesOfShard(plan.cases, shard, durations);
  return {
    ...plan,
    cases,
    roots: plan.roots.filter((r) => cases.some((c) => c.rootEvalPath === r.evalPath)),
  };
}
