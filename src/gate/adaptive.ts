/**
 * Adaptive attempts: whether a case's verdict (and its comparison with the baseline) is already
 * decided by the attempts so far, or needs more. Pure; the scheduler asks `attemptsWanted` after
 * each batch, the case verdict records `evidence`. The rules are written down in docs/gate.md.
 */
import type { CaseGate } from "../config/types.js";
import { barnardOneSidedLower, oneSidedBounds } from "./stats.js";

export interface RepeatRange {
  min: number;
  max: number;
}

/** Attempts added at a time once `min` is reached (and the decision is still open). */
export const ADAPTIVE_BATCH = 2;
/** Default significance level of a regression (`gate.regressions.alpha`). */
export const DEFAULT_ALPHA = 0.05;

export type PolicyState = "pass" | "fail" | "open";
export type Evidence = "decided" | "inconclusive";

/** What the attempts so far say about a case under its policy. */
export interface Tally {
  /** Counted attempts (quality outcomes). */
  counted: number;
  passed: number;
  /** Sum of the counted attempts' pass rates (mean_pass_rate_at_least). */
  passRateSum?: number;
}

const EPS = 1e-9;

/**
 * Whether the policy's verdict is settled. Rate policies: the one-sided 95 % bounds of the rate lie
 * wholly on one side of the threshold (lower bound ≥ threshold: pass; upper bound < threshold:
 * fail). `all_attempts_successful` and `any_attempt_successful` count, they do not estimate: their
 * verdict over the attempts run is final (a failure fails the first, a pass passes the second).
 */
export function policyState(gate: Pick<CaseGate, "policy" | "threshold">, t: Tally): PolicyState {
  if (t.counted === 0) return "open";
  switch (gate.policy) {
    case "all_attempts_successful":
      return t.passed === t.counted ? "pass" : "fail";
    case "any_attempt_successful":
      return t.passed > 0 ? "pass" : "fail";
    case "attempt_success_rate_at_least":
    case "mean_pass_rate_at_least": {
      const s = gate.policy === "mean_pass_rate_at_least" ? (t.passRateSum ?? t.passed) : t.passed;
      const [lo, hi] = oneSidedBounds(s, t.counted)!;
      const threshold = gate.threshold ?? 1;
      if (lo + EPS >= threshold) return "pass";
      if (hi < threshold - EPS) return "fail";
      return "open";
    }
  }
}

/**
 * For a rate policy left open: how many more attempts would likely settle it if the rate seen so
 * far held (null when it cannot: the rate sits on the threshold, or the policy is not a rate).
 */
export function attemptsToSettle(gate: Pick<CaseGate, "policy" | "threshold">, t: Tally): number | null {
  if (gate.policy !== "attempt_success_rate_at_least" && gate.policy !== "mean_pass_rate_at_least")
    return null;
  if (t.counted === 0 || policyState(gate, t) !== "open") return null;
  const s = gate.policy === "mean_pass_rate_at_least" ? (t.passRateSum ?? t.passed) : t.passed;
  const rate = s / t.counted;
  for (let more = 1; more <= 1000; more++) {
    const n = t.counted + more;
    if (policyState(gate, { counted: n, passed: rate * n, passRateSum: rate * n }) !== "open") return more;
  }
  return null;
}

export type DropState = "significant" | "not_significant" | "open";

/**
 * A drop of the head's success rate below the base's, by Barnard's one-sided test at `alpha`:
 * significant now, not significant even if every remaining attempt up to `headMax` failed, or open.
 */
export function dropState(base: Tally, head: Tally, headMax: number, alpha: number): DropState {
  if (base.counted === 0 || head.counted === 0) return "not_significant";
  if (barnardOneSidedLower(base.passed, base.counted, head.passed, head.counted) <= alpha)
    return "significant";
  if (head.counted >= headMax) return "not_significant";
  return barnardOneSidedLower(base.passed, base.counted, head.passed, headMax) <= alpha
    ? "open"
    : "not_significant";
}

export interface AttemptsQuestion {
  gate: Pick<CaseGate, "policy" | "threshold">;
  range: RepeatRange;
  /** Attempts scheduled so far (errored ones included). */
  planned: number;
  head: Tally;
  /** The baseline's case, when there is one. */
  base?: (Tally & { verdict: "pass" | "fail" | "error" }) | undefined;
  /** The significance level a drop is tested at (already divided by the cases compared). */
  alpha?: number;
}

/**
 * How many more attempts the case should get now: 0 when its verdict is decided (and so is a drop
 * against a passing baseline), or when it reached `max`; else a batch, never past `max`.
 */
export function attemptsWanted(q: AttemptsQuestion): number {
  const room = q.range.max - q.planned;
  if (room <= 0) return 0;
  if (q.planned < q.range.min) return q.range.min - q.planned;
  const state = policyState(q.gate, q.head);
  let open = state === "open";
  if (!open && state !== "pass" && q.base && q.base.verdict === "pass") {
    open = dropState(q.base, q.head, q.head.counted + room, q.alpha ?? DEFAULT_ALPHA) === "open";
  }
  return open ? Math.min(ADAPTIVE_BATCH, room) : 0;
}

/**
 * A warning when a root's configured attempts cannot detect any drop: even every base attempt
 * passing and every head attempt failing (each side at most `max`, the base deciding at `min`)
 * would not be significant at α over the `cases` compared (Holm's first step, α / cases). Null when
 * a drop can be detected.
 */
export function undetectableAdvice(range: RepeatRange, cases: number, alpha: number): string | null {
  const level = alpha / Math.max(1, cases);
  if (barnardOneSidedLower(range.max, range.max, 0, range.max) <= level) return null;
  const base = Math.max(3, range.min);
  let max = 0;
  for (let n = base; n <= 50; n++) {
    if (barnardOneSidedLower(base, base, 0, n) <= level) {
      max = n;
      break;
    }
  }
  const n = `${range.max} attempt${range.max === 1 ? "" : "s"}`;
  const side = range.min === range.max ? `${n} on each side` : `at most ${n} a side`;
  const of = cases === 1 ? "" : ` over ${cases} cases (Holm: ${+level.toPrecision(2)} for the first)`;
  const advice = max ? `; use repeat: {min: ${base}, max: ${max}}` : "; use more attempts";
  return `with ${side} no drop can be significant at α = ${alpha}${of}${advice}`;
}
