import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  barnardOneSidedLower,
  dropPValue,
  dropPValueAt,
  EXACT_COST,
  exactCost,
} from "../../src/gate/drop.js";
import { crossingChances, looksOf, MAX_LOOKS, rateDesign } from "../../src/gate/sequential.js";

/**
 * Reference values from test/fixtures/sequential/reference.py: Python and scipy, every sequence of
 * outcomes enumerated one by one (a different algorithm from the dynamic programming of src/gate/).
 */
const reference = JSON.parse(
  readFileSync(new URL("../fixtures/sequential/reference.json", import.meta.url), "utf8"),
) as {
  rate: {
    threshold: number;
    looks: number[];
    level: number;
    pass: number[];
    fail: number[];
    errors: { pass: number; fail: number };
  }[];
  drop: { base: [number, number]; looks: number[]; passes: number[]; p: number }[];
  barnard: { base: [number, number]; head: [number, number]; p: number }[];
};

describe("the looks of a repeat schedule", () => {
  it.each([
    [3, 10, [3, 5, 7, 9, 10]],
    [3, 6, [3, 5, 6]],
    [3, 3, [3]],
    [1, 5, [1, 3, 5]],
    [2, 2, [2]],
    [3, 35, [3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35]],
    [3, 100, [3, 10, 17, 24, 31, 38, 45, 52, 59, 66, 73, 80, 87, 94, 100]],
  ])("{min: %i, max: %i} looks at %j", (min, max, looks) => {
    expect(looksOf({ min, max })).toEqual(looks);
  });
});

describe("exact group-sequential designs of a rate against min_rate", () => {
  it.each(
    reference.rate.map((r) => [r.threshold, r.looks.join(","), r] as const),
  )("min_rate %f at looks %s", (threshold, _, r) => {
    const d = rateDesign(threshold, r.looks, 0.05);
    expect(d.level).toBeCloseTo(r.level, 9);
    expect(d.pass).toEqual(r.pass);
    expect(d.fail).toEqual(r.fail);
    expect(d.errors.pass).toBeCloseTo(r.errors.pass, 9);
    expect(d.errors.fail).toBeCloseTo(r.errors.fail, 9);
    // Each wrong decision stays within α at the threshold, where it is largest.
    expect(d.errors.pass).toBeLessThanOrEqual(0.05);
    expect(d.errors.fail).toBeLessThanOrEqual(0.05);
  });

  it("the one-sided Wilson bound at the same looks is wrong 17.8 % of the time at the threshold (before: the rule)", () => {
    // The rule before: decided when the one-sided 95 % Wilson bound (z = 1.645) clears 0.5.
    const z = 1.6448536269514722;
    const bound = (s: number, n: number, sign: number) => {
      const p = s / n;
      const d = 1 + (z * z) / n;
      return (p + (z * z) / (2 * n) + sign * z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
    };
    const looks = [3, 5, 7, 9, 10];
    const pass = looks.map((n) => [...Array(n + 1).keys()].find((s) => bound(s, n, -1) >= 0.5) ?? n + 1);
    const fail = looks.map((n) =>
      Math.max(-1, ...[...Array(n + 1).keys()].filter((s) => bound(s, n, 1) < 0.5)),
    );
    const wilson = crossingChances(looks, pass, fail, 0.5);
    expect(wilson.pass).toBeCloseTo(0.177734375, 9);
    const exact = rateDesign(0.5, [3, 5, 7, 9, 10], 0.05);
    expect(exact.errors.pass).toBeLessThanOrEqual(0.05);
  });

  it("no schedule of at most 10 attempts can decide rate ≥ 0.8 (10/10 happens 10.7 % of the time at 0.8)", () => {
    const d = rateDesign(0.8, looksOf({ min: 3, max: 10 }), 0.05);
    expect(d.pass.every((a, k) => a > d.looks[k]!)).toBe(true);
    expect(0.8 ** 10).toBeCloseTo(0.107, 3);
  });
});

describe("Barnard's test over the looks of the head's schedule", () => {
  it.each(
    reference.drop.map((r) => [r.base.join("/"), r.looks.join(","), r.passes.join(","), r] as const),
  )("base %s, looks %s, successes at the looks reached %s", (_b, _l, _p, r) => {
    expect(dropPValue({ passed: r.base[0], counted: r.base[1] }, r.looks, r.passes)).toBeCloseTo(r.p, 6);
  });

  it.each(
    reference.barnard.map((r) => [r.base.join("/"), r.head.join("/"), r] as const),
  )("one look is Barnard's test (scipy.stats.barnard_exact): base %s, head %s", (_b, _h, r) => {
    expect(barnardOneSidedLower(r.base[0], r.base[1], r.head[0], r.head[1])).toBeCloseTo(r.p, 7);
  });

  it("an early stop can only make the p-value larger (the path's later looks are not needed)", () => {
    const looks = looksOf({ min: 3, max: 10 });
    const base = { passed: 27, counted: 30 };
    const stopped = dropPValue(base, looks, [1, 2]);
    const went = dropPValue(base, looks, [1, 2, 2, 3, 3]);
    expect(went).toBeLessThan(stopped);
  });
});

describe("past the exact computation's cost", () => {
  it.each([
    [30, { min: 3, max: 10 }],
    [60, { min: 3, max: 20 }],
  ])("the bound for base %i and repeat %j is never below the exact p-value, and within the number of looks", (baseN, range) => {
    const looks = looksOf(range);
    for (const t of [2, 2.5, 3, 3.5]) {
      const exact = dropPValueAt(baseN, looks, t);
      const bound = dropPValueAt(baseN, looks, t, "bound");
      expect(bound).toBeGreaterThanOrEqual(exact - 1e-12);
      expect(bound).toBeLessThanOrEqual(Math.min(1, looks.length * exact) + 1e-12);
    }
  });

  it("a schedule of 1,000 attempts takes at most MAX_LOOKS looks after min, and its p-value is bounded", () => {
    const looks = looksOf({ min: 3, max: 1000 });
    expect(looks.length).toBeLessThanOrEqual(MAX_LOOKS + 1);
    expect(exactCost(1000, looks)).toBeGreaterThan(EXACT_COST);
    const p = dropPValue({ passed: 900, counted: 1000 }, looks, [1, 40, 80]);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1e-3);
  });
});
