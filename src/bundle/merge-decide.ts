/**
 * A merge decides its gate the way a run does: each case's verdict from its tries, as the shard's
 * case summary.json lists them, with the case's own gate policy, then the run gate over every case
 * (gate/run.ts). The verdicts the shards' index rows claim are not what the merged gate trusts.
 */
import type { CaseGate } from "../config/types.js";
import { type CaseDecision, decideCase, type TryOutcome } from "../gate/case.js";
import { type CaseChange, compareCase } from "../gate/compare.js";
import type { GateCase } from "../gate/run.js";
import { sideOfRow } from "./compare.js";
import { usageTotalsOf, type WireCaseSummary, type WireChange, type WireIndexRow } from "./wire.js";

/** The case's verdict, decided again from its tries. */
/** A case summary's policy rate: `min_rate`, or `threshold` in bundles written before the rename. */
export function policyRate(policy: { min_rate?: number | null; threshold?: number | null }): number | null {
  return policy.min_rate ?? policy.threshold ?? null;
}

export function decisionOf(summary: WireCaseSummary): CaseDecision {
  const tries: TryOutcome[] = summary.runs.map((r) => ({
    attempt: r.attempt,
    retry: r.retry,
    status: r.status,
    failureKind: r.failure_kind ?? undefined,
    grading: r.score === null && r.pass_rate === null ? undefined : { score: r.score, passRate: r.pass_rate },
  }));
  const gate: CaseGate = {
    policy: summary.policy.name,
    onError: summary.policy.on_error,
    retries: 0,
    ...(policyRate(summary.policy) !== null ? { threshold: policyRate(summary.policy)! } : {}),
  };
  const planned = Math.max(summary.attempts.planned, ...tries.map((t) => t.attempt));
  return decideCase(tries, planned, gate);
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
      }
    : null;
}

/**
 * A merged case as the gate weighs it: decided from its tries, compared with the baseline's row
 * when the merge has one (else the shard's own comparison), its usage as the shard summed it.
 */
export function mergedGateCase(
  row: WireIndexRow,
  summary: WireCaseSummary,
  base: WireIndexRow | undefined,
  compared: boolean,
): GateCase {
  const decision = decisionOf(summary);
  // The shard's redacted sentence, when its verdict is the one decided here.
  if (decision.verdict === row.verdict) decision.reason = row.reason;
  const change = compared
    ? compareCase(sideOfRow(base), {
        verdict: decision.verdict,
        counted: decision.counts.counted,
        passed: decision.counts.passed,
      })
    : changeOf(row.change);
  return {
    identity: { evalPath: row.eval_path, testId: row.test_id, target: row.target },
    rootEvalPath: row.root_eval_path,
    suite: row.suite,
    decision,
    change,
    usage: usageTotalsOf(summary.usage),
  };
}
