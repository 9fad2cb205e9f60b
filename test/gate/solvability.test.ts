import { describe, expect, it } from "vitest";
import { judgeSolvability, type SideOutcome } from "../../src/gate/solvability.js";

const side = (passed: number, attempts: number, errored = 0, messages: string[] = []): SideOutcome => ({
  attempts,
  passed,
  failed: attempts - passed - errored,
  errored,
  messages,
});
const kinds = (ref: SideOutcome | null, noop: SideOutcome) => judgeSolvability(ref, noop).map((p) => p.kind);

describe("judgeSolvability", () => {
  it.each([
    ["solvable", side(3, 3), side(0, 3), []],
    ["no reference", null, side(0, 3), ["unsolvable"]],
    ["reference never passes", side(0, 3), side(0, 3), ["unsolvable"]],
    ["reference errors (does not apply)", side(0, 3, 3), side(0, 3), ["unsolvable"]],
    ["reference passes sometimes", side(2, 3), side(0, 3), ["flaky_verifier"]],
    ["noop always passes", side(3, 3), side(3, 3), ["trivially_passing"]],
    ["noop passes sometimes", side(3, 3), side(1, 3), ["flaky_verifier"]],
    ["scorers break on the unchanged workspace", side(3, 3), side(0, 3, 1), ["verifier_error"]],
    ["both broken", side(0, 2), side(2, 2), ["unsolvable", "trivially_passing"]],
  ])("%s", (_name, ref, noop, expected) => {
    expect(kinds(ref as SideOutcome | null, noop as SideOutcome)).toEqual(expected);
  });

  it("says why, with the first failure message", () => {
    const [p] = judgeSolvability(side(0, 2, 0, ["unit: exit 1: not ok 2"]), side(0, 2));
    expect(p!.detail).toBe("the reference patch passed 0 of 2 attempts: unit: exit 1: not ok 2");
  });
});
