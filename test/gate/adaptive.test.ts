import { describe, expect, it } from "vitest";
import {
  ADAPTIVE_BATCH,
  attemptsToSettle,
  attemptsWanted,
  CaseSchedule,
  type Counted,
  policyState,
  undetectableAdvice,
} from "../../src/gate/adaptive.js";

const rate = (threshold: number) => ({ policy: "attempt_success_rate_at_least" as const, threshold });
/** `passed` of `counted`, spread evenly over the path (so no early look decides by accident). */
const outcomes = (passed: number, counted: number): Counted[] =>
  Array.from({ length: counted }, (_, i) => {
    const ok = Math.floor(((i + 1) * passed) / counted) > Math.floor((i * passed) / counted);
    return { passed: ok, passRate: ok ? 1 : 0 };
  });
const schedule = (gate: ConstructorParameters<typeof CaseSchedule>[0]["gate"], min: number, max: number) =>
  new CaseSchedule({ gate, range: { min, max }, verdictGates: true });

describe("adaptive attempts: when is a case decided", () => {
  it.each([
    // passed, counted, threshold, schedule → state (exact design, test/gate/sequential.test.ts)
    [3, 3, 0.5, [3, 10], "open"], // before: pass (Wilson's 0.526); 1/8 of 0.5-agents do it
    [5, 5, 0.5, [3, 10], "pass"],
    [0, 3, 0.5, [3, 10], "open"], // before: fail
    [0, 5, 0.5, [3, 10], "fail"],
    [9, 10, 0.5, [3, 10], "pass"],
    [1, 10, 0.5, [3, 10], "fail"],
    [5, 10, 0.5, [3, 10], "open"],
    [9, 10, 0.5, [10, 10], "pass"],
    [2, 10, 0.5, [10, 10], "open"],
    [10, 10, 0.8, [3, 10], "open"], // no valid test decides ≥ 0.8 within 10
    [0, 0, 0.5, [3, 10], "open"],
  ])("%i of %i against %f with repeat %j is %s", (passed, counted, t, [min, max], state) => {
    expect(policyState(schedule(rate(t), min!, max!), outcomes(passed, counted))).toBe(state);
  });

  it("the decision is the first boundary the path crossed", () => {
    // 0 of 5 fails at the look at 5; passes after it do not undo that.
    const path = [...outcomes(0, 5), ...outcomes(5, 5)];
    expect(policyState(schedule(rate(0.5), 3, 10), path)).toBe("fail");
  });

  it("counting policies are decided by what they count", () => {
    const all = schedule({ policy: "all_attempts_successful" }, 3, 3);
    const any = schedule({ policy: "any_attempt_successful" }, 3, 3);
    expect(policyState(all, outcomes(3, 3))).toBe("pass");
    expect(policyState(all, outcomes(2, 3))).toBe("fail");
    expect(policyState(any, outcomes(1, 3))).toBe("pass");
    expect(policyState(any, outcomes(0, 3))).toBe("fail");
  });

  it("mean_pass_rate_at_least uses the sum of pass rates", () => {
    const s = schedule({ policy: "mean_pass_rate_at_least", threshold: 0.5 }, 10, 10);
    const high = Array.from({ length: 10 }, () => ({ passed: false, passRate: 1 }));
    const low = Array.from({ length: 10 }, () => ({ passed: true, passRate: 0 }));
    expect(policyState(s, high)).toBe("pass");
    expect(policyState(s, low)).toBe("fail");
  });

  it("names the attempts a fresh run would need to settle an open rate", () => {
    // 2 of 3 against 0.5: at a rate of 2/3 a single look needs about 30 attempts.
    const n = attemptsToSettle(rate(0.5), outcomes(2, 3))!;
    expect(n).toBeGreaterThan(20);
    expect(n).toBeLessThan(60);
    expect(attemptsToSettle(rate(0.5), outcomes(5, 10))).toBeNull();
    expect(attemptsToSettle({ policy: "all_attempts_successful" }, outcomes(1, 3))).toBeNull();
  });
});

describe("adaptive attempts: drops against a base", () => {
  const drop = (base: [number, number], level: number, gates = false) =>
    new CaseSchedule({
      gate: { policy: "all_attempts_successful" },
      range: { min: 3, max: 10 },
      verdictGates: gates,
      drop: { base: { passed: base[0], counted: base[1] }, level },
    });
  it.each([
    // base, level, look, passes → open
    [[27, 30], 0.005, 0, 1, true], // 1 of 3 against 0.9: go on
    [[27, 30], 0.005, 0, 3, false], // no drop
    [[27, 30], 0.005, 0, 2, true], // 2 of 3 is more than DROP_MARGIN below 0.9
    [[22, 30], 0.005, 0, 2, false], // 2 of 3 is within DROP_MARGIN of 0.73
    [[30, 30], 0.005, 1, 0, false], // 0 of 5 against 30/30: significant already
    [[3, 3], 0.005, 0, 1, true],
    [[27, 30], 0.005, 4, 3, false], // the last look: nothing more
  ])("base %j at %f, look %i with %i passed: open %s", (base, level, k, passes, open) => {
    expect(drop(base as [number, number], level as number).continuesAt(k, passes, passes)).toBe(open);
  });
});

describe("adaptive attempts: what the scheduler is told", () => {
  it("an open rate gets a batch when its verdict gates, a decided one nothing, never past max", () => {
    const s = schedule(rate(0.5), 3, 10);
    expect(attemptsWanted(s, 3, outcomes(2, 3))).toBe(ADAPTIVE_BATCH);
    expect(attemptsWanted(s, 5, outcomes(5, 5))).toBe(0);
    expect(attemptsWanted(s, 9, outcomes(5, 9))).toBe(1);
    expect(attemptsWanted(s, 10, outcomes(5, 10))).toBe(0);
    expect(attemptsWanted(s, 1, outcomes(1, 1))).toBe(2);
    const reported = new CaseSchedule({ gate: rate(0.5), range: { min: 3, max: 10 }, verdictGates: false });
    expect(attemptsWanted(reported, 3, outcomes(2, 3))).toBe(0);
  });

  it("errors that leave the counted attempts between two looks get a batch to reach the next", () => {
    expect(attemptsWanted(schedule(rate(0.5), 3, 10), 5, outcomes(4, 4))).toBe(2);
  });

  it("a fixed repeat never gets more", () => {
    expect(attemptsWanted(schedule(rate(0.5), 3, 3), 3, outcomes(2, 3))).toBe(0);
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
