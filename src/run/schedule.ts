/**
 * The scheduler: prepares each distinct start (seed + setup, committed) once, then runs every attempt of every case with a
 * concurrency limit. Attempts are interleaved (attempt 1 of every case, then attempt 2, ...), so a
 * run stopped early still holds comparable evidence for every case. Errored attempts are retried
 * when the gate says so; once a root eval file's budget is spent, its remaining attempts are
 * recorded as cancelled instead of run.
 */
import path from "node:path";
import pLimit from "p-limit";
import { formatDuration } from "../config/duration.js";
import type { CaseSpec, Plan } from "../config/types.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import type { ProcessRunner } from "../sandbox/process.js";
import { WorkspaceError } from "../workspace/errors.js";
import { type PreparedStart, StartStore, startKey } from "../workspace/start.js";
import { type AttemptInput, runAttempt } from "./attempt.js";
import { BudgetTracker } from "./budget.js";
import { runHidden } from "./contain.js";
import { type CasePlace, openPlaces, placeFor, type RunPlaces, setupPlaceKey } from "./environment.js";
import { type Interruption, interruptedAttempt } from "./interrupt.js";
import { type AttemptResult, attemptDirName, type CaseRun, keptAttempt } from "./types.js";

export interface RunHooks {
  /** The attempt's evidence folder inside the bundle. */
  evidenceDir(spec: CaseSpec, dirName: string): string;
  attemptStarted?(spec: CaseSpec, attempt: number, retry: number): void;
  /** Called as each attempt finishes (the bundle writes its records here). */
  attemptFinished(spec: CaseSpec, result: AttemptResult): Promise<void> | void;
  /** Called when adaptive attempts are added to the plan. */
  attemptsPlanned?(spec: CaseSpec, count: number): void;
  /** Called when a retry is added to the plan. */
  retryPlanned?(spec: CaseSpec, attempt: number, retry: number): void;
  startPrepared?(spec: CaseSpec, start: PreparedStart): void;
}

export interface ExecuteOptions {
  plan: Plan;
  /** Scratch space for prepared starts and attempt workspaces (outside the user's checkout). */
  workRoot: string;
  runner: ProcessRunner;
  keepWorkspaces: boolean;
  hooks: RunHooks;
  /** The bubblewrap program, when a target runs under it (checked before the run). */
  bwrap?: string;
  /** The targets whose agents run under bubblewrap (sandbox: bwrap, or auto where it works). */
  bwrapTargets?: ReadonlySet<string>;
  /** The bundle folder, which a sandboxed agent may not read (other attempts' evidence). */
  bundleDir?: string;
  /**
   * The bubblewrap program for setup and scorers, when the run has it: they run the agent's code
   * (and third-party install scripts), whatever the targets' sandbox (docs/decisions/0185).
   */
  commandsBwrap?: string;
  /** The package cache's root that setup's npm cache is filled from and kept in (workspace/package-cache.ts). */
  packageCache?: string;
  /** Clock for the duration budget (tests). */
  now?: () => number;
  /** Once aborted, no attempt starts: the rest are recorded as cancelled. */
  interruption?: Interruption;
  /**
   * Adaptive attempts (a case with `repeatMax`): asked once a case's attempts so far have finished,
   * how many more it should get now (0: its verdict is decided). The decision is the gate's
   * (gate/adaptive.ts); the scheduler only never goes past `repeatMax` or a spent budget.
   */
  moreAttempts?: (spec: CaseSpec, tries: readonly AttemptResult[], planned: number) => number;
  /**
   * Asked before a retry with the tries of the case's attempts that are over (no retry to come):
   * whether they already settle the case as `error`, so that no retry can change its verdict.
   */
  errorSettled?: (spec: CaseSpec, settledTries: readonly AttemptResult[]) => boolean;
}

export interface ExecuteResult {
  runs: CaseRun[];
  /** Why a root eval file stopped scheduling, by its evalPath. */
  budgetStops: Map<string, string>;
}

type StartOutcome = AttemptInput["start"];

function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 60);
}

/** A user mistake found while preparing a seed, located where the seed is written. */
function seedProblem(c: CaseSpec, error: WorkspaceError): ConfigProblem {
  const origin = c.test.workspace.seedOrigin;
  const sub = error.details.key;
  const p: ConfigProblem = {
    file: origin?.file ?? c.identity.evalPath,
    key: [origin?.key ?? "workspace.seed", sub].filter(Boolean).join("."),
    message: error.message,
  };
  const line = (sub ? origin?.lines[sub] : undefined) ?? origin?.line;
  if (line !== undefined) p.line = line;
  if (error.details.hint) p.hint = error.details.hint;
  return p;
}

/**
 * Prepares every distinct start of the plan. A user mistake found on the way (a ref that does
 * not exist, a refused archive, ...) is a ConfigError, raised before any agent runs.
 */
async function prepareStarts(
  opts: ExecuteOptions,
  store: StartStore,
  places: RunPlaces,
): Promise<Map<string, StartOutcome>> {
  const limit = pLimit(Math.max(1, opts.plan.concurrency));
  const byKey = new Map<string, CaseSpec>();
  for (const c of opts.plan.cases) {
    const key = startKey(c.test.workspace, c.timeouts.setupMs, setupPlaceKey(c));
    if (!byKey.has(key)) byKey.set(key, c);
  }
  const outcomes = new Map<string, StartOutcome>();
  const problems: ConfigProblem[] = [];
  await Promise.all(
    [...byKey.entries()].map(([key, c]) =>
      limit(async () => {
        // A case in an environment: its image first (pulled or built once), then setup in it.
        const place = await places.forCase(c);
        if (place && "error" in place) {
          outcomes.set(key, { failure: "setup", message: `the environment is not ready: ${place.error}` });
          return;
        }
        try {
          const inImage = place ? { key: setupPlaceKey(c)!.key, runner: placeFor(place) } : undefined;
          const b = await store.prepare(c.test.workspace, c.timeouts.setupMs, inImage);
          outcomes.set(key, b);
          opts.hooks.startPrepared?.(c, b);
        } catch (error) {
          if (!(error instanceof WorkspaceError)) throw error;
          if (error.failure === "config") {
            problems.push(seedProblem(c, error));
            return;
          }
          const failed: StartOutcome = {
            failure: error.failure === "setup" ? "setup" : "seed",
            message: error.message,
          };
          if (error.setupLog) failed.setupLog = error.setupLog;
          if (error.details.setup) failed.setup = error.details.setup;
          outcomes.set(key, failed);
        }
      }),
    ),
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return outcomes;
}

/** An attempt that was never started: its eval file's budget was spent, or the run was interrupted. */
function cancelledAttempt(
  spec: CaseSpec,
  attempt: number,
  retry: number,
  reason: string,
  // null, not undefined: an undefined argument would take the default and read as a budget stop.
  stage: "budget" | null = "budget",
): AttemptResult {
  const now = new Date().toISOString();
  return {
    caseKey: spec.key,
    attempt,
    retry,
    status: "error",
    ...(stage ? { failureStage: stage } : {}),
    failureKind: "cancelled",
    message: `not run: ${reason}`,
    startedAt: now,
    finishedAt: now,
    durationMs: 0,
    phases: { workspaceMs: 0, agentMs: 0, diffMs: 0, scorersMs: 0 },
    dirName: attemptDirName(attempt, retry),
  };
}

const isRetryable = (r: AttemptResult) =>
  (r.status === "error" || r.status === "timeout") &&
  r.failureKind !== "cancelled" &&
  r.failureKind !== "budget_exceeded";

export async function executePlan(opts: ExecuteOptions): Promise<ExecuteResult> {
  // Every test's answer key and the run's state, not only the running one's: tests of one eval file
  // share a folder, and the repository's .git holds all of them.
  const hidden = runHidden(opts.plan, opts.workRoot, opts.bundleDir, opts.packageCache);
  const containment = { ...(opts.commandsBwrap ? { bwrap: opts.commandsBwrap } : {}), hidden };
  const store = new StartStore(opts.workRoot, opts.runner, containment, opts.packageCache);
  const places = await openPlaces(opts.plan.cases, opts.workRoot);
  try {
    return await executeIn(opts, hidden, containment, places, await prepareStarts(opts, store, places));
  } finally {
    await places.close();
  }
}

/** What every try of the run reads: its options, the prepared starts, the places and the budgets. */
interface RunState {
  opts: ExecuteOptions;
  hidden: string[];
  containment: { bwrap?: string; hidden: string[] };
  places: RunPlaces;
  starts: Map<string, StartOutcome>;
  budgets: BudgetTracker;
}

async function executeIn(
  opts: ExecuteOptions,
  hidden: string[],
  containment: { bwrap?: string; hidden: string[] },
  places: RunPlaces,
  starts: Map<string, StartOutcome>,
): Promise<ExecuteResult> {
  const budgets = new BudgetTracker(opts.plan.roots, opts.now ?? (() => Date.now()));
  const state: RunState = { opts, hidden, containment, places, starts, budgets };
  const runs: CaseRun[] = opts.plan.cases.map((spec) => ({ spec, tries: [] }));
  const attemptTask = attemptScheduler(state, runs);
  const maxRepeat = Math.max(...opts.plan.cases.map((c) => c.repeat));
  const first: Promise<void>[][] = runs.map(() => []);
  for (let attempt = 1; attempt <= maxRepeat; attempt++) {
    runs.forEach((run, caseIndex) => {
      if (attempt <= run.spec.repeat) first[caseIndex]!.push(attemptTask(run, caseIndex, attempt));
    });
  }
  await Promise.all(
    runs.map(async (run, caseIndex) => {
      await Promise.all(first[caseIndex]!);
      await adaptiveAttempts(state, run, caseIndex, attemptTask);
    }),
  );
  for (const run of runs) run.tries.sort((a, b) => a.attempt - b.attempt || a.retry - b.retry);
  return { runs, budgetStops: budgets.stops() };
}

/** Runs one attempt of a case (its tries) at the plan's concurrency. */
type AttemptTask = (run: CaseRun, caseIndex: number, attempt: number, optional?: boolean) => Promise<void>;

/**
 * The run's attempt tasks: each runs its attempt's tries one after another, retrying an errored
 * try while the gate allows it and no other attempt has already settled the case as `error`.
 */
function attemptScheduler(state: RunState, runs: CaseRun[]): AttemptTask {
  const { opts } = state;
  const limit = pLimit(Math.max(1, opts.plan.concurrency));
  // Per case, the attempts whose tries are over: what a retry's "already settled?" question reads.
  const over = new Map<CaseRun, Set<number>>(runs.map((r) => [r, new Set()]));
  const settledAsError = (run: CaseRun) => {
    const done = over.get(run)!;
    return (
      opts.errorSettled?.(
        run.spec,
        run.tries.filter((t) => done.has(t.attempt)),
      ) ?? false
    );
  };
  const triesOf = async (run: CaseRun, caseIndex: number, attempt: number, optional: boolean) => {
    const spec = run.spec;
    for (let retry = 0; ; retry++) {
      const result = await runTry(state, run, caseIndex, attempt, retry, optional && retry === 0);
      if (!result) return;
      run.tries.push(result);
      await opts.hooks.attemptFinished(spec, result);
      // In the bundle now: from here on the run holds only what its decisions read.
      run.tries[run.tries.indexOf(result)] = keptAttempt(result);
      const again =
        spec.gate.onError === "retry" &&
        retry < spec.gate.retries &&
        isRetryable(result) &&
        !opts.interruption?.signal.aborted &&
        // Another attempt already errored for good: the case is `error` whatever this one does.
        !settledAsError(run);
      if (!again) break;
      opts.hooks.retryPlanned?.(spec, attempt, retry + 1);
    }
  };
  return (run, caseIndex, attempt, optional = false) =>
    limit(async () => {
      try {
        await triesOf(run, caseIndex, attempt, optional);
      } finally {
        over.get(run)!.add(attempt);
      }
    });
}

/** Adaptive attempts: once a case's batch is done, the gate says whether it needs more. */
async function adaptiveAttempts(state: RunState, run: CaseRun, caseIndex: number, attemptTask: AttemptTask) {
  const { opts, budgets } = state;
  const max = run.spec.repeatMax;
  if (!max || !opts.moreAttempts) return;
  let planned = run.spec.repeat;
  for (;;) {
    if (budgets.stopReason(run.spec.rootEvalPath) || opts.interruption?.signal.aborted) return;
    const more = Math.min(opts.moreAttempts(run.spec, run.tries, planned), max - planned);
    if (more <= 0) return;
    opts.hooks.attemptsPlanned?.(run.spec, more);
    const batch: Promise<void>[] = [];
    for (let i = 1; i <= more; i++) batch.push(attemptTask(run, caseIndex, planned + i, true));
    planned += more;
    await Promise.all(batch);
  }
}

/**
 * One try of an attempt, or a cancelled one when the run was interrupted or its eval file's budget
 * is spent; null for an optional (adaptive) attempt that the spent budget leaves unplanned.
 */
async function runTry(
  state: RunState,
  run: CaseRun,
  caseIndex: number,
  attempt: number,
  retry: number,
  optional: boolean,
): Promise<AttemptResult | null> {
  const { opts, budgets, places } = state;
  const spec = run.spec;
  const dirName = attemptDirName(attempt, retry);
  const sig = opts.interruption?.signal.aborted ? opts.interruption.received : undefined;
  if (opts.interruption?.signal.aborted)
    return cancelledAttempt(spec, attempt, retry, `the run was interrupted (${sig ?? "stopped"})`, null);
  const stop = budgets.stopReason(spec.rootEvalPath);
  // An adaptive attempt is extra evidence: once the budget is spent it is not planned at all.
  if (stop) return optional ? null : cancelledAttempt(spec, attempt, retry, stop);
  // The duration budget also caps a running agent: it gets at most the time that is left.
  const left = budgets.timeLeftMs(spec.rootEvalPath);
  const capped = left !== undefined && left < spec.timeouts.agentMs;
  const effective = capped
    ? { ...spec, timeouts: { ...spec.timeouts, agentMs: Math.max(1000, left) } }
    : spec;
  opts.hooks.attemptStarted?.(spec, attempt, retry);
  const place = await places.forCase(spec);
  const result = await runAttempt({
    spec: effective,
    attempt,
    retry,
    start: state.starts.get(startKey(spec.test.workspace, spec.timeouts.setupMs, setupPlaceKey(spec)))!,
    ...(place && !("error" in place) ? { place: place as CasePlace } : {}),
    ...(places.hostLimits ? { hostLimits: places.hostLimits } : {}),
    workDir: path.join(opts.workRoot, "attempts", `${caseIndex}-${slug(spec.test.id)}`, dirName),
    evidenceDir: opts.hooks.evidenceDir(spec, dirName),
    dirName,
    runner: opts.runner,
    keepWorkspace: opts.keepWorkspaces,
    // The case's attempts finished so far: an attempt that disagrees with all of them is rerun.
    peers: () => run.tries,
    containment: state.containment,
    ...(opts.bwrap && opts.bwrapTargets?.has(spec.target.name)
      ? { bwrap: opts.bwrap, hidden: state.hidden }
      : {}),
  });
  if (capped && result.failureKind === "agent_timeout") {
    const limitText = formatDuration(budgets.durationOf(spec.rootEvalPath) ?? 0);
    result.status = "error";
    result.failureStage = "budget";
    result.failureKind = "budget_exceeded";
    result.message = `stopped: the run's duration budget (${limitText}) ran out while the agent worked`;
  }
  // Finished after an interrupt: its agent or scorers were killed, so it does not count.
  if (opts.interruption?.signal.aborted)
    return interruptedAttempt(result, opts.interruption.received ?? "stopped");
  budgets.record(spec.rootEvalPath, result);
  return result;
}
