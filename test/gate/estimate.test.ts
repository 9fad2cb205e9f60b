import { describe, expect, it } from "vitest";
import { CaseSchedule } from "../../src/gate/adaptive.js";
import { fixedEstimates, unbiasedEstimates } from "../../src/gate/estimate.js";

/**
 * Unbiasedness checked by brute force: every sequence of outcomes of the schedule's longest path is
 * enumerated, played through the schedule's rule (stop at the first look where it says no more),
 * and the estimates are averaged with each sequence's probability. An unbiased estimator averages
 * to the true value whatever the rate. No dynamic programming here: the product's is under test.
 */
function expectation(schedule: CaseSchedule, p: number, f: (outcomes: boolean[]) => number | null): number {
  const max = schedule.looks[schedule.looks.length - 1]!;
  let total = 0;
  for (let mask = 0; mask < 2 ** max; mask++) {
    const seq = [...Array(max).keys()].map((i) => ((mask >> i) & 1) === 1);
    let stop = max;
    for (let k = 0; k < schedule.looks.length; k++) {
      const n = schedule.looks[k]!;
      const s = seq.slice(0, n).filter(Boolean).length;
      if (!schedule.continuesAt(k, s, s)) {
        stop = n;
        break;
      }
    }
    // Each full sequence is one draw; its stopped prefix is what the estimator sees.
    const prob = seq.reduce((a, x) => a * (x ? p : 1 - p), 1);
    total += prob * (f(seq.slice(0, stop)) ?? 0);
  }
  return total;
}

const rate = (threshold: number) => ({ policy: "attempt_success_rate_at_least" as const, threshold });

describe("estimates the stopping rule does not bias", () => {
  const schedules = {
    "rate 0.5, {3, 9}": new CaseSchedule({ gate: rate(0.5), range: { min: 3, max: 9 }, verdictGates: true }),
    "all attempts, {3, 9}, a drop from 28/30 open at 0.005": new CaseSchedule({
      gate: { policy: "all_attempts_successful" },
      range: { min: 3, max: 9 },
      verdictGates: true,
      drop: { base: { passed: 28, counted: 30 }, level: 0.005 },
    }),
  };
  for (const [name, schedule] of Object.entries(schedules)) {
    const estimate = (o: boolean[]) =>
      unbiasedEstimates(o, schedule.looks, (k, s) => schedule.continuesAt(k, s, s));
    it.each([0.2, 0.5, 0.7, 0.9])(`${name}: the success rate at p = %f`, (p) => {
      expect(expectation(schedule, p, (o) => estimate(o).successRate)).toBeCloseTo(p, 9);
    });
    it.each([0.3, 0.75])(`${name}: pass@k and pass^k for k = 1..3 at p = %f`, (p) => {
      for (let k = 1; k <= 3; k++) {
        expect(expectation(schedule, p, (o) => estimate(o).passAtK[k - 1]!)).toBeCloseTo(1 - (1 - p) ** k, 9);
        expect(expectation(schedule, p, (o) => estimate(o).passHatK[k - 1]!)).toBeCloseTo(p ** k, 9);
      }
    });
  }

  it("passed / counted is biased under the same rule (before: it was the reported rate)", () => {
    const schedule = schedules["rate 0.5, {3, 9}"];
    const plain = expectation(schedule, 0.7, (o) => o.filter(Boolean).length / o.length);
    expect(Math.abs(plain - 0.7)).toBeGreaterThan(0.01);
  });

  it("a fixed repeat keeps the usual estimates", () => {
    const e = unbiasedEstimates([true, false, true, true], [4], undefined);
    expect(e.method).toBe("fixed");
    expect(e.successRate).toBe(0.75);
    expect(e.passAtK).toEqual(fixedEstimates(4, 3, 4).passAtK);
    expect(e.passAtK[1]).toBeCloseTo(1, 9);
    expect(e.passHatK[1]).toBeCloseTo(3 / 6, 9);
  });

  it("attempts left between two looks by errors fall back to the first min attempts", () => {
    const e = unbiasedEstimates([true, true, false, false], [3, 5], () => true);
    expect(e.method).toBe("first_attempts");
    expect(e.successRate).toBeCloseTo(2 / 3, 9);
    expect(e.passAtK).toHaveLength(3);
  });
});
