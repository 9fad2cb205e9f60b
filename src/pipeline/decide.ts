/**
 * The run's decisions, made from the in-memory results: each case's verdict and its change
 * against the baseline, the scheduler's question for adaptive attempts, and the run gate. The
 * bundle records them; it is never read back to decide.
 */
import { sideOfRow } from "../bundle/compare.js";
import { rowKey } from "../bundle/read.js";
import type { WireIndexRow } from "../bundle/wire.js";
import type { FinishedCase } from "../bundle/write.js";
import { type CaseGate, type CaseSpec, identityKey, type Plan } from "../config/types.js";
import { attemptsWanted } from "../gate/adaptive.js";
import { type CaseDecision, decideCase } from "../gate/case.js";
import { compareCase } from "../gate/compare.js";
import { decideRun, type GateCase, type RunGate } from "../gate/run.js";
import type { AttemptResult, CaseRun } from "../run/types.js";
import { totalsOfAttempts } from "../run/usage.js";

/** The baseline's cases by identity (index rows of the base branch's bundle). */
export type BaseRows = ReadonlyMap<string, WireIndexRow>;

export function baseRowsOf(rows: readonly WireIndexRow[] | undefined): BaseRows {
  return new Map((rows ?? []).map((r) => [rowKey(r), r]));
}

/** Each case's verdict from its tries, and its change against the baseline when there is one. */
export function finishCases(runs: readonly CaseRun[], baseRows: BaseRows | undefined): FinishedCase[] {
  return runs.map((r) => {
    const planned = Math.max(r.spec.repeat, ...r.tries.map((t) => t.attempt));
    const decision = decideCase(r.tries, planned, r.spec.gate);
    const base = baseRows?.get(identityKey(r.spec.identity));
    const change = baseRows
      ? compareCase(sideOfRow(base), {
          verdict: decision.verdict,
          counted: decision.counts.counted,
          passed: decision.counts.passed,
        })
      : null;
    return { spec: r.spec, tries: r.tries, decision, change };
  });
}

/** A finished case as the gate weighs it. */
export function gateCaseOf(c: FinishedCase): GateCase {
  return {
    identity: c.spec.identity,
    rootEvalPath: c.spec.rootEvalPath,
    suite: c.spec.suite,
    decision: c.decision,
    change: c.change,
    usage: totalsOfAttempts(c.tries),
  };
}

/**
 * The run gate over the finished cases but the `excluded` ones (quarantined) and the proposed ones
 * (new in the pull request, docs/exam.md): they run and are reported, but do not gate.
 */
export function decideRunGate(
  plan: Plan,
  finished: readonly FinishedCase[],
  budgetStops: ReadonlyMap<string, string>,
  excluded: (c: FinishedCase) => boolean = () => false,
): RunGate {
  const gating = finished.filter((c) => !excluded(c) && c.spec.exam?.status !== "proposed");
  return decideRun(plan.roots, gating.map(gateCaseOf), budgetStops);
}

/**
 * Whether a case's `error` verdict is one that more attempts cannot change: an attempt cancelled, or
 * errored for good under `on_error: fail | retry` (it makes the case `error` whatever the others
 * do), or, under `exclude`, no attempt counted at all (an agent that cannot start fails the same way
 * every time: more tries would only repeat it).
 */
function errorSettled(d: CaseDecision, gate: CaseGate): boolean {
  if (d.verdict !== "error") return false;
  if (d.counts.cancelled > 0 || d.counts.counted === 0) return true;
  return d.counts.errored > 0 && gate.onError !== "exclude";
}

/**
 * The scheduler's question before a retry: whether the case's verdict is already settled as
 * `error` by the attempts whose tries are over, so that no retry can change it.
 */
export function caseErrorSettled(spec: CaseSpec, settledTries: readonly AttemptResult[]): boolean {
  if (settledTries.length === 0) return false;
  const planned = Math.max(...settledTries.map((t) => t.attempt));
  return errorSettled(decideCase(settledTries, planned, spec.gate), spec.gate);
}

/**
 * The scheduler's question for adaptive attempts, answered by the gate: the case's verdict so far,
 * and (against a baseline case that passed, with `regressions.evidence: significant`) whether a drop
 * is still open at the root's α divided by the cases compared (the strictest step of Holm's
 * correction, so a drop decided here stays decided in the gate).
 */
export function adaptiveAttempts(
  plan: Plan,
  baseRows: BaseRows,
): (spec: CaseSpec, tries: readonly AttemptResult[], planned: number) => number {
  const roots = new Map(plan.roots.map((r) => [r.evalPath, r]));
  const compared = new Map<string, number>();
  for (const c of plan.cases) {
    if (baseRows.has(identityKey(c.identity)))
      compared.set(c.rootEvalPath, (compared.get(c.rootEvalPath) ?? 0) + 1);
  }
  return (spec, tries, planned) => {
    const d = decideCase(tries, planned, spec.gate);
    if (errorSettled(d, spec.gate)) return 0;
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
