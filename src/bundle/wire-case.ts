/**
 * A finished case on the wire: its summary.json and its index.jsonl row, before redaction (the
 * bundle writer redacts them as it writes them).
 */
import type { AttemptResult } from "../run/types.js";
import {
  CASE_SCHEMA,
  type WireCaseSummary,
  type WireIndexRow,
  type WireRunRef,
  type WireUsageTotals,
  wireAdmission,
  wireChange,
  wireCounts,
  wireIdentity,
} from "./wire.js";
import { wireCaseEnvironment, wireCaseSetup } from "./wire-attempt.js";
import type { FinishedCase } from "./write.js";

/** The case's summary.json: its decision, statistics, history, every try, its environment and setup. */
export function wireCaseSummary(c: FinishedCase, usage: WireUsageTotals | null): WireCaseSummary {
  const d = c.decision;
  const finals = new Set(lastTryKeys(c.tries));
  const runs: WireRunRef[] = c.tries.map((t) => ({
    attempt: t.attempt,
    retry: t.retry,
    counted: finals.has(`${t.attempt}/${t.retry}`) && (t.status === "passed" || t.status === "failed"),
    status: t.status,
    failure_stage: t.failureStage ?? null,
    failure_kind: t.failureKind ?? null,
    message: t.message ?? null,
    score: t.grading?.score ?? null,
    pass_rate: t.grading?.passRate ?? null,
    duration_ms: t.durationMs,
    diff_truncated: t.diff?.truncated ?? false,
    dir: t.dirName,
  }));
  return {
    schema: CASE_SCHEMA,
    ...wireIdentity(c.spec),
    suite: c.spec.suite,
    provider: c.spec.target.provider,
    model: c.spec.target.model ?? null,
    description: c.spec.test.description ?? null,
    instruction: c.spec.test.instruction,
    tags: c.spec.test.tags,
    policy: {
      name: c.spec.gate.policy,
      min_rate: c.spec.gate.threshold ?? null,
      on_error: c.spec.gate.onError,
    },
    ...wireDecision(c.decision),
    repeat: c.spec.repeatMax ? { min: c.spec.repeat, max: c.spec.repeatMax } : null,
    ...(c.historyKey ? { history_key: c.historyKey } : {}),
    ...(c.admission ? { admission: wireAdmission(c.admission) } : {}),
    ...(c.history
      ? {
          history: c.history.runs.map((r) => ({
            run_id: r.runId,
            git_sha: r.gitSha,
            started_at: r.startedAt,
            verdict: r.verdict,
            counted: r.counted,
            passed: r.passed,
          })),
        }
      : {}),
    attempts: wireCounts(d),
    stats: {
      attempt_success_rate: d.stats.attemptSuccessRate,
      wilson_95: d.stats.wilson95,
      mean_score: d.stats.meanScore,
      mean_pass_rate: d.stats.meanPassRate,
      pass_at_k: Object.fromEntries(d.stats.passAtK.map((v, i) => [String(i + 1), v])),
      pass_hat_k: Object.fromEntries(d.stats.passHatK.map((v, i) => [String(i + 1), v])),
      ...(d.stats.estimate
        ? {
            estimate: {
              success_rate: d.stats.estimate.successRate,
              method: d.stats.estimate.method,
            },
          }
        : {}),
    },
    usage,
    runs,
    change: c.change ? wireChange(c.change) : null,
    ...wireCaseEnvironment(c.spec, c.tries),
    ...wireCaseSetup(c.tries),
  } satisfies WireCaseSummary;
}

/** The case's index.jsonl row: its verdict and counts, and where its files are in the bundle. */
export function wireIndexRow(
  c: FinishedCase,
  resultDir: string,
  usage: WireUsageTotals | null,
): WireIndexRow {
  const d = c.decision;
  return {
    ...wireIdentity(c.spec),
    suite: c.spec.suite,
    root_eval_path: c.spec.rootEvalPath,
    provider: c.spec.target.provider,
    model: c.spec.target.model ?? null,
    tags: c.spec.test.tags,
    ...wireDecision(c.decision),
    ...(c.historyKey ? { history_key: c.historyKey } : {}),
    repeat: c.spec.repeatMax ? { min: c.spec.repeat, max: c.spec.repeatMax } : null,
    ...(c.admission ? { admission: wireAdmission(c.admission) } : {}),
    attempts: wireCounts(d),
    attempt_success_rate: d.stats.attemptSuccessRate,
    mean_score: d.stats.meanScore,
    mean_pass_rate: d.stats.meanPassRate,
    usage,
    result_dir: resultDir,
    summary_path: `${resultDir}/summary.json`,
    runs: c.tries.map((t) => ({
      attempt: t.attempt,
      retry: t.retry,
      status: t.status,
      failure_kind: t.failureKind ?? null,
      diff_truncated: t.diff?.truncated ?? false,
      dir: `${resultDir}/${t.dirName}`,
      result_path: `${resultDir}/${t.dirName}/result.json`,
      grading_path: t.grading ? `${resultDir}/${t.dirName}/grading.json` : null,
      diff_path: t.diff ? `${resultDir}/${t.dirName}/diff.patch` : null,
    })),
    change: c.change ? wireChange(c.change) : null,
    exam: c.spec.exam ? { status: c.spec.exam.status, changes: [...c.spec.exam.changes] } : null,
  } satisfies WireIndexRow;
}

/** The case's decision, as its summary.json and its index row both say it. */
function wireDecision(d: FinishedCase["decision"]) {
  return {
    verdict: d.verdict,
    classification: d.classification,
    flaky: d.flaky,
    reason: d.reason,
    evidence: d.evidence ?? "decided",
    settle_attempts: d.settleAttempts ?? null,
  };
}

/** Each attempt's last try, as `attempt/retry`: the tries that count. */
function lastTryKeys(tries: readonly AttemptResult[]): string[] {
  const byAttempt = new Map<number, number>();
  for (const t of tries) byAttempt.set(t.attempt, Math.max(byAttempt.get(t.attempt) ?? 0, t.retry));
  return [...byAttempt.entries()].map(([a, r]) => `${a}/${r}`);
}
