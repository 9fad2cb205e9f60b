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

function binomialPmf(n: number, k: number, p: number): number {
  if (p <= 0) return k === 0 ? 1 : 0;
  if (p >= 1) return k === n ? 1 : 0;
  return binomial(n, k) * p ** k * (1 - p) ** (n - k);
}

/** The pooled (score) statistic of Barnard's test: positive when the head's rate is lower. */
function pooledDrop(baseOk: number, baseN: number, headOk: number, headN: number): number {
  const pooled = (baseOk + headOk) / (baseN + headN);
  const variance = pooled * (1 - pooled) * (1 / baseN + 1 / headN);
  if (variance <= 0) return 0;
  return (baseOk / baseN - headOk / headN) / Math.sqrt(variance);
}

const barnardCache = new Map<string, number>();

/**
 * Barnard's unconditional exact test, one-sided, that the head's success rate is lower than the
 * base's (pooled score statistic, as scipy.stats.barnard_exact): the largest, over the common
 * success probability π, chance of a table at least as extreme as the one seen. More powerful than
 * Fisher's test at a few attempts a side (3/3 vs 0/3: 1/64 instead of 0.05). Exact for the small n
 * of attempts; the supremum is found on a grid refined around its best point.
 */
export function barnardOneSidedLower(baseOk: number, baseN: number, headOk: number, headN: number): number {
  if (baseN === 0 || headN === 0) return 1;
  const key = `${baseOk}/${baseN}:${headOk}/${headN}`;
  const cached = barnardCache.get(key);
  if (cached !== undefined) return cached;
  const observed = pooledDrop(baseOk, baseN, headOk, headN) - 1e-9;
  // extreme[b] = the head counts h for which the table (b, h) is at least as extreme as the one seen.
  const extreme: number[][] = [];
  for (let b = 0; b <= baseN; b++) {
    const hs: number[] = [];
    for (let h = 0; h <= headN; h++) if (pooledDrop(b, baseN, h, headN) >= observed) hs.push(h);
    extreme.push(hs);
  }
  const tail = (pi: number): number => {
    let p = 0;
    for (let b = 0; b <= baseN; b++) {
      const hs = extreme[b]!;
      if (hs.length === 0) continue;
      let inner = 0;
      for (const h of hs) inner += binomialPmf(headN, h, pi);
      p += binomialPmf(baseN, b, pi) * inner;
    }
    return p;
  };
  const steps = 200;
  let best = 0;
  let bestAt = 0;
  for (let i = 0; i <= steps; i++) {
    const v = tail(i / steps);
    if (v > best) {
      best = v;
      bestAt = i / steps;
    }
  }
  // Golden-section search inside the grid cell around the best point.
  let lo = Math.max(0, bestAt - 1 / steps);
  let hi = Math.min(1, bestAt + 1 / steps);
  const g = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < 40; i++) {
    const a = hi - g * (hi - lo);
    const c = lo + g * (hi - lo);
    if (tail(a) > tail(c)) hi = c;
    else lo = a;
  }
  const p = Math.min(1, Math.max(best, tail((lo + hi) / 2)));
  barnardCache.set(key, p);
  return p;
}

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

const Z95_ONE_SIDED = 1.6448536269514722;

/**
 * One-sided 95 % Wilson bounds of a success rate (`successes` may be fractional: a sum of pass
 * rates): the lower bound is exceeded by the true rate with 95 % confidence, and so is the upper
 * bound not. Together they form the 90 % two-sided interval; each decision made on one of them is
 * one-sided, so each errs at most 5 % of the time.
 */
export function oneSidedBounds(successes: number, n: number): [number, number] | null {
  if (n === 0) return null;
  const p = successes / n;
  const z = Z95_ONE_SIDED;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [clamp01(centre - half), clamp01(centre + half)];
}
