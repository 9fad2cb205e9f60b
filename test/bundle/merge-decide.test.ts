/** A merge decides each case from its tries, not from the verdict a shard's row claims. */
import { describe, expect, it } from "vitest";
import { decisionOf, mergedGateCase } from "../../src/bundle/merge-decide.js";
import type { WireCaseSummary, WireIndexRow } from "../../src/bundle/wire.js";

const run = (attempt: number, status: "passed" | "failed" | "error", failure_kind: string | null = null) => ({
  attempt,
  retry: 0,
  counted: status !== "error",
  status,
  failure_stage: null,
  failure_kind,
  message: null,
  score: status === "error" ? null : status === "passed" ? 1 : 0,
  pass_rate: status === "error" ? null : status === "passed" ? 1 : 0,
  duration_ms: 10,
  diff_truncated: false,
  dir: `run-${attempt}`,
});

function caseSummary(runs: ReturnType<typeof run>[], policy = "all_attempts_successful"): WireCaseSummary {
  return {
    schema: "evalgate.case/v1",
    eval_path: "evals/a.yaml",
    test_id: "t",
    target: "x",
    suite: "a",
    provider: "command",
    model: null,
    description: null,
    instruction: "do it",
    tags: [],
    policy: { name: policy, threshold: null, on_error: "fail" },
    verdict: "pass",
    classification: "stable_pass",
    flaky: false,
    reason: "claimed",
    attempts: {
      planned: runs.length,
      counted: 0,
      passed: 0,
      failed: 0,
      errored: 0,
      timed_out: 0,
      cancelled: 0,
      retried: 0,
    },
    stats: {
      attempt_success_rate: null,
      wilson_95: null,
      mean_score: null,
      mean_pass_rate: null,
      pass_at_k: {},
      pass_hat_k: {},
    },
    usage: null,
    runs,
    change: null,
  } as WireCaseSummary;
}

const row = {
  eval_path: "evals/a.yaml",
  test_id: "t",
  target: "x",
  suite: "a",
  root_eval_path: "evals/a.yaml",
  verdict: "pass",
  reason: "claimed",
  change: null,
} as unknown as WireIndexRow;

describe("merged cases", () => {
  it("are decided from their tries with their own policy", () => {
    const d = decisionOf(caseSummary([run(1, "passed"), run(2, "failed")]));
    expect(d).toMatchObject({ verdict: "fail", classification: "flaky", flaky: true });
    expect(d.counts).toMatchObject({ planned: 2, counted: 2, passed: 1 });
    expect(d.stats.wilson95).not.toBeNull();
    expect(
      decisionOf(caseSummary([run(1, "passed"), run(2, "failed")], "any_attempt_successful")).verdict,
    ).toBe("pass");
    expect(decisionOf(caseSummary([run(1, "passed"), run(2, "error", "agent_exit")])).verdict).toBe("error");
  });

  it("weigh what the tries say, keeping the shard's sentence only when the verdict agrees", () => {
    const lied = mergedGateCase(row, caseSummary([run(1, "failed")]));
    expect(lied.decision.verdict).toBe("fail");
    expect(lied.decision.reason).not.toBe("claimed");
    const honest = mergedGateCase(row, caseSummary([run(1, "passed")]));
    expect(honest.decision).toMatchObject({ verdict: "pass", reason: "claimed" });
  });

  it("are compared with the merge's base runs when it has them, pooled", () => {
    const baseRun = (id: string) => ({
      runId: id,
      gitSha: null,
      startedAt: `2026-11-0${id}T00:00:00Z`,
      key: "k",
      verdict: "pass" as const,
      flaky: false,
      counted: 1,
      passed: 1,
      first: { counted: 1, passed: 1 },
    });
    const c = mergedGateCase(row, caseSummary([run(1, "failed")]), {
      runs: [baseRun("2"), baseRun("1")],
      keyChanged: false,
    });
    expect(c.change).toMatchObject({
      change: "regressed",
      baseAttempts: { counted: 2, passed: 2 },
      baseRuns: 2,
    });
    expect(
      mergedGateCase(row, caseSummary([run(1, "failed")]), { runs: [], keyChanged: false }).change?.change,
    ).toBe("new");
  });
});
