/**
 * The core both edges call: eval files → plan → attempts → verdicts → bundle.
 * The CLI and the action only build RunOptions and present the result.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, stat } from "node:fs/promises";
import path from "node:path";
import { caseDurations } from "../bundle/durations.js";
import { BaseHistory, readBaselines } from "../bundle/history.js";
import { lockBundleFolder } from "../bundle/lock.js";
import { type Bundle, unsealedNote } from "../bundle/read.js";
import { historyForSuites } from "../bundle/suites.js";
import type { WireIndexRow, WireSummary } from "../bundle/wire.js";
import { BundleWriter, checkNewBundleFolder, defaultBundleDir, type FinishedCase } from "../bundle/write.js";
import { historyKey } from "../config/fingerprint.js";
import type { OptionNaming } from "../config/options.js";
import type { PlanOptions } from "../config/plan/index.js";
import { runSecrets } from "../config/secrets.js";
import type { Plan } from "../config/types.js";
import { isDiskFull, UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import { installAgents } from "../providers/install.js";
import type { Progress } from "../report/console.js";
import type { ReportView } from "../report/view.js";
import { notRunnable } from "../run/environment.js";
import type { Interruption } from "../run/interrupt.js";
import { type ExecuteResult, executePlan } from "../run/schedule.js";
import { casesOfShard, type Durations } from "../run/shard.js";
import { type Reaper, type RunIsolation, reapingRunner } from "../sandbox/isolation.js";
import { liveProcesses, type ProcessOutcome, type ProcessRunner, runnerWith } from "../sandbox/process.js";
import type { Redactor } from "../sandbox/redact.js";
import { discardsSettled, removeTree } from "../workspace/discard.js";
import { packageCacheOption } from "../workspace/package-cache.js";
import { tempRoot } from "../workspace/temp.js";
import { adaptiveAttempts, baseOf, caseErrorSettled, finishCases, schedulesOf } from "./decide.js";
import { isolationOf, reportIsolation } from "./isolation.js";
import { attemptHooks, writeRunOutputs } from "./outputs.js";
import { checkedPlan } from "./plan.js";

export interface RunOptions extends PlanOptions {
  /** How the edge that started the run spells its options, for messages about them. */
  naming: OptionNaming;
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
  /** With an exam from another commit: what the checkout changes in the quarantine file (summary.json `exam`). */
  quarantineChanges?: readonly string[];
  /** A baseline bundle to compare with (the base branch's run): its folder, or the bundle already read. */
  baseline?: string | Bundle;
  /**
   * More base runs, pooled with `baseline` into each case's history: bundles, their folders, or
   * folders holding several (`--baseline B1 --baseline B2`, `--baseline DIR`).
   */
  baselines?: readonly (string | Bundle)[];
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
  const shown = opts.naming.given("work-dir", opts.workDir ?? "");
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
  // A baseline of other suites is not compared; one of some of the same is, over those (bundle/suites.ts).
  const given = await baseHistoryOf(opts);
  const fit = given
    ? historyForSuites(
        given,
        loaded.roots.map((r) => r.evalPath),
      )
    : undefined;
  if (fit?.note) deps.logger.info(`note: ${fit.note}`);
  const history = fit?.history;
  for (const b of history?.bundles ?? []) {
    const unsealed = unsealedNote(b, history!.bundles.length > 1 ? `the baseline ${b.dir}` : "the baseline");
    if (unsealed) deps.logger.info(`note: ${unsealed}`);
  }
  const times = history?.newest ?? opts.shardTimes;
  const plan = shardPlan(loaded, opts.shard, opts.shard && times ? await caseDurations(times) : undefined);
  for (const note of plan.notes) deps.logger.info(`note: ${note}`);
  return runPlan(plan, opts, deps, history);
}

/** The base runs of `baseline` and `baselines`, read and pooled; undefined when none was given. */
export async function baseHistoryOf(opts: Pick<RunOptions, "baseline" | "baselines" | "cwd" | "naming">) {
  const given = [...(opts.baseline ? [opts.baseline] : []), ...(opts.baselines ?? [])];
  if (given.length === 0) return undefined;
  const read = given.filter((g): g is Bundle => typeof g !== "string");
  const paths = given.filter((g): g is string => typeof g === "string");
  const label = opts.naming.option("baseline");
  return new BaseHistory([...read, ...(await readBaselines(paths, opts.cwd, label))]);
}

/**
 * Runs every attempt of a resolved plan and writes the bundle (`evalgate run`, `validate --solvable`).
 * Every secret of the plan is redacted from the console, the bundle and any error shown.
 */
export async function runPlan(
  plan: Plan,
  opts: Omit<RunOptions, "paths">,
  deps: RunDeps,
  history?: BaseHistory,
): Promise<RunOutcome> {
  // What an environment cannot run yet is refused, never run on the runner's own system as if the
  // environment were not there (run/environment.ts).
  for (const c of plan.cases) {
    const why = notRunnable(c);
    if (why) throw new UsageError(`test "${c.test.id}" runs in an environment, but ${why}`);
  }
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
      history,
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
  history: BaseHistory | undefined,
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
  // One run per bundle folder: the lock first, so a second run names the first (docs/decisions/0189).
  const lock = await lockBundleFolder(bundleDir, opts.out ?? bundleDir, opts.naming);
  try {
    if (opts.out !== undefined) await checkNewBundleFolder(bundleDir, opts.out, opts.naming);
    return await writeRun(plan, opts, deps, history, isolation, startedAt, runId, bundleDir, redactor);
  } catch (error) {
    if (!isDiskFull(error)) throw error;
    const file = (error as NodeJS.ErrnoException).path;
    const where = file ? ` (writing ${file})` : "";
    throw new UsageError(
      `no space left on the disk${where}: free some space, or ${opts.naming.roomOnDisk}. The bundle folder ${bundleDir} keeps what was written`,
    );
  } finally {
    await lock.release();
  }
}

async function writeRun(
  plan: Plan,
  opts: Omit<RunOptions, "paths">,
  deps: RunDeps,
  history: BaseHistory | undefined,
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
  const keys = new Map(plan.cases.map((c) => [c.key, historyKey(c, plan.projectRoot)]));
  const base = history && baseOf(history, keys);
  const schedules = schedulesOf(plan.roots, plan.cases, base);
  const moreAttempts = adaptiveAttempts(schedules);
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
      ...(isolation.commandsBwrap ? { commandsBwrap: isolation.commandsBwrap } : {}),
      ...packageCacheOption(process.env),
      ...(interruption ? { interruption } : {}),
      moreAttempts,
      errorSettled: caseErrorSettled,
      hooks: attemptHooks(bundle, deps.progress),
    });
  } finally {
    deps.progress.stop();
    // Attempt folders are deleted in the background as attempts end (workspace/discard.ts).
    await discardsSettled();
    if (!opts.keepWorkspaces) await work.cleanup();
  }
  if (opts.keepWorkspaces) deps.logger.info(`workspaces kept in ${workRoot}`);

  const finished = finishCases(executed.runs, base, schedules, keys);
  // The bundle's final files are written only once no process of the run is left (with the reaper
  // or a PID namespace this holds by construction: each process's containment ended with it).
  if (liveProcesses() > 0) {
    throw new Error(
      `internal: ${liveProcesses()} processes of the run are still running before the bundle is written`,
    );
  }
  const stoppedBy = interruption?.signal.aborted ? (interruption.received ?? "a stop request") : undefined;
  const written = await writeRunOutputs({
    bundle,
    plan,
    opts,
    finished,
    budgetStops: executed.budgetStops,
    ...(history ? { history } : {}),
    isolation,
    runId,
    startedAt,
    ...(stoppedBy ? { stoppedBy } : {}),
    logger: deps.logger,
  });
  return {
    runId,
    bundleDir,
    ...written,
    plan,
    cases: finished,
    ...(stoppedBy ? { interrupted: stoppedBy } : {}),
  };
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
