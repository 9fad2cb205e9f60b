import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ADMIT_FAIL,
  ADMIT_RUNS,
  admissionOf,
  lowerBound,
  verdictFailChance,
} from "../../src/gate/admission.js";
import type { BaseRun } from "../../src/gate/history.js";

/** test/fixtures/sequential/reference.py: scipy's Beta quantiles; every sequence enumerated. */
const reference = JSON.parse(
  readFileSync(new URL("../fixtures/sequential/reference.json", import.meta.url), "utf8"),
) as {
  lower_bound: { passed: number; counted: number; bound: number }[];
  fail_chance: { threshold: number; repeat: [number, number]; p: number; chance: number }[];
};

const rate = (threshold: number) => ({ policy: "attempt_success_rate_at_least" as const, threshold });
const range = { min: 3, max: 10 };

function runs(n: number, passedOf3: (i: number) => number): BaseRun[] {
  return Array.from({ length: n }, (_, i) => ({
    runId: `r${i}`,
    gitSha: null,
    startedAt: `2026-11-${String(30 - i).padStart(2, "0")}`,
    key: "k",
    verdict: "pass" as const,
    flaky: false,
    counted: 3,
    passed: passedOf3(i),
    first: { counted: 3, passed: passedOf3(i) },
  }));
}

describe("admission: the numbers it is decided on", () => {
  it.each(
    reference.lower_bound.map((r) => [r.passed, r.counted, r.bound] as const),
  )("the one-sided 90 %% lower bound of %i of %i is %f (scipy: Beta(s, n − s + 1) at 0.1)", (passed, counted, bound) => {
    expect(lowerBound(passed, counted)).toBeCloseTo(bound, 9);
  });

  it.each(
    reference.fail_chance.map((r) => [r.threshold, r.repeat.join(".."), r.p, r] as const),
  )("min_rate %f with repeat %s fails an agent at %f with the enumerated chance", (threshold, _, p, r) => {
    expect(verdictFailChance(rate(threshold), { min: r.repeat[0], max: r.repeat[1] }, p)).toBeCloseTo(
      r.chance,
      12,
    );
  });

  it("counting policies fail by their first min attempts", () => {
    expect(verdictFailChance({ policy: "all_attempts_successful" }, range, 0.9)).toBeCloseTo(
      1 - 0.9 ** 3,
      12,
    );
    expect(verdictFailChance({ policy: "any_attempt_successful" }, range, 0.9)).toBeCloseTo(0.1 ** 3, 12);
  });
});

describe("admission: which cases gate by their verdict", () => {
  it("no history, or fewer than ADMIT_RUNS comparable runs: unproven, its verdict gates", () => {
    expect(admissionOf(undefined, rate(0.5), range).state).toBe("unproven");
    expect(
      admissionOf({ runs: runs(ADMIT_RUNS - 1, () => 3), keyChanged: false }, rate(0.5), range).state,
    ).toBe("unproven");
    // The newest run of another history alone is not a history.
    expect(admissionOf({ runs: runs(1, () => 3), keyChanged: true }, rate(0.5), range)).toMatchObject({
      state: "unproven",
      runs: 0,
    });
  });

  it("a reliable history admits it; an unreliable one leaves it reported without gating", () => {
    const ten = admissionOf({ runs: runs(10, () => 3), keyChanged: false }, rate(0.5), range);
    // 30/30: lower bound 0.926, where {3, 10} at 0.5 fails well under ADMIT_FAIL.
    expect(ten).toMatchObject({ state: "admitted", runs: 10, rate: 1 });
    expect(ten.failChance!).toBeLessThanOrEqual(ADMIT_FAIL);
    // 21/30: lower bound 0.57, where the verdict fails often.
    const shaky = admissionOf(
      { runs: runs(10, (i) => (i % 10 < 9 ? 2 : 3)), keyChanged: false },
      rate(0.5),
      range,
    );
    expect(shaky.state).toBe("reported");
    expect(shaky.failChance!).toBeGreaterThan(ADMIT_FAIL);
    // all_attempts_successful over 3 attempts is admitted only by a history that never failed much.
    expect(
      admissionOf(
        { runs: runs(10, () => 3), keyChanged: false },
        { policy: "all_attempts_successful" },
        range,
      ).state,
    ).toBe("reported");
  });

  it("a case admitted before its newest base run and not now is demoted", () => {
    // The newest run failed all three; the ten before it passed everything.
    const history = { runs: [...runs(1, () => 0), ...runs(10, () => 3)], keyChanged: false };
    expect(admissionOf(history, rate(0.5), range)).toMatchObject({ state: "reported", demoted: true });
  });
});
