import { describe, expect, it } from "vitest";
import { clopperPearson, recommendRepeat } from "../../src/pipeline/calibrate.js";

/**
 * Reference values from python3 + scipy 1.17 (not from evalgate's code):
 * - Clopper–Pearson 95 %: [beta.ppf(0.025, k, n−k+1), beta.ppf(0.975, k+1, n−k)].
 * - A fixed repeat N of a rate policy at min_rate t, inconclusive → warn, fails an agent at rate p
 *   exactly when its point estimate is below t: binom.cdf(ceil(t·N) − 1, N, p) (t as a fraction).
 *   The recommendation is the smallest N in 1..50 where that is ≤ 0.05.
 * - any_attempt_successful: (1 − p)^N; all_attempts_successful: 1 − p^N.
 * Before: recommendRepeat and clopperPearson did not exist (no calibrate).
 */
describe("clopperPearson", () => {
  it.each([
    [8, 10, 0.4439045376923585, 0.9747892736731666],
    [20, 20, 0.8315665290169146, 1],
    [0, 10, 0, 1 - 0.025 ** (1 / 10)],
  ])("%i of %i", (k, n, lo, hi) => {
    const iv = clopperPearson(k, n)!;
    expect(iv[0]).toBeCloseTo(lo, 8);
    expect(iv[1]).toBeCloseTo(hi, 8);
  });
  it("no attempt: no interval", () => expect(clopperPearson(0, 0)).toBeNull());
});

describe("recommendRepeat", () => {
  const rate = (t: number) => ({ policy: "attempt_success_rate_at_least" as const, threshold: t });
  it.each([
    // [min_rate, measured rate, repeat, its fail chance]
    [0.5, 0.8, 2, 0.04],
    [0.8, 0.9, 20, 0.04317449528446335],
    [0.9, 0.97, 1, 0.03],
    [0.7, 0.8, 40, 0.04324162237632353],
  ])("min_rate %f at rate %f: repeat %i", (t, p, n, fail) => {
    const r = recommendRepeat(rate(t), p)!;
    expect(r.repeat).toBe(n);
    expect(r.failChance).toBeCloseTo(fail, 9);
  });
  it("a rate below min_rate, or too close above it: none up to 50", () => {
    expect(recommendRepeat(rate(0.5), 0.3)).toBeNull();
    // scipy: binom.cdf(ceil(0.9·N) − 1, N, 0.94) > 0.05 for every N in 1..50.
    expect(recommendRepeat(rate(0.9), 0.94)).toBeNull();
  });
  it.each([
    [0.8, 2, 0.04],
    [0.5, 5, 0.03125],
    [0.3, 9, 0.04035360699999998],
  ])("any_attempt_successful at rate %f: repeat %i", (p, n, fail) => {
    const r = recommendRepeat({ policy: "any_attempt_successful" }, p)!;
    expect(r).toEqual({ repeat: n, failChance: expect.closeTo(fail, 12) });
  });
  it("all_attempts_successful: 1 when 1 − p ≤ 5 %, else none (more attempts only add failures)", () => {
    expect(recommendRepeat({ policy: "all_attempts_successful" }, 0.96)).toEqual({
      repeat: 1,
      failChance: expect.closeTo(0.04, 12),
    });
    expect(recommendRepeat({ policy: "all_attempts_successful" }, 0.9)).toBeNull();
    expect(recommendRepeat({ policy: "all_attempts_successful" }, null)).toBeNull();
  });
});
