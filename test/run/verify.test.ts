import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../src/run/types.js";
import {
  AUTO_VERIFY_REPEATS,
  changedScorers,
  disagreesWithCase,
  erroredByCode,
  erroredVerdict,
  regradeVerdict,
  verifyPlan,
} from "../../src/run/verify.js";
import type { Grading } from "../../src/scorers/grading.js";
import type { ScorerResult } from "../../src/scorers/types.js";

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

describe("what regradings that disagree mean, once the verifier is calibrated", () => {
  const onRef = (changed: string[], passed = 3) => ({
    on: "reference" as const,
    runs: 3,
    passed,
    changed,
    dir: "run-1",
  });
  const onStart = (changed: string[]) => ({
    on: "start" as const,
    runs: 3,
    passed: 0,
    changed,
    dir: "run-1",
  });
  // before: every disagreement was a verifier flake, never counted for the agent.
  it.each<[string, string[], Parameters<typeof regradeVerdict>[4], string]>([
    ["stable on the reference: the agent's code varies", ["unit"], onRef([]), "quality"],
    ["another scorer flaky on the reference: still the agent's", ["unit"], onRef(["lint"]), "quality"],
    ["the same scorer flaky on the reference: a verifier flake", ["unit"], onRef(["unit"]), "verifier_flake"],
    [
      "the same scorer flaky on the start tree: a verifier flake",
      ["unit", "lint"],
      onStart(["lint"]),
      "verifier_flake",
    ],
    [
      "no calibration could be made: the benefit of the doubt",
      ["unit"],
      { error: "disk full" },
      "verifier_flake",
    ],
  ])("%s", (_, changed, calibration, kind) => {
    const v = regradeVerdict(1, 3, changed, "verify_repeats", calibration);
    expect(v.failureKind).toBe(kind);
    expect(v.status).toBe(kind === "quality" ? "failed" : "error");
  });

  it("says what passed and what was stable", () => {
    expect(regradeVerdict(1, 3, ["unit"], "verify_repeats", onRef([])).message).toBe(
      "the agent's code passed 1 of 3 gradings (unit changed) (verify_repeats) while the verifier is stable on the reference (3 of 3 gradings passed, every scorer the same each time): its code is what varies, so the attempt fails",
    );
    expect(regradeVerdict(2, 3, ["unit"], "verify_repeats", onStart(["unit"])).message).toBe(
      "the scorers disagreed with themselves on the same workspace: passed 2 of 3 runs (unit changed) (verify_repeats), and on the start tree too (unit changed; passed 0 of 3); not counted for the agent",
    );
  });
});

describe("which scorers changed between two gradings", () => {
  const g = (...results: ScorerResult[]) =>
    ({ scorers: results.map((result, i) => ({ name: `s${i}`, result })) }) as unknown as Grading;
  const ok = (score = 1): ScorerResult => ({ state: "complete", score, passed: score === 1, reason: "" });
  it("counts the state, the verdict and the score", () => {
    const first = g(ok(), ok(), ok(0.5), ok());
    const again = g(ok(), ok(0), ok(0.7), { state: "error", reason: "x" });
    expect(changedScorers(first, again)).toEqual(["s1", "s2", "s3"]);
  });
});

describe("scorers that could not run on the agent's code (docs/decisions/0247)", () => {
  const err = (reason: string): ScorerResult => ({ state: "error", reason });
  const ok: ScorerResult = { state: "complete", score: 0, passed: false, reason: "1 failing" };
  const grading = (...s: [string, string, ScorerResult][]) =>
    ({
      errored: s.filter(([, , r]) => r.state === "error").map(([n]) => n),
      scorers: s.map(([name, type, result]) => ({ name, type, result })),
    }) as unknown as Grading;
  const cal = (errored?: string[], passed = 0) => ({
    on: "start" as const,
    runs: 1,
    passed,
    changed: [],
    dir: "run-1",
    ...(errored ? { errored } : {}),
  });

  // before: every scorer error was an error, which on_error may exclude or retry.
  it.each<[string, Grading, boolean]>([
    ["a tests scorer", grading(["unit", "tests", err("wrote no report")]), true],
    ["a command scorer", grading(["run", "command", err("killed by SIGKILL")]), true],
    [
      "a script scorer beside a judge that ran",
      grading(["s", "script", err("x")], ["j", "llm-judge", ok]),
      true,
    ],
    [
      "the llm-judge unreached: it runs none of the code",
      grading(["j", "llm-judge", err("cannot reach")]),
      false,
    ],
    [
      "the llm-judge's answer to the diff cannot be read (0249)",
      grading(["j", "llm-judge", { state: "error", reason: "not JSON", fromAttempt: true }]),
      true,
    ],
    [
      "a tests scorer and the judge both erred",
      grading(["u", "tests", err("x")], ["j", "llm-judge", err("y")]),
      false,
    ],
    ["nothing erred", grading(["unit", "tests", ok]), false],
  ])("%s: calibrated %s", (_, g, expected) => {
    expect(erroredByCode(g)).toBe(expected);
  });

  it.each<[string, ReturnType<typeof cal>, string | undefined]>([
    ["ran on the start tree: the agent's failure", cal(), "failed"],
    ["another scorer erred there: still the agent's", cal(["lint"]), "failed"],
    ["the same scorer erred there too: an error (the eval file or the runner)", cal(["unit"]), undefined],
  ])("%s", (_, calibration, status) => {
    const v = erroredVerdict(
      grading(["unit", "tests", err("wrote no report")], ["lint", "command", ok]),
      calibration,
    );
    expect(v?.status).toBe(status);
  });

  it("says what stopped the scorer and where it ran", () => {
    expect(
      erroredVerdict(grading(["unit", "tests", err("timed out after 4 s")]), cal(undefined, 1))?.message,
    ).toBe(
      "scorer unit could not run on the agent's code: timed out after 4 s; on the start tree it ran (passed), so the agent's code is what stopped it",
    );
  });
});
