/**
 * A case's verdict, classification and statistics from its attempts. Pure; the rules are written
 * down in docs/gate.md and this file follows them.
 */
import type { CaseGate, OnError } from "../config/types.js";
import type { AttemptResult, FailureKind } from "../run/types.js";
import { attemptsToSettle, CaseSchedule, type Counted, type Evidence, policyState } from "./adaptive.js";
import type { HeadPath } from "./compare.js";
import { type EstimateMethod, unbiasedEstimates } from "./estimate.js";
import { mean, wilsonInterval } from "./stats.js";

export type { OnError };
export type Verdict = "pass" | "fail" | "error";
export type Classification =
  | "stable_pass"
  | "stable_fail"
  | "flaky"
  | "verifier_flake"
  | "infrastructure_failure"
  | "timeout"
  | "mixed_error";

export interface CaseCounts {
  planned: number;
  /** Attempts the verdict is decided on. */
  counted: number;
  passed: number;
  /** Quality failures (failed status: quality, empty_diff, tampered). */
  failed: number;
  /** Errors and timeouts (final tries). */
  errored: number;
  timedOut: number;
  cancelled: number;
  /** Retries that were run (tries beyond the first of an attempt). */
  retried: number;
}

export interface CaseStats {
  /** passed / counted, as the attempts came out (adaptive attempts bias it: see `estimate`). */
  attemptSuccessRate: number | null;
  wilson95: [number, number] | null;
  meanScore: number | null;
  meanPassRate: number | null;
  /**
   * passAtK[k-1]: unbiased under the stopping rule (gate/estimate.ts), for k = 1..counted with a
   * fixed repeat, k = 1..min with adaptive attempts.
   */
  passAtK: number[];
  passHatK: number[];
  /** The success rate estimated without the stopping rule's bias, and how. */
  estimate?: { successRate: number | null; method: EstimateMethod };
}

export interface CaseDecision {
  verdict: Verdict;
  classification: Classification;
  flaky: boolean;
  counts: CaseCounts;
  stats: CaseStats;
  /** One sentence: why this verdict. */
  reason: string;
  /**
   * Whether the attempts settled the verdict (docs/gate.md, adaptive attempts); an inconclusive
   * verdict follows the point estimate. Absent in bundles written before it existed.
   */
  evidence?: Evidence;
  /** For an inconclusive rate: the attempts a fresh run would likely need to settle it, if known. */
  settleAttempts?: number | null;
  /** The successes at each look of the schedule its counted attempts reached (the drop test's path). */
  path?: HeadPath;
}

/**
 * What the verdict of a case is decided on, per try: the in-memory attempt record of a run, or a try
 * rebuilt from a shard's case summary by a merge (bundle/merge-decide.ts).
 */
export interface TryOutcome {
  attempt: number;
  retry: number;
  status: AttemptResult["status"];
  failureKind?: FailureKind | undefined;
  /** `budget` for an attempt the eval file's budget stopped; otherwise a cancel was an interrupt. */
  failureStage?: string | undefined;
  grading?: { score: number | null; passRate: number | null } | undefined;
}

const VERIFIER: readonly FailureKind[] = ["scorer_error", "scorer_timeout", "verifier_flake"];
const INFRASTRUCTURE: readonly FailureKind[] = ["workspace_error", "setup_error", "agent_exit"];

function errorGroup(a: TryOutcome): "verifier" | "infrastructure" | "timeout" | undefined {
  // An agent that timed out or exited non-zero without evidence of infrastructure trouble failed:
  // its failure_kind says how it ended, its status that it is counted (docs/decisions/0192).
  if (a.status !== "error" && a.status !== "timeout") return undefined;
  if (a.status === "timeout" || a.failureKind === "agent_timeout") return "timeout";
  if (a.failureKind && VERIFIER.includes(a.failureKind)) return "verifier";
  if (a.failureKind && INFRASTRUCTURE.includes(a.failureKind)) return "infrastructure";
  if (a.status === "error") return "infrastructure";
  return undefined;
}

export const isCancelled = (a: TryOutcome) =>
  a.failureKind === "cancelled" || a.failureKind === "budget_exceeded";
/** The scorers disagreed with themselves (verify_repeats): kept in the bundle, not the agent's. */
export const isVerifierFlake = (a: TryOutcome) => a.failureKind === "verifier_flake";
export const isErrored = (a: TryOutcome) =>
  (a.status === "error" || a.status === "timeout") && !isCancelled(a) && !isVerifierFlake(a);

/** Classification over the final tries that ran (cancelled attempts say nothing about the case). */
export function classify(finals: readonly TryOutcome[]): {
  classification: Classification;
  flaky: boolean;
} {
  const ran = finals.filter((a) => !isCancelled(a));
  const passed = ran.filter((a) => a.status === "passed").length;
  const failed = ran.filter((a) => a.status === "failed").length;
  const groups = new Set(ran.map(errorGroup).filter((g) => g !== undefined));
  const errors = ran.length - passed - failed;
  const flaky = passed > 0 && (failed > 0 || errors > 0);
  if (groups.size === 0) {
    if (ran.length === 0) return { classification: "infrastructure_failure", flaky: false };
    if (failed === 0) return { classification: "stable_pass", flaky };
    if (passed === 0) return { classification: "stable_fail", flaky };
    return { classification: "flaky", flaky };
  }
  if (groups.size > 1) return { classification: "mixed_error", flaky };
  const [only] = groups;
  const classification =
    only === "verifier" ? "verifier_flake" : only === "timeout" ? "timeout" : "infrastructure_failure";
  return { classification, flaky };
}

function percent(x: number): string {
  return `${Math.round(x * 100)} %`;
}

const POLICY_NEEDS: Record<CaseGate["policy"], (t?: number) => string> = {
  all_attempts_successful: () => "policy needs all",
  any_attempt_successful: () => "policy needs at least one",
  attempt_success_rate_at_least: (t) => `policy needs a success rate of at least ${percent(t ?? 1)}`,
  mean_pass_rate_at_least: (t) => `policy needs a mean pass rate of at least ${percent(t ?? 1)}`,
};

/**
 * Decides a case. `tries` holds every try (retries included); the verdict is decided on the last
 * try of each attempt, filtered by the gate's on_error rule. `schedule` is the rule its attempts
 * were given by (default: a fixed repeat of `planned`): the rate is decided at its looks, and the
 * estimates replay its stopping rule.
 */
export function decideCase(
  tries: readonly TryOutcome[],
  planned: number,
  gate: CaseGate,
  schedule: CaseSchedule = fixedSchedule(gate, planned),
): CaseDecision {
  const onError = gate.onError;
  const finals = lastTries(tries);
  const cancelled = finals.filter(isCancelled).length;
  const errored = finals.filter(isErrored);
  const quality = finals.filter((a) => a.status === "passed" || a.status === "failed");
  const passed = quality.filter((a) => a.status === "passed").length;
  const failed = quality.length - passed;
  const counts: CaseCounts = {
    planned,
    counted: quality.length,
    passed,
    failed,
    errored: errored.length,
    timedOut: errored.filter((a) => a.status === "timeout").length,
    cancelled,
    retried: tries.length - finals.length,
  };
  const n = quality.length;
  const { stats, outcomes } = statsOf(quality, gate, schedule);
  const { classification, flaky } = classify(finals);
  const tally = `${passed} of ${n} attempt${n === 1 ? "" : "s"} passed`;

  const decide = (verdict: Verdict, reason: string): CaseDecision => ({
    verdict,
    classification,
    flaky,
    counts,
    stats,
    reason,
    evidence: "decided",
    settleAttempts: null,
  });

  if (cancelled > 0) {
    return decide("error", `${cancelled} of ${planned} attempts ${stoppedBy(finals, cancelled)}`);
  }
  if (errored.length > 0 && onError !== "exclude") {
    const kinds = [...new Set(errored.map((a) => a.failureKind ?? a.status))].join(", ");
    const retriedNote =
      onError === "retry" ? ` after ${counts.retried} retr${counts.retried === 1 ? "y" : "ies"}` : "";
    return decide(
      "error",
      `${errored.length} of ${finals.length} attempts errored (${kinds})${retriedNote}; errors are not counted as failures`,
    );
  }
  const flakes = finals.filter(isVerifierFlake).length;
  if (n === 0 && flakes > 0)
    return decide(
      "error",
      `no attempt could be counted: ${flakes} of ${finals.length} were verifier flakes, the rest errored`,
    );
  if (n === 0) return decide("error", `no attempt could be counted: all ${finals.length} errored`);
  const excludedNote =
    (errored.length > 0 ? ` (${errored.length} errored excluded)` : "") +
    (flakes > 0 ? ` (${flakes} verifier flake${flakes === 1 ? "" : "s"} excluded)` : "");
  const needs = POLICY_NEEDS[gate.policy](gate.threshold);
  const ok = policyMet(gate, passed, n, stats.meanPassRate);
  const evidence: Evidence = policyState(schedule, outcomes) === "open" ? "inconclusive" : "decided";
  const settle = evidence === "inconclusive" ? attemptsToSettle(gate, outcomes) : null;
  const detail =
    gate.policy === "mean_pass_rate_at_least"
      ? `${tally}, mean pass rate ${percent(stats.meanPassRate ?? 0)}`
      : tally;
  return {
    ...decide(ok ? "pass" : "fail", `${detail}${excludedNote}${ok ? "" : `, ${needs}`}`),
    evidence,
    settleAttempts: settle,
    path: pathOf(schedule.looks, outcomes),
  };
}

/** The counted attempts' statistics, and each one's outcome as the stopping rule reads it. */
function statsOf(
  quality: readonly TryOutcome[],
  gate: CaseGate,
  schedule: CaseSchedule,
): { stats: CaseStats; outcomes: Counted[] } {
  const n = quality.length;
  const passed = quality.filter((a) => a.status === "passed").length;
  const scores = quality.map((a) => a.grading?.score).filter((s): s is number => typeof s === "number");
  const passRates = quality.map((a) => a.grading?.passRate).filter((s): s is number => typeof s === "number");
  const outcomes: Counted[] = quality.map((a) => ({
    passed: a.status === "passed",
    passRate: a.grading?.passRate ?? (a.status === "passed" ? 1 : 0),
  }));
  const estimates = unbiasedEstimates(
    outcomes.map((o) => o.passed),
    schedule.looks,
    // The rule reads the successes alone unless the policy measures pass rates.
    gate.policy === "mean_pass_rate_at_least" ? undefined : (k, s) => schedule.continuesAt(k, s, s),
  );
  const stats: CaseStats = {
    attemptSuccessRate: n > 0 ? passed / n : null,
    wilson95: wilsonInterval(passed, n),
    meanScore: mean(scores),
    meanPassRate: mean(passRates),
    passAtK: estimates.passAtK,
    passHatK: estimates.passHatK,
    estimate: { successRate: estimates.successRate, method: estimates.method },
  };
  return { stats, outcomes };
}

/** Why the cancelled attempts did not run, for the case's reason. */
function stoppedBy(finals: readonly TryOutcome[], cancelled: number): string {
  // A budget stops attempts before they start (or caps a running agent); an interrupt (a cancelled
  // job, SIGTERM) stops the rest. Each says which it was.
  const byBudget = finals.filter(
    (a) => a.failureKind === "budget_exceeded" || (isCancelled(a) && a.failureStage === "budget"),
  ).length;
  return byBudget === cancelled
    ? "were stopped by the budget"
    : byBudget === 0
      ? "were stopped: the run was cancelled"
      : `were stopped: ${byBudget} by the budget, ${cancelled - byBudget} by the run's cancel`;
}

/** Whether the counted attempts meet the case's policy. */
function policyMet(gate: CaseGate, passed: number, n: number, meanPassRate: number | null): boolean {
  const eps = 1e-9;
  let ok: boolean;
  switch (gate.policy) {
    case "all_attempts_successful":
      ok = passed === n;
      break;
    case "any_attempt_successful":
      ok = passed >= 1;
      break;
    case "attempt_success_rate_at_least":
      ok = passed / n + eps >= (gate.threshold ?? 1);
      break;
    case "mean_pass_rate_at_least":
      ok = (meanPassRate ?? 0) + eps >= (gate.threshold ?? 1);
      break;
  }
  return ok;
}

/** The successes at each look the counted attempts reached. */
export function pathOf(looks: readonly number[], outcomes: readonly Counted[]): HeadPath {
  // One look: at the end, whatever errors left of the planned attempts.
  if (looks.length === 1)
    return outcomes.length
      ? { looks: [outcomes.length], passes: [outcomes.filter((o) => o.passed).length] }
      : { looks, passes: [] };
  const passes: number[] = [];
  let s = 0;
  let k = 0;
  outcomes.forEach((o, i) => {
    if (o.passed) s++;
    if (i + 1 === looks[k]) {
      passes.push(s);
      k++;
    }
  });
  return { looks, passes };
}

/** A fixed repeat of `planned` attempts whose verdict gates: one look, at the end. */
export function fixedSchedule(gate: CaseGate, planned: number): CaseSchedule {
  const n = Math.max(1, planned);
  return new CaseSchedule({ gate, range: { min: n, max: n }, verdictGates: true });
}

/** The last try of each attempt number. */
export function lastTries<T extends TryOutcome>(tries: readonly T[]): T[] {
  const byAttempt = new Map<number, T>();
  for (const t of tries) {
    const prev = byAttempt.get(t.attempt);
    if (!prev || t.retry > prev.retry) byAttempt.set(t.attempt, t);
  }
  return [...byAttempt.values()].sort((a, b) => a.attempt - b.attempt);
}
