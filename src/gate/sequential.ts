/**
 * A case's success rate against its `min_rate`, decided at the looks its `repeat` schedule takes:
 * an exact group-sequential design. At each look the exact one-sided binomial test runs at one
 * per-look level; that level is the largest whose overall chances of a wrong decision, computed
 * exactly over every path of the schedule, stay within α on each side (docs/decisions/0195).
 * Pure; designs are cached (a run asks for the same few).
 */
import { addTrials, binomialCdf, binomialPmf } from "./binomial.js";

/** Attempts added at a time once `min` is reached (and the decision is still open). */
export const ADAPTIVE_BATCH = 2;
/** Long schedules add bigger batches: at most this many looks after `min`. */
export const MAX_LOOKS = 16;

export interface RepeatRange {
  min: number;
  max: number;
}

/** The attempts a schedule adds at a time: 2, or more when max − min is over 2 × MAX_LOOKS. */
export function batchOf(range: RepeatRange): number {
  return Math.max(ADAPTIVE_BATCH, Math.ceil((range.max - range.min) / MAX_LOOKS));
}

/**
 * The counts of counted attempts at which the schedule looks: `min`, then every batch, and `max`
 * (a fixed `repeat: N` looks once, at N).
 */
export function looksOf(range: RepeatRange): number[] {
  const looks: number[] = [];
  const batch = batchOf(range);
  for (let n = Math.max(1, range.min); n < range.max; n += batch) looks.push(n);
  looks.push(Math.max(1, range.max));
  return looks;
}

export interface RateDesign {
  threshold: number;
  looks: readonly number[];
  /** The per-look level of the exact binomial test. */
  level: number;
  /** At look k, the rate is decided ≥ threshold when successes ≥ pass[k] (looks.length + 1: never). */
  pass: readonly number[];
  /** At look k, the rate is decided < threshold when successes ≤ fail[k] (−1: never). */
  fail: readonly number[];
  /** The exact chances, at a true rate equal to the threshold, that the first decision is pass / fail. */
  errors: { pass: number; fail: number };
}

const TOLERANCE = 1e-12;

const cdfs = new Map<string, Float64Array>();

/** P(S ≤ s) for s = 0..n at the threshold, computed once per (n, threshold). */
function cdfAt(n: number, threshold: number): Float64Array {
  const key = `${n}|${threshold}`;
  let cdf = cdfs.get(key);
  if (!cdf) {
    cdf = binomialCdf(n, threshold);
    if (cdfs.size > 5000) cdfs.clear();
    cdfs.set(key, cdf);
  }
  return cdf;
}

/** The boundaries of the exact one-sided binomial tests at `level`, look by look. */
function boundaries(threshold: number, looks: readonly number[], level: number) {
  const pass: number[] = [];
  const fail: number[] = [];
  for (const n of looks) {
    const cdf = cdfAt(n, threshold);
    let a = n + 1;
    // P(S ≥ s) = 1 − P(S ≤ s − 1): the smallest s whose upper tail is within the level.
    for (let s = n; s >= 0; s--) {
      const upper = s === 0 ? 1 : 1 - cdf[s - 1]!;
      if (upper > level + TOLERANCE) break;
      a = s;
    }
    let r = -1;
    for (let s = 0; s <= n; s++) {
      if (cdf[s]! > level + TOLERANCE) break;
      r = s;
    }
    pass.push(a);
    fail.push(r);
  }
  return { pass, fail };
}

/**
 * The chances, at a true rate `p`, that the first boundary crossed is pass / fail, and the
 * distribution of successes at the last look of the paths that crossed neither.
 */
export function crossingChances(
  looks: readonly number[],
  pass: readonly number[],
  fail: readonly number[],
  p: number,
): { pass: number; fail: number; open: Float64Array } {
  let dist: Float64Array = new Float64Array([1]);
  let prev = 0;
  let toPass = 0;
  let toFail = 0;
  looks.forEach((n, k) => {
    dist = addTrials(dist, binomialPmf(n - prev, p));
    prev = n;
    for (let s = 0; s < dist.length; s++) {
      if (s >= pass[k]!) {
        toPass += dist[s]!;
        dist[s] = 0;
      } else if (s <= fail[k]!) {
        toFail += dist[s]!;
        dist[s] = 0;
      }
    }
  });
  return { pass: toPass, fail: toFail, open: dist };
}

/** Every distinct one-sided tail probability of the looks: the levels at which a boundary moves. */
function candidateLevels(threshold: number, looks: readonly number[]): number[] {
  const levels = new Set<number>();
  for (const n of looks) {
    const cdf = cdfAt(n, threshold);
    for (let s = 0; s <= n; s++) {
      levels.add(cdf[s]!);
      levels.add(s === 0 ? 1 : 1 - cdf[s - 1]!);
    }
  }
  return [...levels].filter((x) => x > 0).sort((a, b) => a - b);
}

const designs = new Map<string, RateDesign>();

/**
 * The design of "rate ≥ threshold" at these looks with at most `alpha` chance of each wrong
 * decision. The chances are computed at a true rate equal to the threshold, where they are
 * largest: a path with more successes never decides fail sooner nor pass later.
 */
export function rateDesign(threshold: number, looks: readonly number[], alpha: number): RateDesign {
  const key = `${threshold}|${alpha}|${looks.join(",")}`;
  const cached = designs.get(key);
  if (cached) return cached;
  const at = (level: number) => {
    const b = boundaries(threshold, looks, level);
    const e = crossingChances(looks, b.pass, b.fail, threshold);
    return { level, ...b, errors: { pass: e.pass, fail: e.fail } };
  };
  const fits = (d: ReturnType<typeof at>) =>
    d.errors.pass <= alpha + TOLERANCE && d.errors.fail <= alpha + TOLERANCE;
  let design = at(0);
  if (looks.reduce((a, n) => a + n + 1, 0) <= 400) {
    // Few levels move a boundary: the largest that fits, tried from the top.
    const candidates = candidateLevels(threshold, looks);
    for (let i = candidates.length - 1; i >= 0; i--) {
      const d = at(candidates[i]!);
      if (fits(d)) {
        design = d;
        break;
      }
    }
  } else {
    // Long schedules: a larger level moves the boundaries inwards and, but for the discreteness of
    // the tests, raises both errors; bisection on its logarithm keeps a level that fits.
    let lo = -30;
    let hi = 0;
    for (let i = 0; i < 50; i++) {
      const mid = (lo + hi) / 2;
      const d = at(Math.exp(mid));
      if (fits(d)) {
        lo = mid;
        design = d;
      } else hi = mid;
    }
  }
  const out: RateDesign = { threshold, looks: [...looks], ...design };
  designs.set(key, out);
  return out;
}

export type RateState = "pass" | "fail" | "open";

/**
 * The first boundary the path crosses. `sums[k]` is the successes (or summed pass rates) over the
 * first looks[k] counted attempts, for the looks reached so far.
 */
export function firstCrossing(
  design: RateDesign,
  sums: readonly number[],
): { state: RateState; look: number } {
  const eps = 1e-9;
  for (let k = 0; k < sums.length && k < design.looks.length; k++) {
    if (sums[k]! + eps >= design.pass[k]!) return { state: "pass", look: k };
    if (sums[k]! - eps <= design.fail[k]!) return { state: "fail", look: k };
  }
  return { state: "open", look: -1 };
}

/**
 * An extra look at `n` attempts with the design's per-look level: for a case whose errors left it
 * between two planned looks when it ended (the stated α is then approximate).
 */
export function extraLook(design: RateDesign, n: number, sum: number): RateState {
  const b = boundaries(design.threshold, [n], design.level);
  if (sum + 1e-9 >= b.pass[0]!) return "pass";
  if (sum - 1e-9 <= b.fail[0]!) return "fail";
  return "open";
}

/** Successes a fixed, single-look run of `n` attempts needs to decide pass (or fail) at `alpha`. */
export function singleLook(threshold: number, n: number, alpha: number): { pass: number; fail: number } {
  const b = boundaries(threshold, [n], alpha);
  return { pass: b.pass[0]!, fail: b.fail[0]! };
}
