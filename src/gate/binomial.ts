/**
 * Binomial probabilities for the exact sequential computations (gate/sequential.ts, gate/drop.ts):
 * whole distributions at once, in log space so that a thousand attempts neither underflow nor lose
 * precision. Pure.
 */

const logFactorials: number[] = [0];

/** log(n!), from a table grown on demand (exact sums of logs: no Stirling error). */
export function logFactorial(n: number): number {
  for (let i = logFactorials.length; i <= n; i++) logFactorials.push(logFactorials[i - 1]! + Math.log(i));
  return logFactorials[n]!;
}

export function logChoose(n: number, k: number): number {
  if (k < 0 || k > n) return Number.NEGATIVE_INFINITY;
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

/**
 * P(X = k) for k = 0..n, X ~ Binomial(n, p): the mode in log space, then the ratio of neighbours
 * outwards (one exp, not n: a thousand attempts a side are computed hundreds of times per p-value).
 */
export function binomialPmf(n: number, p: number): Float64Array {
  const out = new Float64Array(n + 1);
  if (p <= 0) {
    out[0] = 1;
    return out;
  }
  if (p >= 1) {
    out[n] = 1;
    return out;
  }
  const odds = p / (1 - p);
  const mode = Math.min(n, Math.floor((n + 1) * p));
  out[mode] = Math.exp(logChoose(n, mode) + mode * Math.log(p) + (n - mode) * Math.log1p(-p));
  for (let k = mode; k < n; k++) out[k + 1] = (out[k]! * odds * (n - k)) / (k + 1);
  for (let k = mode; k > 0; k--) out[k - 1] = (out[k]! * k) / (odds * (n - k + 1));
  return out;
}

/** P(X ≤ k) for k = 0..n. */
export function binomialCdf(n: number, p: number): Float64Array {
  const pmf = binomialPmf(n, p);
  let s = 0;
  for (let k = 0; k <= n; k++) {
    s += pmf[k]!;
    pmf[k] = Math.min(1, s);
  }
  return pmf;
}

/**
 * The distribution of a sum after `step` more Bernoulli(p) trials: `dist` convolved with
 * Binomial(step, p). `inc` is binomialPmf(step, p), passed in so a caller reuses it.
 */
export function addTrials(dist: Float64Array, inc: Float64Array): Float64Array {
  const out = new Float64Array(dist.length + inc.length - 1);
  for (let s = 0; s < dist.length; s++) {
    const v = dist[s]!;
    if (v === 0) continue;
    for (let j = 0; j < inc.length; j++) out[s + j]! += v * inc[j]!;
  }
  return out;
}
