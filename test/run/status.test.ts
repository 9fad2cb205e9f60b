import { describe, expect, it } from "vitest";
import { decideStatus, type StageFacts } from "../../src/run/status.js";
import type { Grading } from "../../src/scorers/grading.js";

const agentOk = { exitCode: 0, signal: null, timedOut: false, durationMs: 1 };
const graded = (passed: boolean, errored: string[] = []): Grading =>
  ({
    score: passed ? 1 : 0,
    passRate: passed ? 1 : 0,
    passed,
    threshold: 1,
    requiredFailed: [],
    errored,
    scorers: errored.map((name) => ({
      name,
      type: "command",
      weight: 1,
      required: false,
      durationMs: 1,
      result: { state: "error", reason: "broke" },
    })),
  }) as unknown as Grading;

describe("decideStatus with tampering", () => {
  const tampered = ["test/cart.test.js"];
  it.each<[string, StageFacts, string]>([
    ["a passing grading", { agent: agentOk, grading: graded(true), tampered }, "tampered"],
    ["a failing grading", { agent: agentOk, grading: graded(false), tampered }, "tampered"],
    [
      "an agent timeout",
      { agent: { ...agentOk, timedOut: true }, grading: graded(true), tampered },
      "tampered",
    ],
    ["an agent crash", { agent: { ...agentOk, exitCode: 1 }, grading: graded(true), tampered }, "tampered"],
    ["a scorer error", { agent: agentOk, grading: graded(true, ["unit"]), tampered }, "tampered"],
    ["a workspace error", { workspaceError: "disk full", tampered }, "workspace_error"],
  ])("beats %s", (_label, facts, kind) => {
    expect(decideStatus(facts).failureKind).toBe(kind);
  });

  it("is a failure of the agent, naming the paths", () => {
    const d = decideStatus({
      agent: agentOk,
      grading: graded(true),
      tampered: ["a", "b", "c", "d", "e"],
    });
    expect(d).toEqual({
      status: "failed",
      failureStage: "agent",
      failureKind: "tampered",
      message: "the agent changed protected paths a, b, c and 2 more (restored before scoring)",
    });
  });
});
