/**
 * `evalgate calibrate`: A/A runs of an unchanged commit, read back as each case's history. For every
 * case: its rate over all runs with its exact interval, whether those runs admit it to gate (the
 * gate's own admission rule), and the fixed `repeat` at which its own policy rarely fails an
 * unchanged agent at that rate (docs/decisions/0225). Pure: the runs are made by cli/calibrate.ts.
 */
import type { BaseHistory } from "../bundle/history.js";
import { type CaseGate, type CaseSpec, type EvalRoot, identityKey } from "../config/types.js";
import { type Admission, admissionOf, lowerBound, verdictFailChance } from "../gate/admission.js";
import type { CalibrateCaseView } from "../report/calibrate.js";

/** The largest chance that the recommended repeat fails an unchanged agent at the measured rate. */
export const CALIBRATE_FALSE_FAIL = 0.05;
/** Repeats tried for a recommendation: past this, none is given. */
export const CALIBRATE_MAX_REPEAT = 50;

/** The two-sided exact (Clopper–Pearson) interval of a binomial rate at `confidence`. */
export function clopperPearson(passed: number, counted: number, confidence = 0.95): [number, number] | null {
  if (counted === 0) return null;
  const oneSided = 1 - (1 - confidence) / 2;
  const lo = lowerBound(passed, counted, oneSided);
  const hi = passed === counted ? 1 : 1 - lowerBound(counted - passed, counted, oneSided);
  return [lo, hi];
}

/**
 * The smallest fixed `repeat` N (1..CALIBRATE_MAX_REPEAT) at which the case's verdict, by the gate's
 * own rule (verdictFailChance), fails an agent whose attempts pass at `rate` at most
 * CALIBRATE_FALSE_FAIL of the time; null when none does (or no rate). For all_attempts_successful
 * more attempts only add chances to fail: it is 1 or none.
 */
export function recommendRepeat(
  gate: Pick<CaseGate, "policy" | "threshold">,
  rate: number | null,
  onInconclusive: "pass" | "warn" | "fail" = "warn",
): { repeat: number; failChance: number } | null {
  if (rate === null) return null;
  const max = gate.policy === "all_attempts_successful" ? 1 : CALIBRATE_MAX_REPEAT;
  for (let n = 1; n <= max; n++) {
    const failChance = verdictFailChance(gate, { min: n, max: n }, rate, onInconclusive);
    if (failChance <= CALIBRATE_FALSE_FAIL + 1e-12) return { repeat: n, failChance };
  }
  return null;
}

/** Each case of the plan, read from the calibration runs' history. */
export function calibrateView(
  history: BaseHistory,
  plan: { roots: readonly EvalRoot[]; cases: readonly CaseSpec[] },
): CalibrateCaseView[] {
  const roots = new Map(plan.roots.map((r) => [r.evalPath, r]));
  return plan.cases.map((spec) => {
    // The bundles' row key (bundle/read.ts rowKey) spells the identity the same way.
    const key = identityKey(spec.identity);
    const all = history.runsOf(key);
    const newest = history.of(key, all[0]?.key ?? null);
    // Every counted attempt of the comparable runs: all ran on the same commit, so all are A/A.
    const counted = newest.runs.reduce((a, r) => a + r.counted, 0);
    const passed = newest.runs.reduce((a, r) => a + r.passed, 0);
    const rate = counted > 0 ? passed / counted : null;
    const onInconclusive = roots.get(spec.rootEvalPath)?.onInconclusive ?? "warn";
    const range = { min: spec.repeat, max: spec.repeatMax ?? spec.repeat };
    const admission: Admission = admissionOf(
      all.length ? newest : undefined,
      spec.gate,
      range,
      onInconclusive,
    );
    const rec = recommendRepeat(spec.gate, rate, onInconclusive);
    return {
      evalPath: spec.identity.evalPath,
      testId: spec.identity.testId,
      target: spec.identity.target,
      suite: spec.suite,
      policy: spec.gate.policy,
      minRate: spec.gate.threshold ?? null,
      repeat: range,
      runs: newest.runs.length,
      perRun: [...newest.runs].reverse().map((r) => ({ counted: r.counted, passed: r.passed })),
      counted,
      passed,
      rate,
      interval95: clopperPearson(passed, counted),
      admission,
      recommended: rec,
    };
  });
}
