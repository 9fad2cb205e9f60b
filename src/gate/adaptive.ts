/**
 * Adaptive attempts: whether a case's verdict (and its drop against the base) is already decided
 * by the attempts so far, or needs more. Pure; the scheduler asks `attemptsWanted` after each batch,
 * the case verdict records `evidence`, and the unbiased estimates replay the same rule
 * (gate/estimate.ts). The rules are written down in docs/gate.md.
 */
import type { CaseGate } from "../config/types.js";
import { dropPValue, dropPValueAt, lookWeights, pooledDrop, type Side } from "./drop.js";
import {
  ADAPTIVE_BATCH,
  batchOf,
  firstCrossing,
  looksOf,
  type RateDesign,
  type RateState,
  type RepeatRange,
  rateDesign,
  singleLook,
} from "./sequential.js";

export { ADAPTIVE_BATCH, batchOf, looksOf, type RepeatRange };

/** Default significance level of a regression (`gate.regressions.alpha`). */
export const DEFAULT_ALPHA = 0.05;
/** The chance of each wrong decision of a case's rate against its min_rate. */
export const RATE_ALPHA = 0.05;
/**
 * A drop gets more attempts only while the head's rate sits at least this far below the base's:
 * smaller dips of an unchanged agent stop at the next look (the test stays valid: stopping early
 * only lowers the chance of a false alarm).
 */
export const DROP_MARGIN = 0.1;

export type PolicyState = RateState;
export type Evidence = "decided" | "inconclusive";

/** One counted attempt, in attempt order: passed, and its pass rate (mean_pass_rate_at_least). */
export interface Counted {
  passed: boolean;
  passRate: number;
}

export const isRatePolicy = (policy: CaseGate["policy"]) =>
  policy === "attempt_success_rate_at_least" || policy === "mean_pass_rate_at_least";

/** What decides when a case has had enough attempts. */
export interface ScheduleContext {
  gate: Pick<CaseGate, "policy" | "threshold">;
  range: RepeatRange;
  /**
   * Whether the case's verdict gates (it has no history yet, or its history admitted it): only
   * then does a rate still open get more attempts.
   */
  verdictGates: boolean;
  /** The base a drop is tested against (a passing or pooled history) and the level it is tested at. */
  drop?: { base: Side; level: number } | undefined;
}

/**
 * The looks of a case's schedule, its rate design, and the rule that gives it more attempts.
 * The rule reads only the look and the successes at it, so the estimates can replay it.
 */
export class CaseSchedule {
  readonly looks: readonly number[];
  readonly design: RateDesign | undefined;

  constructor(readonly ctx: ScheduleContext) {
    this.looks = looksOf(ctx.range);
    this.design = isRatePolicy(ctx.gate.policy)
      ? rateDesign(ctx.gate.threshold ?? 1, this.looks, RATE_ALPHA)
      : undefined;
  }

  /** The rate still lies between the boundaries at look k. */
  rateOpenAt(k: number, sum: number): boolean {
    const d = this.design;
    if (!d) return false;
    return sum - 1e-9 > d.fail[k]! && sum + 1e-9 < d.pass[k]!;
  }

  /**
   * A drop is still open at look k with `passes` successes: not yet significant, still able to
   * become significant if every later attempt failed, and the head's rate at least DROP_MARGIN
   * below the base's.
   */
  dropOpenAt(k: number, passes: number): boolean {
    const drop = this.ctx.drop;
    if (!drop || drop.base.counted === 0) return false;
    const { base, level } = drop;
    if (passes / this.looks[k]! > base.passed / base.counted - DROP_MARGIN + 1e-9) return false;
    const weights = lookWeights(base.counted, this.looks);
    const at = (j: number) => weights[j]! * pooledDrop(base.passed, base.counted, passes, this.looks[j]!);
    const p = (t: number) => (t > 0 ? dropPValueAt(base.counted, this.looks, t) : 1);
    if (p(at(k)) <= level) return false;
    // Every later attempt failing: the successes stay, the looks grow.
    let best = 0;
    for (let j = k; j < this.looks.length; j++) best = Math.max(best, at(j));
    return p(best) <= level;
  }

  /**
   * Whether a case at look k gets more attempts: `passes` successes, `measure` what its policy
   * measures (the successes, or the summed pass rates of mean_pass_rate_at_least).
   */
  continuesAt(k: number, passes: number, measure: number): boolean {
    if (k >= this.looks.length - 1) return false;
    if (this.ctx.verdictGates && this.rateOpenAt(k, measure)) return true;
    return this.dropOpenAt(k, passes);
  }
}

/** Successes and summed pass rates over the first n counted attempts. */
function totals(outcomes: readonly Counted[], n: number): { passes: number; sum: number } {
  let passes = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    if (outcomes[i]!.passed) passes++;
    sum += outcomes[i]!.passRate;
  }
  return { passes, sum };
}

/**
 * How many more attempts the case should get now: `min` first; then a batch while the rule says
 * so at the look the counted attempts reached (errors can leave them between two looks: then a
 * batch, to reach the next one); never past `max`.
 */
export function attemptsWanted(
  schedule: CaseSchedule,
  planned: number,
  outcomes: readonly Counted[],
): number {
  const { min, max } = schedule.ctx.range;
  const room = max - planned;
  if (room <= 0) return 0;
  if (planned < min) return min - planned;
  const batch = Math.min(batchOf(schedule.ctx.range), room);
  const k = schedule.looks.indexOf(outcomes.length);
  if (k < 0) return batch;
  const { passes, sum } = totals(outcomes, outcomes.length);
  const measure = schedule.ctx.gate.policy === "mean_pass_rate_at_least" ? sum : passes;
  return schedule.continuesAt(k, passes, measure) ? batch : 0;
}

/**
 * The first boundary a case's rate crossed at the looks its counted attempts reached (counting
 * policies are decided by what they count: always). Errors can leave the last count between two
 * looks; it is then looked at too, at the design's per-look level.
 */
export function policyState(schedule: CaseSchedule, outcomes: readonly Counted[]): PolicyState {
  const gate = schedule.ctx.gate;
  const n = outcomes.length;
  if (n === 0) return "open";
  const { passes } = totals(outcomes, n);
  if (gate.policy === "all_attempts_successful") return passes === n ? "pass" : "fail";
  if (gate.policy === "any_attempt_successful") return passes > 0 ? "pass" : "fail";
  const design = schedule.design!;
  const mean = gate.policy === "mean_pass_rate_at_least";
  const reached = schedule.looks.filter((l) => l <= n);
  const sums = reached.map((l) => {
    const t = totals(outcomes, l);
    return mean ? t.sum : t.passes;
  });
  const first = firstCrossing(design, sums);
  if (first.state !== "open" || reached.includes(n)) return first.state;
  const t = totals(outcomes, n);
  const single = singleLook(design.threshold, n, design.level);
  const s = mean ? t.sum : t.passes;
  if (s + 1e-9 >= single.pass) return "pass";
  if (s - 1e-9 <= single.fail) return "fail";
  return "open";
}

/**
 * For a rate left open: the attempts of a fresh fixed run (`--repeat N`) that would likely settle
 * it if the rate seen so far held (null when it cannot: the rate sits on the threshold, or the
 * policy is not a rate).
 */
export function attemptsToSettle(
  gate: Pick<CaseGate, "policy" | "threshold">,
  outcomes: readonly Counted[],
): number | null {
  if (!isRatePolicy(gate.policy) || outcomes.length === 0) return null;
  const { passes, sum } = totals(outcomes, outcomes.length);
  const rate = (gate.policy === "mean_pass_rate_at_least" ? sum : passes) / outcomes.length;
  const t = gate.threshold ?? 1;
  if (Math.abs(rate - t) < 1e-9) return null;
  for (let n = 1; n <= 1000; n++) {
    const b = singleLook(t, n, RATE_ALPHA);
    const s = Math.round(rate * n);
    if (s >= b.pass || s <= b.fail) return n;
  }
  return null;
}

/**
 * A warning when a root's configured attempts cannot detect any drop: even every base attempt
 * passing (`baseAttempts` of them, pooled over the history) and every head attempt failing would
 * not be significant at α over the `cases` compared (Holm's first step, α / cases). Null when a
 * drop can be detected.
 */
export function undetectableAdvice(
  range: RepeatRange,
  cases: number,
  alpha: number,
  baseAttempts = range.min,
): string | null {
  const level = alpha / Math.max(1, cases);
  const clearest = (r: RepeatRange, base: number) => {
    const looks = looksOf(r);
    return dropPValue(
      { counted: base, passed: base },
      looks,
      looks.map(() => 0),
    );
  };
  if (clearest(range, baseAttempts) <= level) return null;
  const base = Math.max(3, baseAttempts);
  let max = 0;
  for (let n = Math.max(3, range.min); n <= 50; n++) {
    if (clearest({ min: Math.min(Math.max(3, range.min), n), max: n }, base) <= level) {
      max = n;
      break;
    }
  }
  const n = `${range.max} attempt${range.max === 1 ? "" : "s"}`;
  const side = range.min === range.max ? `${n} on each side` : `at most ${n} a side`;
  const of = cases === 1 ? "" : ` over ${cases} cases (Holm: ${+level.toPrecision(2)} for the first)`;
  const advice = max ? `; use repeat: {min: ${Math.max(3, range.min)}, max: ${max}}` : "; use more attempts";
  return `with ${side} no drop can be significant at α = ${alpha}${of}${advice}`;
}
