/** Statistics over attempts. Pure functions; see docs/gate.md for how each number is used. */

const Z95 = 1.959963984540054;

/** Wilson score interval (95%) of `successes` out of `n`; null when n is 0. */
export function wilsonInterval(successes: number, n: number): [number, number] | null {
  if (n === 0) return null;
  const p = successes / n;
  const z2 = Z95 * Z95;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [clamp01(centre - half), clamp01(centre + half)];
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, Math.round(x * 1e12) / 1e12));
}

/** C(n, k) as a float; exact for the small n of attempts. */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  const kk = Math.min(k, n - k);
  for (let i = 1; i <= kk; i++) r = (r * (n - kk + i)) / i;
  return r;
}

/** Unbiased pass@k: the chance that at least one of k attempts drawn from n (c successful) succeeds. */
export function passAtK(n: number, c: number, k: number): number {
  if (k > n || n === 0) return Number.NaN;
  if (n - c < k) return 1;
  return clamp01(1 - binomial(n - c, k) / binomial(n, k));
}

/** pass^k: the chance that all k attempts drawn from n (c successful) succeed. */
export function passHatK(n: number, c: number, k: number): number {
  if (k > n || n === 0) return Number.NaN;
  return clamp01(binomial(c, k) / binomial(n, k));
}

function logFactorial(n: number): number {
  let s = 0;
  for (let i = 2; i <= n; i++) s += Math.log(i);
  return s;
}

function hypergeometric(a: number, b: number, c: number, d: number): number {
  return Math.exp(
    logFactorial(a + b) +
      logFactorial(c + d) +
      logFactorial(a + c) +
      logFactorial(b + d) -
      logFactorial(a) -
      logFactorial(b) -
      logFactorial(c) -
      logFactorial(d) -
      logFactorial(a + b + c + d),
  );
}

/**
 * One-sided Fisher exact test that the head's success rate is lower than the base's.
 * base: `baseOk` of `baseN`; head: `headOk` of `headN`. Returns P(head this bad or worse | no change).
 */
export function fisherOneSidedLower(baseOk: number, baseN: number, headOk: number, headN: number): number {
  const baseFail = baseN - baseOk;
  const headFail = headN - headOk;
  const successes = baseOk + headOk;
  const failures = baseFail + headFail;
  let p = 0;
  // Tables with the same margins where the head has headOk or fewer successes.
  for (let h = headOk; h >= 0; h--) {
    const b = successes - h;
    const hf = headN - h;
    const bf = failures - hf;
    if (b < 0 || b > baseN || hf < 0 || bf < 0) continue;
    p += hypergeometric(b, bf, h, hf);
  }
  return Math.min(1, p);
}

/** One-sided Fisher exact test that the head's success rate is higher than the base's. */
export function fisherOneSidedHigher(baseOk: number, baseN: number, headOk: number, headN: number): number {
  return fisherOneSidedLower(baseN - baseOk, baseN, headN - headOk, headN);
}

export function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** Barnard's one-sided exact test lives with the sequential drop test it is the one-look case of. */
export { barnardOneSidedLower } from "./drop.js";

/**
 * Holm's step-down correction: which of the p-values are significant at family-wise error rate
 * `alpha` (the smallest against alpha/m, the next against alpha/(m−1), ... stopping at the first
 * that is not).
 */
export function holmSignificant(pValues: readonly number[], alpha: number): boolean[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => [p, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<boolean>(m).fill(false);
  for (let rank = 0; rank < m; rank++) {
    const [p, i] = order[rank]!;
    if (p > alpha / (m - rank)) break;
    out[i] = true;
  }
  return out;
}
