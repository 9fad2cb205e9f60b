/**
 * Is the head's success rate lower than the base's? Barnard's unconditional exact test, extended
 * to the looks of the head's `repeat` schedule (docs/decisions/0195): the statistic is the largest,
 * over the looks reached, of the pooled score statistic weighted by √(I_k / I_K) (I the information
 * of the two samples at a look: the O'Brien–Fleming shape, strict early and lenient at the end);
 * the p-value is the largest, over the common success probability π, chance that a path of the
 * whole schedule reaches that statistic at some look. With one look it is Barnard's test as
 * scipy.stats.barnard_exact computes it (ties counted as extreme). Stopping early can only lower
 * the chance of reaching it, so the p-value stays valid whatever made the case stop.
 * Exact where cheap; past EXACT_COST, a bound that is never smaller (boundedCrossing). Pure.
 */
import { binomialCdf, binomialPmf } from "./binomial.js";

export interface Side {
  /** Counted attempts. */
  counted: number;
  passed: number;
}

/** The pooled (score) statistic of Barnard's test: positive when the head's rate is lower. */
export function pooledDrop(baseOk: number, baseN: number, headOk: number, headN: number): number {
  const pooled = (baseOk + headOk) / (baseN + headN);
  const variance = pooled * (1 - pooled) * (1 / baseN + 1 / headN);
  if (variance <= 0) return 0;
  return (baseOk / baseN - headOk / headN) / Math.sqrt(variance);
}

const information = (baseN: number, headN: number) => 1 / (1 / baseN + 1 / headN);

/** The weight of each look: √(I_k / I_K). */
export function lookWeights(baseN: number, looks: readonly number[]): number[] {
  const last = information(baseN, looks[looks.length - 1]!);
  return looks.map((n) => Math.sqrt(information(baseN, n) / last));
}

/** Work units (base counts × head path steps × points of π) the exact computation may take. */
export const EXACT_COST = 5e7;

/** The work of the exact computation over several looks. */
export function exactCost(baseN: number, looks: readonly number[]): number {
  const spread = Math.min(baseN + 1, Math.ceil(8 * Math.sqrt(baseN)) + 1);
  const path = looks.reduce((a, n, k) => a + n * (n - (k === 0 ? 0 : looks[k - 1]!) + 1), 0);
  return spread * path * 180;
}
const TIE = 1e-9;

/**
 * For each look, the largest head count in the rejection region for each base count (−1: none).
 * The region {statistic ≥ t} of the pooled score statistic is a prefix in the head count and
 * grows with the base count (Barnard's convexity), so one pointer walks it.
 */
function regionOf(
  baseN: number,
  looks: readonly number[],
  weights: readonly number[],
  t: number,
): Int32Array[] {
  return looks.map((n, k) => {
    const hmax = new Int32Array(baseN + 1);
    let h = -1;
    for (let b = 0; b <= baseN; b++) {
      while (h + 1 <= n && weights[k]! * pooledDrop(b, baseN, h + 1, n) >= t - TIE) h++;
      hmax[b] = h;
    }
    return hmax;
  });
}

/** P(some look reaches the region) when both sides succeed with probability `pi`. */
function crossing(
  pi: number,
  baseN: number,
  looks: readonly number[],
  region: readonly Int32Array[],
): number {
  const pb = binomialPmf(baseN, pi);
  if (looks.length === 1) {
    const cdf = binomialCdf(looks[0]!, pi);
    let p = 0;
    for (let b = 0; b <= baseN; b++) {
      const h = region[0]![b]!;
      if (h >= 0) p += pb[b]! * cdf[h]!;
    }
    return p;
  }
  const steps = looks.map((n, k) => binomialPmf(n - (k === 0 ? 0 : looks[k - 1]!), pi));
  const size = looks[looks.length - 1]! + 1;
  const buffers = [new Float64Array(size), new Float64Array(size)] as const;
  let p = 0;
  let hit = 0;
  let previous = -1;
  for (let b = 0; b <= baseN; b++) {
    if (pb[b]! < 1e-17 || region.every((r) => r[b]! < 0)) continue;
    // The regions grow with b: base counts with the same region are neighbours, computed once.
    if (previous < 0 || region.some((r) => r[b] !== r[previous]))
      hit = pathHits(looks, steps, region, b, buffers);
    previous = b;
    p += pb[b]! * hit;
  }
  return p;
}

/** The chance that the head's path, from 0 successes, reaches the region of base count b at some look. */
function pathHits(
  looks: readonly number[],
  steps: readonly Float64Array[],
  region: readonly Int32Array[],
  b: number,
  [first, second]: readonly [Float64Array, Float64Array],
): number {
  let dist = first;
  let next = second;
  dist.fill(0);
  dist[0] = 1;
  let hit = 0;
  for (let k = 0; k < looks.length; k++) {
    const before = k === 0 ? 0 : looks[k - 1]!;
    const inc = steps[k]!;
    next.fill(0, 0, looks[k]! + 1);
    for (let s = 0; s <= before; s++) {
      const v = dist[s]!;
      if (v === 0) continue;
      for (let j = 0; j < inc.length; j++) next[s + j]! += v * inc[j]!;
    }
    const top = Math.min(region[k]![b]!, looks[k]!);
    for (let h = 0; h <= top; h++) {
      hit += next[h]!;
      next[h] = 0;
    }
    [dist, next] = [next, dist];
  }
  return hit;
}

/** The largest value of `f` on [0, 1]: a grid, then golden-section search around its best point. */
function supremum(f: (pi: number) => number, steps: number): number {
  let best = 0;
  let bestAt = 0;
  for (let i = 0; i <= steps; i++) {
    const v = f(i / steps);
    if (v > best) {
      best = v;
      bestAt = i / steps;
    }
  }
  let lo = Math.max(0, bestAt - 1 / steps);
  let hi = Math.min(1, bestAt + 1 / steps);
  const g = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < 40; i++) {
    const a = hi - g * (hi - lo);
    const c = lo + g * (hi - lo);
    if (f(a) > f(c)) hi = c;
    else lo = a;
  }
  return Math.min(1, Math.max(best, f((lo + hi) / 2)));
}

/**
 * Past EXACT_COST: the chance of reaching the region at each look on its own, added up over the
 * looks (Bonferroni), each exact and cheap (a prefix of the head's distribution per base count).
 * Never smaller than the exact p-value; larger by at most the number of looks, in practice far
 * less (the early looks' regions are small). A normal approximation was tried and refused: the
 * largest chance over π sits near 0 or 1, where it was 5 to 30 times too small.
 */
function boundedCrossing(
  pi: number,
  baseN: number,
  looks: readonly number[],
  region: readonly Int32Array[],
): number {
  return Math.min(
    1,
    looks.reduce((sum, n, k) => sum + crossing(pi, baseN, [n], [region[k]!]), 0),
  );
}

const cache = new Map<string, number>();

/**
 * The p-value of a drop from `base` to a head whose counted attempts, in order, had `passes[k]`
 * successes among the first `looks[k]`, for the looks reached; `looks` is the whole schedule.
 */
export function dropPValue(base: Side, looks: readonly number[], passes: readonly number[]): number {
  const baseN = base.counted;
  if (baseN === 0 || passes.length === 0 || looks.length === 0) return 1;
  const weights = lookWeights(baseN, looks);
  let t = Number.NEGATIVE_INFINITY;
  passes.forEach((h, k) => {
    t = Math.max(t, weights[k]! * pooledDrop(base.passed, baseN, h, looks[k]!));
  });
  if (!(t > 0)) return 1;
  return dropPValueAt(baseN, looks, t);
}

/**
 * The p-value of the statistic value `t` for a base of `baseN` attempts and these looks: exact,
 * or past EXACT_COST (or when asked) the bound of boundedCrossing.
 */
export function dropPValueAt(
  baseN: number,
  looks: readonly number[],
  t: number,
  method: "auto" | "bound" = "auto",
): number {
  const key = `${baseN}|${looks.join(",")}|${t.toPrecision(12)}|${method}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  let p: number;
  const weights = lookWeights(baseN, looks);
  const region = regionOf(baseN, looks, weights, t);
  if (looks.length === 1) p = supremum((pi) => crossing(pi, baseN, looks, region), 200);
  else if (method === "auto" && exactCost(baseN, looks) <= EXACT_COST)
    p = supremum((pi) => crossing(pi, baseN, looks, region), 100);
  else p = supremum((pi) => boundedCrossing(pi, baseN, looks, region), 100);
  cache.set(key, p);
  return p;
}

/**
 * Barnard's unconditional exact test, one-sided, that the head's success rate is lower than the
 * base's (pooled score statistic, ties counted as extreme): one look.
 */
export function barnardOneSidedLower(baseOk: number, baseN: number, headOk: number, headN: number): number {
  if (baseN === 0 || headN === 0) return 1;
  return dropPValue({ counted: baseN, passed: baseOk }, [headN], [headOk]);
}
