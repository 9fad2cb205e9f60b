/**
 * A merge decides its gate the way a run does: each case's verdict from its tries, as the shard's
 * case summary.json lists them, with the case's own gate policy, then the run gate over every case
 * (gate/run.ts). The verdicts the shards' index rows claim are not what the merged gate trusts.
 */
import type { CaseGate } from "../config/types.js";
import { CaseSchedule } from "../gate/adaptive.js";
import { admissionOf } from "../gate/admission.js";
import { type CaseDecision, decideCase, type TryOutcome } from "../gate/case.js";
import { type CaseChange, compareCase } from "../gate/compare.js";
import { type CaseHistory, pooledSide } from "../gate/history.js";
import type { GateCase } from "../gate/run.js";
import {
  admissionOfWire,
  usageTotalsOf,
  type WireCaseSummary,
  type WireChange,
  type WireIndexRow,
} from "./wire.js";

const gateOf = (summary: WireCaseSummary): CaseGate => ({
  policy: summary.policy.name,
  onError: summary.policy.on_error,
  retries: 0,
  ...(policyRate(summary.policy) !== null ? { threshold: policyRate(summary.policy)! } : {}),
});

const plannedOf = (summary: WireCaseSummary) =>
  Math.max(summary.attempts.planned, ...summary.runs.map((t) => t.attempt));

const rangeOf = (summary: WireCaseSummary) =>
  summary.repeat ?? { min: plannedOf(summary), max: plannedOf(summary) };

/** A case summary's policy rate: `min_rate`, or `threshold` in bundles written before the rename. */
export function policyRate(policy: { min_rate?: number | null; threshold?: number | null }): number | null {
  return policy.min_rate ?? policy.threshold ?? null;
}

/** The case's verdict, decided again from its tries. */
export function decisionOf(summary: WireCaseSummary): CaseDecision {
  const tries: TryOutcome[] = summary.runs.map((r) => ({
    attempt: r.attempt,
    retry: r.retry,
    status: r.status,
    failureKind: r.failure_kind ?? undefined,
    failureStage: r.failure_stage ?? undefined,
    grading: r.score === null && r.pass_rate === null ? undefined : { score: r.score, passRate: r.pass_rate },
  }));
  const gate = gateOf(summary);
  // A shard compares nothing: its cases got more attempts for their rate alone.
  const schedule = new CaseSchedule({ gate, range: rangeOf(summary), verdictGates: true });
  return decideCase(tries, plannedOf(summary), gate, schedule);
}

/** A case's change against its history (the pooled base side), or `new` when it has none. */
export function changeAgainst(history: CaseHistory, decision: CaseDecision): CaseChange {
  const change = compareCase(pooledSide(history), {
    verdict: decision.verdict,
    counted: decision.counts.counted,
    passed: decision.counts.passed,
    ...(decision.path ? { path: decision.path } : {}),
  });
  if (history.runs.length > 1) change.baseRuns = history.runs.length;
  if (history.keyChanged) change.keyChanged = true;
  return change;
}

export function changeOf(w: WireChange | null): CaseChange | null {
  return w
    ? {
        change: w.change,
        baseVerdict: w.base_verdict,
        baseAttempts: w.base_attempts,
        successRateDelta: w.success_rate_delta,
        pValue: w.p_value,
        significant: w.significant,
        baseFlaky: w.base_flaky ?? null,
        ...(w.base_runs !== undefined ? { baseRuns: w.base_runs } : {}),
        ...(w.key_changed ? { keyChanged: true } : {}),
      }
    : null;
}

/**
 * A merged case as the gate weighs it: decided from its tries, compared with its base runs when
 * the merge has a base (else the shard's own comparison), its usage as the shard summed it.
 */
export function mergedGateCase(
  row: WireIndexRow,
  summary: WireCaseSummary,
  history?: CaseHistory,
  onInconclusive: "pass" | "warn" | "fail" = "warn",
): GateCase {
  const decision = decisionOf(summary);
  // The shard's redacted sentence, when its verdict is the one decided here.
  if (decision.verdict === row.verdict) decision.reason = row.reason;
  const change = history ? changeAgainst(history, decision) : changeOf(row.change);
  const admission = history
    ? admissionOf(history, gateOf(summary), rangeOf(summary), onInconclusive)
    : admissionOfWire(row.admission);
  return {
    identity: { evalPath: row.eval_path, testId: row.test_id, target: row.target },
    rootEvalPath: row.root_eval_path,
    suite: row.suite,
    decision,
    change,
    ...(admission ? { admission } : {}),
    usage: usageTotalsOf(summary.usage),
  };
}
