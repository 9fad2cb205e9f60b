import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CaseGate, GatePolicy, OnError } from "../../src/config/types.js";
import { classify, decideCase } from "../../src/gate/case.js";
import type { AttemptResult, FailureKind } from "../../src/run/types.js";

type Outcome = "P" | "F" | "E" | "T" | "V" | "C" | "X" | "S";
/**
 * P passed, F quality failure, E agent crash (infrastructure evidence), T agent timeout (the same),
 * V scorer error, C cancelled, X an agent that exited non-zero and whose work failed, S one that
 * ran out of time and whose work failed (both counted: docs/decisions/0192).
 */
function attempt(o: Outcome, n: number, retry = 0, passRate?: number): AttemptResult {
  const kinds: Record<Outcome, [AttemptResult["status"], FailureKind | undefined]> = {
    P: ["passed", undefined],
    F: ["failed", "quality"],
    E: ["error", "agent_exit"],
    T: ["timeout", "agent_timeout"],
    V: ["error", "scorer_error"],
    C: ["error", "cancelled"],
    X: ["failed", "agent_exit"],
    S: ["failed", "agent_timeout"],
  };
  const [status, failureKind] = kinds[o];
  const r: AttemptResult = {
    caseKey: "k",
    attempt: n,
    retry,
    status,
    startedAt: "",
    finishedAt: "",
    durationMs: 1,
    phases: { workspaceMs: 0, agentMs: 0, diffMs: 0, scorersMs: 0 },
    dirName: `run-${n}`,
  };
  if (failureKind) r.failureKind = failureKind;
  if (o === "P" || o === "F") {
    const pr = passRate ?? (o === "P" ? 1 : 0);
    r.grading = {
      score: pr,
      passRate: pr,
      passed: o === "P",
      threshold: 1,
      requiredFailed: [],
      errored: [],
      scorers: [],
    };
  }
  return r;
}

const tries = (s: string) => [...s].map((o, i) => attempt(o as Outcome, i + 1));
const gate = (policy: GatePolicy, onError: OnError = "fail", threshold?: number): CaseGate =>
  threshold === undefined ? { policy, onError, retries: 0 } : { policy, onError, retries: 0, threshold };

describe("case verdicts: policy × on_error × outcomes", () => {
  const table: [string, CaseGate, string][] = [
    // all_attempts_successful
    ["PPP", gate("all_attempts_successful"), "pass"],
    ["PPF", gate("all_attempts_successful"), "fail"],
    ["FFF", gate("all_attempts_successful"), "fail"],
    ["PPE", gate("all_attempts_successful"), "error"],
    ["PPE", gate("all_attempts_successful", "exclude"), "pass"],
    ["PFE", gate("all_attempts_successful", "exclude"), "fail"],
    ["EEE", gate("all_attempts_successful", "exclude"), "error"],
    ["PPT", gate("all_attempts_successful", "fail"), "error"],
    ["PPV", gate("all_attempts_successful", "retry"), "error"],
    // any_attempt_successful
    ["FFP", gate("any_attempt_successful"), "pass"],
    ["FFF", gate("any_attempt_successful"), "fail"],
    ["FPE", gate("any_attempt_successful"), "error"],
    ["FPE", gate("any_attempt_successful", "exclude"), "pass"],
    // attempt_success_rate_at_least
    ["PPF", gate("attempt_success_rate_at_least", "fail", 0.67), "fail"],
    ["PPF", gate("attempt_success_rate_at_least", "fail", 0.6666666667), "pass"],
    ["PPF", gate("attempt_success_rate_at_least", "fail", 2 / 3), "pass"],
    ["PPFF", gate("attempt_success_rate_at_least", "fail", 0.5), "pass"],
    ["PFFF", gate("attempt_success_rate_at_least", "fail", 0.5), "fail"],
    ["PPFE", gate("attempt_success_rate_at_least", "exclude", 0.6), "pass"],
    ["PPFE", gate("attempt_success_rate_at_least", "fail", 0.6), "error"],
    // mean_pass_rate_at_least (F attempts have pass rate 0 here)
    ["PPFF", gate("mean_pass_rate_at_least", "fail", 0.5), "pass"],
    ["PFFF", gate("mean_pass_rate_at_least", "fail", 0.5), "fail"],
    // cancelled attempts always make an error
    ["PPC", gate("any_attempt_successful", "exclude"), "error"],
  ];
  it.each(table)("%s with %o → %s", (outcomes, g, verdict) => {
    expect(decideCase(tries(outcomes), outcomes.length, g).verdict).toBe(verdict);
  });

  // Every policy under every on_error mode, for mixes without errors, with a pass, a failure and an
  // error, and with errors only (thresholds 0.5; F attempts have pass rate 0).
  const POLICIES: [GatePolicy, number | undefined][] = [
    ["all_attempts_successful", undefined],
    ["any_attempt_successful", undefined],
    ["attempt_success_rate_at_least", 0.5],
    ["mean_pass_rate_at_least", 0.5],
  ];
  const EXPECTED: Record<string, Record<OnError, [string, string, string, string]>> = {
    // outcomes → on_error → verdict per policy, in the order of POLICIES
    PPP: {
      fail: ["pass", "pass", "pass", "pass"],
      exclude: ["pass", "pass", "pass", "pass"],
      retry: ["pass", "pass", "pass", "pass"],
    },
    PPF: {
      fail: ["fail", "pass", "pass", "pass"],
      exclude: ["fail", "pass", "pass", "pass"],
      retry: ["fail", "pass", "pass", "pass"],
    },
    FFP: {
      fail: ["fail", "pass", "fail", "fail"],
      exclude: ["fail", "pass", "fail", "fail"],
      retry: ["fail", "pass", "fail", "fail"],
    },
    PFT: {
      fail: ["error", "error", "error", "error"],
      exclude: ["fail", "pass", "pass", "pass"],
      retry: ["error", "error", "error", "error"],
    },
    PPV: {
      fail: ["error", "error", "error", "error"],
      exclude: ["pass", "pass", "pass", "pass"],
      retry: ["error", "error", "error", "error"],
    },
    EEE: {
      fail: ["error", "error", "error", "error"],
      exclude: ["error", "error", "error", "error"],
      retry: ["error", "error", "error", "error"],
    },
  };
  const grid = Object.entries(EXPECTED).flatMap(([outcomes, byMode]) =>
    (Object.entries(byMode) as [OnError, string[]][]).flatMap(([onError, verdicts]) =>
      POLICIES.map(([policy, threshold], i) => [outcomes, policy, onError, verdicts[i]!, threshold] as const),
    ),
  );
  it.each(grid)("%s under %s, on_error %s → %s", (outcomes, policy, onError, verdict, threshold) => {
    expect(decideCase(tries(outcomes), outcomes.length, gate(policy, onError, threshold)).verdict).toBe(
      verdict,
    );
  });

  it("decides mean_pass_rate from the scorers' pass rates", () => {
    const t = [attempt("F", 1, 0, 0.75), attempt("F", 2, 0, 0.75), attempt("P", 3, 0, 1)];
    expect(decideCase(t, 3, gate("mean_pass_rate_at_least", "fail", 0.8)).verdict).toBe("pass");
    expect(decideCase(t, 3, gate("mean_pass_rate_at_least", "fail", 0.9)).verdict).toBe("fail");
  });

  it("decides on the last try of each attempt: a retried crash that passed counts as a pass", () => {
    const t = [attempt("P", 1), attempt("E", 2, 0), attempt("P", 2, 1), attempt("P", 3)];
    const d = decideCase(t, 3, { policy: "all_attempts_successful", onError: "retry", retries: 1 });
    expect(d.verdict).toBe("pass");
    expect(d.classification).toBe("stable_pass");
    expect(d.counts).toMatchObject({ counted: 3, passed: 3, errored: 0, retried: 1 });
  });

  it("gives reasons a reviewer understands", () => {
    expect(decideCase(tries("PFF"), 3, gate("all_attempts_successful")).reason).toBe(
      "1 of 3 attempts passed, policy needs all",
    );
    expect(decideCase(tries("PPE"), 3, gate("all_attempts_successful")).reason).toBe(
      "1 of 3 attempts errored (agent_exit); errors are not counted as failures",
    );
    expect(decideCase(tries("PFE"), 3, gate("attempt_success_rate_at_least", "exclude", 0.75)).reason).toBe(
      "1 of 2 attempts passed (1 errored excluded), policy needs a success rate of at least 75 %",
    );
  });
});

describe("classification", () => {
  it.each([
    ["PPP", "stable_pass", false],
    ["FFF", "stable_fail", false],
    ["PFP", "flaky", true],
    ["PPV", "verifier_flake", true],
    ["VVV", "verifier_flake", false],
    ["PEE", "infrastructure_failure", true],
    ["FFE", "infrastructure_failure", false],
    ["TTT", "timeout", false],
    ["PTP", "timeout", true],
    ["PET", "mixed_error", true],
    ["FVT", "mixed_error", false],
    ["PPC", "stable_pass", false],
    // before: an agent_exit or agent_timeout failure was infrastructure or timeout trouble.
    ["XXS", "stable_fail", false],
    ["PXP", "flaky", true],
    ["PSF", "flaky", true],
  ])("%s → %s (flaky %s)", (outcomes, classification, flaky) => {
    expect(classify(tries(outcomes))).toEqual({ classification, flaky });
  });
});

describe("an agent's own exit or timeout, without infrastructure evidence", () => {
  it("counts against it whatever on_error says (before: excluded or retried)", () => {
    for (const onError of ["fail", "exclude", "retry"] as const) {
      const d = decideCase(tries("PXS"), 3, gate("all_attempts_successful", onError));
      expect(d.verdict).toBe("fail");
      expect(d.counts).toMatchObject({ counted: 3, passed: 1, failed: 2, errored: 0 });
    }
  });
});

describe("statistics", () => {
  it("computes counts, rates, Wilson interval and pass@k", () => {
    const d = decideCase(tries("PPFPE"), 5, gate("all_attempts_successful", "exclude"));
    expect(d.counts).toEqual({
      planned: 5,
      counted: 4,
      passed: 3,
      failed: 1,
      errored: 1,
      timedOut: 0,
      cancelled: 0,
      retried: 0,
    });
    expect(d.stats.attemptSuccessRate).toBe(0.75);
    expect(d.stats.passAtK[0]).toBeCloseTo(0.75, 9);
    expect(d.stats.passAtK[1]).toBe(1);
    expect(d.stats.passHatK[1]).toBeCloseTo(0.5, 9);
    expect(d.stats.passHatK).toHaveLength(4);
    expect(d.stats.wilson95![0]).toBeLessThan(0.75);
  });
});

describe("properties", () => {
  const outcome = fc.constantFrom<Outcome>("P", "F", "E", "T", "V");
  const policyArb = fc.constantFrom<GatePolicy>(
    "all_attempts_successful",
    "any_attempt_successful",
    "attempt_success_rate_at_least",
    "mean_pass_rate_at_least",
  );
  const onErrorArb = fc.constantFrom<OnError>("fail", "exclude", "retry");
  const caseArb = fc.record({
    outcomes: fc.array(outcome, { minLength: 1, maxLength: 12 }),
    policy: policyArb,
    onError: onErrorArb,
    threshold: fc.double({ min: 0, max: 1, noNaN: true }),
  });
  const gateOf = (c: { policy: GatePolicy; onError: OnError; threshold: number }) =>
    c.policy === "attempt_success_rate_at_least" || c.policy === "mean_pass_rate_at_least"
      ? gate(c.policy, c.onError, c.threshold)
      : gate(c.policy, c.onError);

  it("the verdict and classification do not depend on attempt order", () => {
    fc.assert(
      fc.property(caseArb, fc.integer(), (c, seed) => {
        const t = c.outcomes.map((o, i) => attempt(o, i + 1));
        const shuffled = [...c.outcomes].sort(
          (a, b) => ((a.charCodeAt(0) * 31 + seed) % 7) - ((b.charCodeAt(0) * 31 + seed) % 7),
        );
        const t2 = shuffled.map((o, i) => attempt(o, i + 1));
        const a = decideCase(t, t.length, gateOf(c));
        const b = decideCase(t2, t2.length, gateOf(c));
        expect(b.verdict).toBe(a.verdict);
        expect(b.classification).toBe(a.classification);
        expect(b.flaky).toBe(a.flaky);
      }),
    );
  });

  it("any passes whenever all passes; every rate is in [0, 1]; pass@1 equals the success rate", () => {
    fc.assert(
      fc.property(fc.array(outcome, { minLength: 1, maxLength: 12 }), onErrorArb, (outcomes, onError) => {
        const t = outcomes.map((o, i) => attempt(o, i + 1));
        const all = decideCase(t, t.length, gate("all_attempts_successful", onError));
        const any = decideCase(t, t.length, gate("any_attempt_successful", onError));
        if (all.verdict === "pass") expect(any.verdict).toBe("pass");
        for (const d of [all, any]) {
          for (const v of [
            d.stats.attemptSuccessRate,
            d.stats.meanScore,
            d.stats.meanPassRate,
            ...d.stats.passAtK,
            ...d.stats.passHatK,
          ]) {
            if (v !== null) {
              expect(v).toBeGreaterThanOrEqual(0);
              expect(v).toBeLessThanOrEqual(1);
            }
          }
          if (d.stats.attemptSuccessRate !== null)
            expect(d.stats.passAtK[0]).toBeCloseTo(d.stats.attemptSuccessRate, 9);
        }
      }),
    );
  });

  it("an error never turns into a pass or a fail under on_error: fail", () => {
    fc.assert(
      fc.property(fc.array(outcome, { minLength: 1, maxLength: 10 }), policyArb, (outcomes, policy) => {
        const t = outcomes.map((o, i) => attempt(o, i + 1));
        const d = decideCase(t, t.length, gateOf({ policy, onError: "fail", threshold: 0.5 }));
        const hasError = outcomes.some((o) => o === "E" || o === "T" || o === "V");
        expect(d.verdict === "error").toBe(hasError);
      }),
    );
  });
});

describe("verifier flakes (verify_repeats)", () => {
  const flake = (n: number): AttemptResult => ({
    ...attempt("V", n),
    failureKind: "verifier_flake",
    message: "the scorers disagreed with themselves",
  });
  it("are excluded from the agent's rate whatever on_error says, and kept in the classification", () => {
    const d = decideCase([attempt("P", 1), flake(2), attempt("P", 3)], 3, gate("all_attempts_successful"));
    expect(d.verdict).toBe("pass");
    expect(d.counts).toMatchObject({ counted: 2, passed: 2, errored: 0 });
    expect(d.reason).toBe("2 of 2 attempts passed (1 verifier flake excluded)");
    expect(d.classification).toBe("verifier_flake");
    const r = decideCase(
      [attempt("F", 1), flake(2), attempt("P", 3)],
      3,
      gate("attempt_success_rate_at_least", "fail", 0.5),
    );
    expect(r.counts.counted).toBe(2);
    expect(r.stats.attemptSuccessRate).toBe(0.5);
  });
});
