/**
 * Cases earn the right to block (docs/decisions/0197). A case's verdict gates the pull request
 * when it has no history yet (nothing else would catch a broken agent), or when its history admits
 * it: enough comparable base runs, and a base rate at which its own policy, over its own schedule,
 * would fail an unchanged agent rarely. A case the history does not admit is reported without
 * gating by its verdict; a significant drop against its history still blocks. Pure.
 */
import type { CaseGate } from "../config/types.js";
import { CaseSchedule } from "./adaptive.js";
import { binomialCdf } from "./binomial.js";
import type { CaseHistory } from "./history.js";
import { crossingChances, type RepeatRange } from "./sequential.js";

/** Comparable base runs a case needs before its history can admit it. */
export const ADMIT_RUNS = 5;
/** The largest chance that an admitted case's verdict fails an unchanged agent. */
export const ADMIT_FAIL = 0.005;
/** The base rate is taken at its one-sided lower confidence bound of this level (Clopper–Pearson). */
export const ADMIT_CONFIDENCE = 0.9;

export type AdmissionState = "admitted" | "reported" | "unproven";

export interface Admission {
  /**
   * admitted: its verdict gates; reported: its history does not admit it, its verdict is reported
   * without gating; unproven: fewer than ADMIT_RUNS comparable runs (or no base): its verdict gates.
   */
  state: AdmissionState;
  /** Comparable base runs. */
  runs: number;
  /** The pooled base rate, and its lower bound the chance below was computed at. */
  rate: number | null;
  lowerBound: number | null;
  /** The chance the case's verdict fails an agent at the lower bound (null: not computed). */
  failChance: number | null;
  /** It was admitted before its newest base run and is not now: its base rate fell. */
  demoted?: boolean;
}

/** The one-sided lower confidence bound of a binomial rate (Clopper–Pearson), by bisection on the tail. */
export function lowerBound(passed: number, counted: number, confidence = ADMIT_CONFIDENCE): number {
  if (counted === 0 || passed === 0) return 0;
  // The largest p with P(X ≥ passed | p) ≤ 1 − confidence.
  const upperTail = (p: number) => 1 - (binomialCdf(counted, p)[passed - 1] ?? 0);
  let lo = 0;
  let hi = passed / counted;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (upperTail(mid) <= 1 - confidence) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * The chance that the case's verdict is fail for an agent whose attempts pass with probability p:
 * counting policies from their `min` attempts; rate policies over the schedule's exact design,
 * an inconclusive end counting as `on_inconclusive` says (warn: the point estimate).
 */
export function verdictFailChance(
  gate: Pick<CaseGate, "policy" | "threshold">,
  range: RepeatRange,
  p: number,
  onInconclusive: "pass" | "warn" | "fail" = "warn",
): number {
  if (gate.policy === "all_attempts_successful") return 1 - p ** range.min;
  if (gate.policy === "any_attempt_successful") return (1 - p) ** range.min;
  const schedule = new CaseSchedule({ gate, range, verdictGates: true });
  const d = schedule.design!;
  const c = crossingChances(d.looks, d.pass, d.fail, p);
  if (onInconclusive === "pass") return c.fail;
  if (onInconclusive === "fail") return c.fail + c.open.reduce((a, x) => a + x, 0);
  const n = d.looks[d.looks.length - 1]!;
  let below = 0;
  c.open.forEach((x, s) => {
    if (s / n + 1e-9 < d.threshold) below += x;
  });
  return c.fail + below;
}

/** Whether the runs admit the case: enough of them, and a base rate its verdict rarely fails at. */
function admits(
  history: CaseHistory,
  gate: Pick<CaseGate, "policy" | "threshold">,
  range: RepeatRange,
  onInconclusive: "pass" | "warn" | "fail",
): Omit<Admission, "demoted"> {
  const runs = history.keyChanged ? 0 : history.runs.length;
  const counted = history.runs.reduce((a, r) => a + r.first.counted, 0);
  const passed = history.runs.reduce((a, r) => a + r.first.passed, 0);
  const rate = counted > 0 ? passed / counted : null;
  if (runs < ADMIT_RUNS || rate === null)
    return { state: "unproven", runs, rate, lowerBound: null, failChance: null };
  const lo = lowerBound(passed, counted);
  const failChance = verdictFailChance(gate, range, lo, onInconclusive);
  return {
    state: failChance <= ADMIT_FAIL ? "admitted" : "reported",
    runs,
    rate,
    lowerBound: lo,
    failChance,
  };
}

/** The case's admission from its comparable base runs (none: unproven). */
export function admissionOf(
  history: CaseHistory | undefined,
  gate: Pick<CaseGate, "policy" | "threshold">,
  range: RepeatRange,
  onInconclusive: "pass" | "warn" | "fail" = "warn",
): Admission {
  if (!history) return { state: "unproven", runs: 0, rate: null, lowerBound: null, failChance: null };
  const now = admits(history, gate, range, onInconclusive);
  if (now.state !== "reported") return now;
  const before = admits({ ...history, runs: history.runs.slice(1) }, gate, range, onInconclusive);
  return before.state === "admitted" ? { ...now, demoted: true } : now;
}
