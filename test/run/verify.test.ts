import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../src/run/types.js";
import { AUTO_VERIFY_REPEATS, disagreesWithCase, verifyPlan } from "../../src/run/verify.js";

const t = (attempt: number, status: AttemptResult["status"], extra: Partial<AttemptResult> = {}) =>
  ({ attempt, retry: 0, status, ...extra }) as AttemptResult;

describe("an attempt that disagrees with the rest of its case (automatic rerun)", () => {
  it.each([
    ["the only failure among 2 passes", false, [t(1, "passed"), t(2, "passed")], true],
    ["the only pass among 2 failures", true, [t(1, "failed"), t(2, "failed")], true],
    ["the only failure among 5 passes", false, [1, 2, 3, 4, 5].map((i) => t(i, "passed")), true],
    ["agrees with its peers", true, [t(1, "passed"), t(2, "passed")], false],
    ["one peer only: too little to disagree with", false, [t(1, "passed")], false],
    ["no peers", false, [], false],
    ["the peers disagree among themselves", false, [t(1, "passed"), t(2, "failed")], false],
    [
      "a second failure is not the odd one out",
      false,
      [t(1, "passed"), t(2, "passed"), t(4, "failed")],
      false,
    ],
    [
      "errors, timeouts and verifier flakes are not peers",
      false,
      [
        t(1, "passed"),
        t(2, "error", { failureKind: "agent_exit" }),
        t(3, "timeout"),
        t(4, "error", { failureKind: "verifier_flake" }),
      ],
      false,
    ],
    [
      "a retried attempt counts once, by its quality outcome",
      false,
      [t(1, "error"), t(1, "passed", { retry: 1 }), t(2, "passed")],
      true,
    ],
    [
      "its own earlier errored try is not a peer",
      false,
      [t(3, "error"), t(1, "passed"), t(2, "passed")],
      true,
    ],
  ])("%s", (_, passed, peers, expected) => {
    expect(disagreesWithCase(passed as boolean, peers as AttemptResult[], 3)).toBe(expected);
  });

  it("leaves out the attempt's own number (a retry of it that finished earlier)", () => {
    expect(disagreesWithCase(false, [t(3, "passed"), t(1, "passed")], 3)).toBe(false);
  });
});

describe("which scorers rerun, how often", () => {
  const none = {};
  it.each([
    ["nothing set, agrees with its case: no rerun", [none, none], undefined, false, [0, 0], false],
    ["nothing set, disagrees: every scorer, automatically", [none, none], undefined, true, [2, 2], true],
    ["the test's setting: always, every scorer", [none, none], 3, false, [3, 3], false],
    ["the test's setting wins over the automatic count", [none, none], 1, true, [1, 1], false],
    ["verify_repeats: 0 on the test turns the automatic rerun off", [none, none], 0, true, [0, 0], false],
    [
      "a scorer's own setting: only that scorer, always",
      [{ verifyRepeats: 4 }, none],
      undefined,
      false,
      [4, 0],
      false,
    ],
    ["a scorer's own setting overrides the test's", [{ verifyRepeats: 1 }, none], 3, false, [1, 3], false],
    [
      "a scorer's 0: never rerun, not even automatically",
      [{ verifyRepeats: 0 }, none],
      undefined,
      true,
      [0, 2],
      true,
    ],
    [
      "a scorer's own setting and the automatic rerun of the rest",
      [{ verifyRepeats: 3 }, none],
      undefined,
      true,
      [3, 2],
      false,
    ],
  ])("%s", (_, scorers, test, disagrees, repeats, automatic) => {
    const plan = verifyPlan(
      scorers as { verifyRepeats?: number }[],
      test as number | undefined,
      disagrees as boolean,
    );
    expect(plan).toEqual({ repeats, automatic });
  });

  it("reruns an odd attempt twice by default", () => {
    expect(AUTO_VERIFY_REPEATS).toBe(2);
  });
});
