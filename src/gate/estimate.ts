/**
 * Estimates of a case's success rate, pass@k and pass^k that the stopping rule does not bias
 * (docs/decisions/0195). With a fixed repeat the usual ones are unbiased. With adaptive attempts a
 * case that looked bad early gets more attempts, and passed / counted drifts away from the true
 * rate (FACTS: up to +0.07); the unbiased estimate over the first `min` attempts is kept, then
 * Rao–Blackwellised: averaged over every sequence of outcomes that the same rule would have
 * stopped at the same look with the same successes (Girshick, Mosteller and Savage 1946). Pure.
 */
import { logChoose } from "./binomial.js";

export type EstimateMethod = "fixed" | "rao_blackwell" | "first_attempts";

export interface Estimates {
  /** An unbiased estimate of the chance that an attempt passes (null: nothing counted). */
  successRate: number | null;
  /** passAtK[k − 1], k = 1..K: the chance that at least one of k attempts passes. */
  passAtK: number[];
  /** passHatK[k − 1]: the chance that all k pass. */
  passHatK: number[];
  method: EstimateMethod;
}

const choose = (n: number, k: number) => Math.exp(logChoose(n, k));

/** The usual unbiased estimates from n attempts of which c passed, k = 1..kMax. */
export function fixedEstimates(n: number, c: number, kMax: number): Omit<Estimates, "method"> {
  if (n === 0) return { successRate: null, passAtK: [], passHatK: [] };
  const at: number[] = [];
  const hat: number[] = [];
  for (let k = 1; k <= Math.min(kMax, n); k++) {
    at.push(n - c < k ? 1 : clamp01(1 - Math.exp(logChoose(n - c, k) - logChoose(n, k))));
    hat.push(clamp01(Math.exp(logChoose(c, k) - logChoose(n, k))));
  }
  return { successRate: c / n, passAtK: at, passHatK: hat };
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, Math.round(x * 1e12) / 1e12));
}

/**
 * The estimates for a case whose counted outcomes (in attempt order) are `outcomes`, under a
 * schedule looking at `looks` whose rule gave more attempts at look j with s successes when
 * `continues(j, s)`. Rao–Blackwell when the attempts ended on a look; else (errors left them
 * between looks) the first `looks[0]` attempts alone.
 */
export function unbiasedEstimates(
  outcomes: readonly boolean[],
  looks: readonly number[],
  continues: ((look: number, successes: number) => boolean) | undefined,
): Estimates {
  const n = outcomes.length;
  const c = outcomes.filter(Boolean).length;
  const first = looks[0]!;
  if (looks.length === 1 || n <= first) return { ...fixedEstimates(n, c, n), method: "fixed" };
  const last = looks.indexOf(n);
  if (last < 0 || !continues) {
    const head = outcomes.slice(0, first);
    return { ...fixedEstimates(head.length, head.filter(Boolean).length, first), method: "first_attempts" };
  }
  const reach = continuations(looks, last, c, continues);
  // Weighted over the successes s among the first `first` attempts: all orders of them count alike.
  const over = (weight: (s: number) => number) => {
    let v = 0;
    for (let s = 0; s <= first; s++) if (reach[s]! > 0) v += weight(s) * reach[s]!;
    return v;
  };
  const total = over((s) => choose(first, s));
  const rate = over((s) => choose(first - 1, s - 1)) / total;
  const at: number[] = [];
  const hat: number[] = [];
  for (let k = 1; k <= first; k++) {
    at.push(clamp01(over((s) => choose(first, s) - choose(first - k, s)) / total));
    hat.push(clamp01(over((s) => choose(first - k, s - k)) / total));
  }
  return { successRate: clamp01(rate), passAtK: at, passHatK: hat, method: "rao_blackwell" };
}

/**
 * For each count s of successes at the first look, the number of ways (scaled: each attempt
 * weighs 1/2) to go on from there to `successes` at look `last`, continuing at every look before it.
 */
function continuations(
  looks: readonly number[],
  last: number,
  successes: number,
  continues: (look: number, successes: number) => boolean,
): Float64Array {
  let ways = new Float64Array(looks[last]! + 1);
  ways[successes] = 1;
  for (let j = last - 1; j >= 0; j--) {
    const step = looks[j + 1]! - looks[j]!;
    const w = Array.from({ length: step + 1 }, (_, i) => Math.exp(logChoose(step, i) - step * Math.LN2));
    const next = new Float64Array(looks[j]! + 1);
    for (let s = 0; s <= looks[j]!; s++) {
      if (!continues(j, s)) continue;
      let v = 0;
      for (let i = 0; i <= step; i++) v += w[i]! * (ways[s + i] ?? 0);
      next[s] = v;
    }
    ways = next;
  }
  return ways;
}
