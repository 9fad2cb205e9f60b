import { describe, expect, it } from "vitest";
import {
  ADAPTIVE_BATCH,
  attemptsToSettle,
  attemptsWanted,
  dropState,
  policyState,
  undetectableAdvice,
} from "../../src/gate/adaptive.js";

const rate = (threshold: number) => ({ policy: "attempt_success_rate_at_least" as const, threshold });

describe("adaptive attempts: when is a case decided", () => {
  it.each([
    // passed, counted, threshold → state (one-sided 95 % Wilson bounds)
    [3, 3, 0.5, "pass"], // lower bound 0.526
    [3, 3, 0.6, "open"],
    [5, 5, 0.6, "pass"], // lower bound 0.649
    [0, 3, 0.5, "fail"], // upper bound 0.474
    [1, 3, 0.5, "open"],
    [2, 4, 0.5, "open"],
    [5, 10, 0.5, "open"],
    [9, 10, 0.5, "pass"],
    [1, 10, 0.5, "fail"],
    [0, 0, 0.5, "open"],
  ])("%i of %i against %f is %s", (passed, counted, t, state) => {
    expect(policyState(rate(t), { passed, counted })).toBe(state);
  });

  it("counting policies are decided by what they count", () => {
    const all = { policy: "all_attempts_successful" as const };
    const any = { policy: "any_attempt_successful" as const };
    expect(policyState(all, { passed: 3, counted: 3 })).toBe("pass");
    expect(policyState(all, { passed: 2, counted: 3 })).toBe("fail");
    expect(policyState(any, { passed: 1, counted: 3 })).toBe("pass");
    expect(policyState(any, { passed: 0, counted: 3 })).toBe("fail");
  });

  it("mean_pass_rate_at_least uses the sum of pass rates", () => {
    const g = { policy: "mean_pass_rate_at_least" as const, threshold: 0.5 };
    expect(policyState(g, { passed: 0, counted: 3, passRateSum: 3 })).toBe("pass");
    expect(policyState(g, { passed: 3, counted: 3, passRateSum: 0 })).toBe("fail");
  });

  it("estimates how many more attempts would settle an open rate", () => {
    // 2 of 3 against 0.5: at a rate of 2/3, the lower bound passes 0.5 after about 26 attempts in all.
    const more = attemptsToSettle(rate(0.5), { passed: 2, counted: 3 })!;
    expect(more).toBeGreaterThan(5);
    expect(policyState(rate(0.5), { passed: ((3 + more) * 2) / 3, counted: 3 + more })).toBe("pass");
    expect(policyState(rate(0.5), { passed: ((2 + more) * 2) / 3, counted: 2 + more })).toBe("open");
    // A rate on the threshold never settles; a decided case needs nothing.
    expect(attemptsToSettle(rate(0.5), { passed: 5, counted: 10 })).toBeNull();
    expect(attemptsToSettle(rate(0.5), { passed: 3, counted: 3 })).toBeNull();
    expect(attemptsToSettle({ policy: "all_attempts_successful" }, { passed: 1, counted: 3 })).toBeNull();
  });
});

describe("adaptive attempts: drops against a baseline", () => {
  it.each([
    // base, head, headMax, alpha → state
    [[3, 3], [0, 3], 10, 0.05, "significant"], // 1/64
    [[3, 3], [1, 3], 10, 0.05, "open"], // 0.077, but 1 of 10 would be significant
    [[3, 3], [1, 3], 3, 0.05, "not_significant"], // no attempt left
    [[3, 3], [2, 3], 4, 0.05, "not_significant"], // even 2 of 4 is not significant
    [[3, 3], [0, 4], 10, 0.005, "open"],
    [[3, 3], [0, 6], 10, 0.005, "significant"],
    [[3, 3], [3, 3], 10, 0.05, "open"], // 3 of 10 would still be significant (p = 0.046)
    [[3, 3], [3, 3], 4, 0.05, "not_significant"],
  ])("base %j vs head %j (max %i) at %f is %s", (b, h, max, alpha, state) => {
    const [bp, bn] = b as number[];
    const [hp, hn] = h as number[];
    expect(dropState({ passed: bp!, counted: bn! }, { passed: hp!, counted: hn! }, max, alpha)).toBe(state);
  });
});

describe("adaptive attempts: what the scheduler is told", () => {
  const range = { min: 3, max: 10 };
  it("an open rate gets a batch, a decided one nothing, never past max", () => {
    expect(attemptsWanted({ gate: rate(0.5), range, planned: 3, head: { passed: 2, counted: 3 } })).toBe(
      ADAPTIVE_BATCH,
    );
    expect(attemptsWanted({ gate: rate(0.5), range, planned: 3, head: { passed: 3, counted: 3 } })).toBe(0);
    expect(attemptsWanted({ gate: rate(0.5), range, planned: 9, head: { passed: 5, counted: 9 } })).toBe(1);
    expect(attemptsWanted({ gate: rate(0.5), range, planned: 10, head: { passed: 5, counted: 10 } })).toBe(0);
    expect(attemptsWanted({ gate: rate(0.5), range, planned: 1, head: { passed: 1, counted: 1 } })).toBe(2);
  });

  it("a fixed repeat never gets more", () => {
    expect(
      attemptsWanted({
        gate: rate(0.5),
        range: { min: 3, max: 3 },
        planned: 3,
        head: { passed: 2, counted: 3 },
      }),
    ).toBe(0);
  });

  it("a failing case against a passing baseline gets more while the drop is open", () => {
    const all = { policy: "all_attempts_successful" as const };
    const base = { verdict: "pass" as const, passed: 3, counted: 3 };
    // 1 of 3 fails the policy (decided), but the drop is open (1 of 10 would be significant).
    expect(attemptsWanted({ gate: all, range, planned: 3, head: { passed: 1, counted: 3 }, base })).toBe(2);
    // At α = 0.005 (ten cases compared), 2 of 3 can no longer become significant: nothing more.
    expect(
      attemptsWanted({ gate: all, range, planned: 3, head: { passed: 2, counted: 3 }, base, alpha: 0.005 }),
    ).toBe(0);
    // 0 of 3: significant already.
    expect(attemptsWanted({ gate: all, range, planned: 3, head: { passed: 0, counted: 3 }, base })).toBe(0);
    // A baseline that failed: no regression possible, nothing more.
    expect(
      attemptsWanted({
        gate: all,
        range,
        planned: 3,
        head: { passed: 1, counted: 3 },
        base: { ...base, verdict: "fail" },
      }),
    ).toBe(0);
  });
});

describe("configurations that cannot detect a drop", () => {
  it.each([
    // min, max, cases → advice (null: a drop can be significant)
    [3, 3, 1, null],
    [
      2,
      2,
      1,
      "with 2 attempts on each side no drop can be significant at α = 0.05; use repeat: {min: 3, max: 3}",
    ],
    [
      1,
      1,
      1,
      "with 1 attempt on each side no drop can be significant at α = 0.05; use repeat: {min: 3, max: 3}",
    ],
    [
      3,
      3,
      12,
      "with 3 attempts on each side no drop can be significant at α = 0.05 over 12 cases (Holm: 0.0042 for the first); use repeat: {min: 3, max: 6}",
    ],
    [3, 10, 12, null],
  ])("repeat %i..%i over %i cases", (min, max, cases, advice) => {
    expect(undetectableAdvice({ min, max }, cases, 0.05)).toBe(advice);
  });
});
