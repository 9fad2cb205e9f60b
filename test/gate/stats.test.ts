import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  binomial,
  fisherOneSidedHigher,
  fisherOneSidedLower,
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
});
