/**
 * The scoring contract (docs/scorers.md, "Scorer types"): the weighted score, the attempt threshold, required scorers,
 * the pass rate, and an errored scorer that leaves the attempt without a score (never a 0).
 */
import { describe, expect, it } from "vitest";
import type { ScorerSpec } from "../../src/config/types.js";
import { grade } from "../../src/scorers/grading.js";
import type { ScorerResult } from "../../src/scorers/types.js";

function spec(name: string, weight: number, required = false): ScorerSpec {
  return {
    name,
    type: "command",
    weight,
    required,
    timeoutMs: 1000,
    evalDir: "/evals",
    options: { type: "command", run: "true" },
  };
}

const pass = (score = 1): ScorerResult => ({ state: "complete", score, passed: true, reason: "ok" });
const fail = (score = 0): ScorerResult => ({ state: "complete", score, passed: false, reason: "no" });
const broken: ScorerResult = { state: "error", reason: "could not start" };

function graded(
  scorers: [name: string, weight: number, required: boolean, result: ScorerResult][],
  threshold: number,
) {
  return grade(
    scorers.map(([n, w, r]) => spec(n, w, r)),
    scorers.map(([, , , result]) => ({ result, durationMs: 5 })),
    threshold,
  );
}

describe("grade", () => {
  it.each([
    [
      "every scorer passes",
      [
        ["a", 0.6, false, pass()],
        ["b", 0.4, false, pass()],
      ],
      1,
      1,
      1,
      true,
    ],
    [
      "the weighted sum reaches the threshold",
      [
        ["a", 0.7, false, pass()],
        ["b", 0.3, false, fail()],
      ],
      0.7,
      0.7,
      0.5,
      true,
    ],
    [
      "the weighted sum misses the threshold",
      [
        ["a", 0.7, false, pass()],
        ["b", 0.3, false, fail()],
      ],
      0.75,
      0.7,
      0.5,
      false,
    ],
    [
      "partial scores count by weight",
      [
        ["a", 0.5, false, fail(0.5)],
        ["b", 0.5, false, pass(1)],
      ],
      0.75,
      0.75,
      0.5,
      true,
    ],
    [
      "a required scorer fails above the threshold",
      [
        ["a", 0.9, false, pass()],
        ["b", 0.1, true, fail()],
      ],
      0.5,
      0.9,
      0.5,
      false,
    ],
    [
      "a required scorer passes",
      [
        ["a", 0.9, false, fail()],
        ["b", 0.1, true, pass()],
      ],
      0.1,
      0.1,
      0.5,
      true,
    ],
  ] as const)("%s", (_name, scorers, threshold, score, passRate, passed) => {
    const g = graded(scorers.map((s) => [...s]) as Parameters<typeof graded>[0], threshold);
    expect(g.score).toBeCloseTo(score, 9);
    expect(g.passRate).toBeCloseTo(passRate, 9);
    expect(g.passed).toBe(passed);
    expect(g.threshold).toBe(threshold);
  });

  it("names the required scorers that failed", () => {
    const g = graded(
      [
        ["unit", 0.5, true, fail()],
        ["lint", 0.25, true, pass()],
        ["shape", 0.25, false, fail()],
      ],
      0,
    );
    expect(g.requiredFailed).toEqual(["unit"]);
    expect(g.passed).toBe(false);
  });

  it("gives an attempt with an errored scorer no score and no pass rate, never a 0", () => {
    const g = graded(
      [
        ["unit", 0.5, false, pass()],
        ["judge", 0.5, false, broken],
      ],
      0,
    );
    expect(g).toMatchObject({ score: null, passRate: null, passed: false, errored: ["judge"] });
    expect(g.scorers.map((s) => [s.name, s.result.state, s.durationMs])).toEqual([
      ["unit", "complete", 5],
      ["judge", "error", 5],
    ]);
  });

  it("keeps the score within [0, 1] despite floating-point sums", () => {
    const g = graded(
      [
        // 0.7 + 0.2 + 0.1 is 0.9999999999999999 in floating point
        ["a", 0.7, false, pass()],
        ["b", 0.2, false, pass()],
        ["c", 0.1, false, pass()],
      ],
      1,
    );
    expect(g.score).toBe(1);
    expect(g.passed).toBe(true);
  });
});
