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
      /^shop\/a on bot: regressed: 1 of 3 attempts passed \(base 3 of 3\), p = 0\.109, not significant$/,
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
    // Barnard's one-sided test (scipy.stats.barnard_exact gives 0.010742).
    expect(c.pValue).toBeCloseTo(0.0107422, 6);
    expect(c.significant).toBe(true);
    expect(c.successRateDelta).toBeCloseTo(0.8, 9);
  });
});

describe("regressions that need evidence", () => {
  const sig = (over: Partial<EvalRoot> = {}) =>
    root({ minCasePassRate: 0, regressionEvidence: "significant", regressionAlpha: 0.05, ...over });
  const flip = (id: string, base: [number, number], head: [number, number], flaky = false) => {
    const change = compareCase(
      { verdict: "pass", counted: base[1], passed: base[0], flaky },
      { verdict: "fail", counted: head[1], passed: head[0] },
    );
    const c = gc(id, "fail", change);
    c.decision.counts = {
      ...c.decision.counts,
      counted: head[1],
      passed: head[0],
      failed: head[1] - head[0],
    };
    c.decision.flaky = flaky;
    return c;
  };

  it("base 3/3 vs 0/4 is a significant regression that fails the gate", () => {
    const g = decideRun([sig()], [flip("a", [3, 3], [0, 4])]);
    expect(g.verdict).toBe("fail");
    expect(g.reasons[0]).toMatch(
      /^shop\/a on bot: regressed: 0 of 4 attempts passed \(base 3 of 3\), p = 0\.008$/,
    );
  });

  it("base 3/3 vs 5/10 does not block: a possible regression, reported", () => {
    const g = decideRun([sig()], [flip("a", [3, 3], [5, 10])]);
    expect(g.verdict).toBe("pass");
    expect(g.warnings).toEqual([
      "shop/a on bot: possible regression: 5 of 10 attempts passed (base 3 of 3), p = 0.106; not significant after Holm's correction over 1 case (α = 0.05)",
    ]);
  });

  it("corrects for the number of cases compared (Holm)", () => {
    // 3/3 → 0/3 has p = 1/64: significant alone, not among four cases compared (α/4 = 0.0125).
    const alone = decideRun([sig()], [flip("a", [3, 3], [0, 3])]);
    expect(alone.verdict).toBe("fail");
    const others = ["b", "c", "d"].map((id) =>
      gc(
        id,
        "pass",
        compareCase({ verdict: "pass", counted: 3, passed: 3 }, { verdict: "pass", counted: 3, passed: 3 }),
      ),
    );
    const four = decideRun([sig()], [flip("a", [3, 3], [0, 3]), ...others]);
    expect(four.verdict).toBe("pass");
    expect(four.warnings[0]).toContain("possible regression");
    expect(four.warnings[0]).toContain("over 4 cases");
    // ... and says that, with these attempts, nothing could have been significant.
    expect(four.warnings.at(-1)).toMatch(
      /^shop: with 3 attempts on the baseline and 3 here, no drop can be significant at α = 0\.05 over 4 cases compared; use repeat: \{min: 3, max: \d+\} or more$/,
    );
  });

  it("evidence: any counts every flip; bundles without the field behave so", () => {
    expect(decideRun([sig({ regressionEvidence: "any" })], [flip("a", [3, 3], [5, 10])]).verdict).toBe(
      "fail",
    );
    expect(decideRun([root({ minCasePassRate: 0 })], [flip("a", [3, 3], [5, 10])]).verdict).toBe("fail");
  });

  it("a significant drop is a regression even when the case is flaky on both sides (before: waved through as known flaky)", () => {
    for (const evidence of ["significant", "any"] as const) {
      const g = decideRun([sig({ regressionEvidence: evidence })], [flip("a", [3, 3], [0, 4], true)]);
      expect(g.verdict).toBe("fail");
      expect(g.reasons[0]).toMatch(
        /^shop\/a on bot: regressed: 0 of 4 attempts passed \(base 3 of 3\), p = 0\.008$/,
      );
      expect(g.warnings.join("\n")).not.toContain("known flaky");
    }
  });

  it("a flip of a case flaky on both sides that is not significant is known flaky; a newly flaky one is called out", () => {
    const known = flip("a", [3, 3], [5, 10], true);
    const g = decideRun([sig({ regressionEvidence: "any" })], [known]);
    expect(g.verdict).toBe("pass");
    expect(g.warnings).toContain(
      "shop/a on bot: known flaky: flaky on the baseline and here, not counted as a regression",
    );
    const fresh = gc(
      "b",
      "pass",
      compareCase(
        { verdict: "pass", counted: 3, passed: 3, flaky: false },
        { verdict: "pass", counted: 3, passed: 2 },
      ),
    );
    fresh.decision.flaky = true;
    expect(decideRun([sig()], [fresh]).warnings).toContain(
      "shop/b on bot: newly flaky: stable on the baseline, flaky here",
    );
  });
});

describe("inconclusive cases", () => {
  const inconclusive = (verdict: "pass" | "fail") => {
    const c = gc("a", verdict);
    c.decision.evidence = "inconclusive";
    c.decision.settleAttempts = 12;
    c.decision.counts = { ...c.decision.counts, counted: 10, passed: 5 };
    return c;
  };
  it.each([
    ["warn", "pass", "pass", 1],
    ["warn", "fail", "fail", 1],
    ["pass", "fail", "pass", 0],
    ["fail", "pass", "fail", 0],
  ] as const)("on_inconclusive: %s, point estimate %s → gate %s", (on, verdict, gate, warnings) => {
    const g = decideRun([root({ onInconclusive: on })], [inconclusive(verdict)]);
    expect(g.verdict).toBe(gate);
    expect(g.warnings.length).toBe(warnings);
    if (warnings)
      expect(g.warnings[0]).toBe(
        `shop/a on bot: inconclusive: 5 of 10 attempts passed, the verdict follows the point estimate (${verdict}): too few attempts to tell the rate from noise; a run of about 12 attempts (--repeat 12) would likely settle it`,
      );
    if (on === "fail") expect(g.reasons[0]).toContain("(inconclusive; gate.on_inconclusive: fail)");
  });

  it("the inconclusive explanation comes first among the warnings (before: after every regression note)", () => {
    const flip = gc(
      "b",
      "fail",
      compareCase({ verdict: "pass", counted: 3, passed: 3 }, { verdict: "fail", counted: 3, passed: 2 }),
    );
    const g = decideRun(
      [root({ regressionEvidence: "significant", minCasePassRate: 0 })],
      [flip, inconclusive("fail")],
    );
    expect(g.warnings.length).toBeGreaterThan(1);
    expect(g.warnings[0]).toContain("shop/a on bot: inconclusive:");
  });

  it("a case that failed on its only attempt says one attempt cannot tell bad luck from a failure (before: nothing)", () => {
    const once = gc("a", "fail");
    once.decision.counts = { ...once.decision.counts, planned: 1, counted: 1, passed: 0, failed: 1 };
    const g = decideRun([root()], [once]);
    expect(g.verdict).toBe("fail");
    expect(g.warnings[0]).toBe(
      "shop: a case failed on its only attempt: one attempt cannot tell an agent's bad luck from a real failure; use repeat: {min: 3, max: 10}",
    );
    expect(decideRun([root()], [gc("a", "fail")]).warnings ?? []).toEqual([]);
  });
});
