import { describe, expect, it } from "vitest";
import type { EvalRoot } from "../../src/config/types.js";
import type { CaseDecision } from "../../src/gate/case.js";
import { compareCase } from "../../src/gate/compare.js";
import { decideRun, type GateCase } from "../../src/gate/run.js";

const root = (over: Partial<EvalRoot> = {}): EvalRoot => ({
  path: "/x/shop.eval.yaml",
  evalPath: "shop.eval.yaml",
  name: "shop",
  tags: {},
  minCasePassRate: 1,
  regressions: "fail",
  budget: {},
  ...over,
});

function gc(
  testId: string,
  verdict: CaseDecision["verdict"],
  change?: GateCase["change"],
  cancelled = 0,
): GateCase {
  return {
    identity: { evalPath: "shop.eval.yaml", testId, target: "bot" },
    rootEvalPath: "shop.eval.yaml",
    suite: "shop",
    change,
    decision: {
      verdict,
      classification: verdict === "pass" ? "stable_pass" : "stable_fail",
      flaky: false,
      counts: {
        planned: 3,
        counted: 3,
        passed: verdict === "pass" ? 3 : 1,
        failed: 2,
        errored: 0,
        timedOut: 0,
        cancelled,
        retried: 0,
      },
      stats: {
        attemptSuccessRate: 1,
        wilson95: null,
        meanScore: 1,
        meanPassRate: 1,
        passAtK: [],
        passHatK: [],
      },
      reason: `${verdict} reason`,
    },
  };
}

describe("run gate", () => {
  it("passes when every case passes and lists the summary", () => {
    expect(decideRun([root()], [gc("a", "pass"), gc("b", "pass")])).toEqual({
      verdict: "pass",
      reasons: ["shop: 2 of 2 cases passed (100 %)"],
      warnings: [],
    });
  });

  it("lists each failing case when every case must pass", () => {
    const g = decideRun([root()], [gc("a", "pass"), gc("b", "fail")]);
    expect(g.verdict).toBe("fail");
    expect(g.reasons).toEqual(["shop/b on bot: fail reason"]);
  });

  it("applies min_case_pass_rate", () => {
    expect(decideRun([root({ minCasePassRate: 0.5 })], [gc("a", "pass"), gc("b", "fail")]).verdict).toBe(
      "pass",
    );
    const g = decideRun([root({ minCasePassRate: 0.75 })], [gc("a", "pass"), gc("b", "fail")]);
    expect(g.reasons).toEqual([
      "shop: 1 of 2 cases passed (50 %); the gate needs at least 75 % (gate.min_case_pass_rate)",
    ]);
  });

  it("fails on any error verdict, whatever the pass rate", () => {
    const g = decideRun([root({ minCasePassRate: 0 })], [gc("a", "pass"), gc("b", "error")]);
    expect(g).toMatchObject({ verdict: "fail", reasons: ["shop/b on bot: error reason"] });
  });

  it("counts regressions per gate.regressions", () => {
    const change = compareCase(
      { verdict: "pass", counted: 3, passed: 3 },
      { verdict: "fail", counted: 3, passed: 1 },
    );
    const cases = [gc("a", "fail", change)];
    expect(decideRun([root({ minCasePassRate: 0 })], cases).reasons[0]).toMatch(
      /^shop\/a on bot: regressed: 1 of 3 attempts passed \(base 3 of 3\), p = 0\.200, not significant$/,
    );
    const warn = decideRun([root({ minCasePassRate: 0, regressions: "warn" })], cases);
    expect(warn.verdict).toBe("pass");
    expect(warn.warnings[0]).toContain("(gate.regressions: warn)");
    expect(decideRun([root({ minCasePassRate: 0, regressions: "ignore" })], cases).warnings).toEqual([]);
  });

  it("fails with the budget reason", () => {
    const g = decideRun(
      [root()],
      [gc("a", "error", undefined, 2)],
      new Map([["shop.eval.yaml", "the cost budget of $1.00 was exceeded ($1.20 spent)"]]),
    );
    expect(g.reasons).toEqual([
      "shop: the cost budget of $1.00 was exceeded ($1.20 spent); 2 attempts were cancelled (gate.budget)",
    ]);
  });
});

describe("compareCase", () => {
  it.each([
    [undefined, { verdict: "pass", counted: 3, passed: 3 }, "new"],
    [{ verdict: "pass", counted: 3, passed: 3 }, undefined, "removed"],
    [{ verdict: "fail", counted: 3, passed: 0 }, { verdict: "pass", counted: 3, passed: 3 }, "improved"],
    [{ verdict: "pass", counted: 3, passed: 3 }, { verdict: "error", counted: 0, passed: 0 }, "unchanged"],
    [{ verdict: "error", counted: 0, passed: 0 }, { verdict: "pass", counted: 3, passed: 3 }, "unchanged"],
  ] as const)("%o → %o is %s", (base, head, change) => {
    expect(compareCase(base, head).change).toBe(change);
  });

  it("gives an improvement its own one-sided p-value", () => {
    const c = compareCase(
      { verdict: "fail", counted: 5, passed: 1 },
      { verdict: "pass", counted: 5, passed: 5 },
    );
    expect(c.pValue).toBeCloseTo(0.0238, 3);
    expect(c.significant).toBe(true);
    expect(c.successRateDelta).toBeCloseTo(0.8, 9);
  });
});
