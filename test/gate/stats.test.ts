import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  barnardOneSidedLower,
  binomial,
  fisherOneSidedHigher,
  fisherOneSidedLower,
  holmSignificant,
  passAtK,
  passHatK,
  wilsonInterval,
} from "../../src/gate/stats.js";

describe("statistics", () => {
  it("Wilson 95% interval matches known values", () => {
    const [lo, hi] = wilsonInterval(5, 5)!;
    expect(lo).toBeCloseTo(0.566, 3);
    expect(hi).toBe(1);
    const [lo2, hi2] = wilsonInterval(1, 2)!;
    expect(lo2).toBeCloseTo(0.0945, 3);
    expect(hi2).toBeCloseTo(0.9055, 3);
    expect(wilsonInterval(0, 0)).toBeNull();
  });

  it("one-sided Fisher exact test matches known p-values", () => {
    expect(fisherOneSidedLower(5, 5, 1, 5)).toBeCloseTo(0.0238, 3);
    expect(fisherOneSidedLower(5, 5, 2, 5)).toBeCloseTo(0.0833, 3);
    expect(fisherOneSidedLower(10, 10, 6, 10)).toBeCloseTo(0.0433, 3);
    expect(fisherOneSidedLower(3, 3, 3, 3)).toBeCloseTo(1, 6);
    expect(fisherOneSidedHigher(1, 5, 5, 5)).toBeCloseTo(0.0238, 3);
  });

  it("unbiased pass@k and pass^k", () => {
    expect(passAtK(5, 1, 1)).toBeCloseTo(0.2, 9);
    expect(passAtK(5, 1, 5)).toBe(1);
    expect(passAtK(5, 0, 3)).toBe(0);
    expect(passAtK(4, 2, 2)).toBeCloseTo(1 - 1 / 6, 9);
    expect(passHatK(4, 2, 2)).toBeCloseTo(1 / 6, 9);
    expect(passHatK(4, 4, 4)).toBe(1);
    expect(binomial(10, 3)).toBe(120);
  });

  it("properties: pass@1 and pass^1 equal the success rate; pass@k grows and pass^k shrinks with k", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 30 }), (n, c0) => {
        const c = Math.min(c0, n);
        expect(passAtK(n, c, 1)).toBeCloseTo(c / n, 9);
        expect(passHatK(n, c, 1)).toBeCloseTo(c / n, 9);
        for (let k = 2; k <= n; k++) {
          expect(passAtK(n, c, k)).toBeGreaterThanOrEqual(passAtK(n, c, k - 1) - 1e-12);
          expect(passHatK(n, c, k)).toBeLessThanOrEqual(passHatK(n, c, k - 1) + 1e-12);
        }
        const [lo, hi] = wilsonInterval(c, n)!;
        expect(lo).toBeGreaterThanOrEqual(0);
        expect(hi).toBeLessThanOrEqual(1);
        expect(lo).toBeLessThanOrEqual(c / n + 1e-12);
        expect(hi).toBeGreaterThanOrEqual(c / n - 1e-12);
      }),
    );
  });

  // Reference values: scipy.stats.barnard_exact(table, alternative="less") (scipy 1.17.1), with the
  // table [[head_ok, base_ok], [head_fail, base_fail]]. Where another table ties the observed
  // statistic exactly (3/3 vs 1/3 ties 2/3 vs 0/3), scipy's floating-point comparison drops it;
  // "at least as extreme" includes it, so those rows (marked *) hold the value with the tie, checked
  // independently on a 200,001-point grid of π in Python.
  it.each([
    [3, 3, 0, 3, 1 / 64],
    [3, 3, 0, 4, 0.008393004372570708],
    [3, 3, 1, 3, 0.109375], // *
    [5, 5, 1, 5, 0.010742187500000002],
    [5, 5, 2, 5, 0.03092404517250955],
    [10, 10, 6, 10, 0.02109527587890625], // *
    [5, 5, 4, 10, 0.021233902915683257],
    [12, 15, 7, 15, 0.03410915465997108], // *
    [3, 3, 1, 10, 0.004037586791188844],
    [6, 6, 2, 10, 0.000983092584038399],
    [4, 4, 0, 10, 0.0002303814279624007],
    [3, 3, 2, 3, 0.2548339959325041], // *
    [8, 10, 3, 10, 0.020694732666015646],
    [3, 3, 3, 3, 1],
    [0, 3, 0, 3, 1],
    [2, 3, 3, 3, 1],
  ])("Barnard's one-sided test: base %i/%i vs head %i/%i gives p = %f", (bo, bn, ho, hn, p) => {
    expect(barnardOneSidedLower(bo, bn, ho, hn)).toBeCloseTo(p, 6);
  });

  it("Barnard's test is more powerful than Fisher's where the issue needs it", () => {
    // 3/3 → 0/3: Fisher can never go below 0.05; Barnard gives 1/64.
    expect(fisherOneSidedLower(3, 3, 0, 3)).toBeCloseTo(0.05, 9);
    expect(barnardOneSidedLower(3, 3, 0, 3)).toBeLessThan(0.05);
    // With nothing to compare, nothing is significant.
    expect(barnardOneSidedLower(3, 3, 0, 0)).toBe(1);
  });

  it("Barnard's p-value never drops when the head does better (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 8 }), (bn, hn) => {
        for (let h = 0; h < hn; h++) {
          expect(barnardOneSidedLower(bn, bn, h + 1, hn)).toBeGreaterThanOrEqual(
            barnardOneSidedLower(bn, bn, h, hn) - 1e-9,
          );
        }
      }),
      { numRuns: 20 },
    );
  });

  it.each([
    // p-values, alpha, which are significant (Holm's step-down)
    [[0.01, 0.04, 0.03, 0.005], 0.05, [true, false, false, true]],
    [[0.01, 0.02, 0.03, 0.04], 0.1, [true, true, true, true]],
    [[0.04], 0.05, [true]],
    [[0.04, 1, 1], 0.05, [false, false, false]],
    [[0.0125, 0.02, 0.5, 0.5], 0.05, [true, false, false, false]],
    [[], 0.05, []],
  ])("Holm's correction of %j at %f", (ps, alpha, expected) => {
    expect(holmSignificant(ps as number[], alpha as number)).toEqual(expected);
  });
});
