/**
 * The stated error rates hold under the looks a run actually takes (issue 27, point 1). Not the
 * designs on paper (test/gate/sequential.test.ts checks those against scipy) but the code path of a
 * run: the scheduler's question (attemptsWanted, after every batch), the case verdict (decideCase)
 * and the comparison (compareCase with the head's path), driven over every sequence of outcomes,
 * each weighted by its exact chance. So the figures are exact, not sampled.
 *
 * before: the one-sided Wilson rule decided a case at the threshold wrongly 17.8 % of the time each
 * way at {3, 10}'s looks (test/gate/sequential.test.ts recomputes it), and the issue measured 13 %
 * false "significant" drops of an unchanged 0.5 agent at α = 0.05 after the old continuation rule.
 * Measured here (exact): 0.5 agent, base 9, α 0.05 → 4.6 %; α 0.0167 → 1.4 %; 0.9 agent, base 30
 * → 4.2 %; 0.7 agent, base 15 → 4.8 %.
 */
import { describe, expect, it } from "vitest";
import type { CaseGate } from "../../src/config/types.js";
import { attemptsWanted, CaseSchedule, type Counted } from "../../src/gate/adaptive.js";
import { decideCase } from "../../src/gate/case.js";
import { compareCase } from "../../src/gate/compare.js";
import type { AttemptResult } from "../../src/run/types.js";

const attempt = (n: number, ok: boolean): AttemptResult =>
  ({
    caseKey: "k",
    attempt: n,
    retry: 0,
    status: ok ? "passed" : "failed",
    ...(ok ? {} : { failureKind: "quality" }),
    startedAt: "",
    finishedAt: "",
    durationMs: 0,
    phases: { workspaceMs: 0, agentMs: 0, diffMs: 0, scorersMs: 0 },
    dirName: `run-${n}`,
  }) as AttemptResult;

const gate = (threshold: number): CaseGate =>
  ({ policy: "attempt_success_rate_at_least", threshold, onError: "fail" }) as CaseGate;

/** The attempts a run takes on the outcome sequence `bits` (bit i: attempt i+1 passed), as the scheduler plans them. */
function run(schedule: CaseSchedule, bits: number) {
  const tries: AttemptResult[] = [];
  const add = (k: number) => {
    for (let i = 0; i < k; i++) tries.push(attempt(tries.length + 1, ((bits >> tries.length) & 1) === 1));
  };
  for (;;) {
    const outcomes: Counted[] = tries.map((t) => ({
      passed: t.status === "passed",
      passRate: t.status === "passed" ? 1 : 0,
    }));
    const more = attemptsWanted(schedule, tries.length, outcomes);
    if (more <= 0) break;
    add(more);
  }
  return decideCase(tries, tries.length, schedule.ctx.gate as CaseGate, schedule);
}

/**
 * Every distinct run over the 2^max outcome sequences, with its exact chance at success rate p
 * (the sequences that share the attempts a run took are merged: the run never saw the rest).
 */
function everyRun(schedule: CaseSchedule, p: number) {
  const max = schedule.ctx.range.max;
  const seen = new Map<string, { chance: number; decision: ReturnType<typeof decideCase> }>();
  for (let bits = 0; bits < 2 ** max; bits++) {
    const decision = run(schedule, bits);
    const n = decision.counts.counted;
    const key = `${n}:${bits & ((1 << n) - 1)}`;
    if (seen.has(key)) continue;
    const s = decision.counts.passed;
    seen.set(key, { chance: p ** s * (1 - p) ** (n - s), decision });
  }
  return [...seen.values()];
}

describe("a case's rate against min_rate, under the looks a run takes", () => {
  it.each([
    [0.5, 3, 10],
    [0.67, 3, 10],
    [0.7, 3, 12],
    [0.5, 5, 9],
  ])("min_rate %f, repeat {min: %i, max: %i}: each wrong decision at the threshold ≤ 5 %%", (t, min, max) => {
    const schedule = new CaseSchedule({ gate: gate(t), range: { min, max }, verdictGates: true });
    const runs = everyRun(schedule, t);
    expect(runs.reduce((a, r) => a + r.chance, 0)).toBeCloseTo(1, 12);
    // At a true rate of exactly t a decided pass is not wrong, but it is the limit of the chance of
    // a wrong pass as the rate rises to t from below (the chance grows with the rate).
    const wrongPass = runs.filter((r) => r.decision.evidence === "decided" && r.decision.verdict === "pass");
    const wrongFail = runs.filter((r) => r.decision.evidence === "decided" && r.decision.verdict === "fail");
    const sum = (xs: typeof runs) => xs.reduce((a, r) => a + r.chance, 0);
    expect(sum(wrongPass)).toBeLessThanOrEqual(0.05);
    expect(sum(wrongFail)).toBeLessThanOrEqual(0.05);
    // ... and the figure is the design's own, so docs/gate.md can quote it: at {3, 10} and 0.5 it
    // is 4.1 % each way (test/fixtures/sequential/reference.py enumerates it independently).
    if (t === 0.5 && min === 3 && max === 10) {
      expect(sum(wrongPass)).toBeCloseTo(0.041015625, 9);
      expect(sum(wrongFail)).toBeCloseTo(0.041015625, 9);
    }
  });
});

describe("a drop against a pooled base, under the looks a run takes", () => {
  // The base: a history of `baseN` attempts, every one drawn at the same rate as the head (an
  // unchanged agent). The chance that the run calls the drop significant at `level` must stay
  // within `level`, the base's count averaged over its binomial distribution.
  const binom = (n: number, k: number, p: number) => {
    let c = 1;
    for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
    return c * p ** k * (1 - p) ** (n - k);
  };
  it.each([
    [0.5, 9, 0.05],
    [0.5, 9, 0.05 / 3],
    [0.9, 30, 0.05],
    [0.7, 15, 0.05],
  ])("an unchanged agent at %f, base of %i attempts, level %f: false alarms ≤ level", (p, baseN, level) => {
    let falseAlarm = 0;
    for (let b = 0; b <= baseN; b++) {
      const base = { verdict: "pass" as const, counted: baseN, passed: b };
      const schedule = new CaseSchedule({
        gate: gate(0.5),
        range: { min: 3, max: 10 },
        verdictGates: true,
        drop: { base: { counted: baseN, passed: b }, level },
      });
      let significant = 0;
      for (const r of everyRun(schedule, p)) {
        const d = r.decision;
        const change = compareCase(base, {
          verdict: d.verdict,
          counted: d.counts.counted,
          passed: d.counts.passed,
          ...(d.path ? { path: d.path } : {}),
        });
        // A drop only: the p-value of a rise is an improvement's.
        const drop = (change.successRateDelta ?? 0) < 0;
        if (drop && change.pValue !== null && change.pValue <= level) significant += r.chance;
      }
      falseAlarm += binom(baseN, b, p) * significant;
    }
    expect(falseAlarm).toBeLessThanOrEqual(level);
  });
});
