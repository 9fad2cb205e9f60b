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

describe("decideStatus: status, failure_stage and failure_kind", () => {
  const failing = { ...graded(false), score: 0.5 } as Grading;
  it.each<[string, StageFacts, string, string | undefined, string | undefined]>([
    [
      "a seed that could not be made",
      { workspaceError: "cannot copy" },
      "error",
      "workspace",
      "workspace_error",
    ],
    ["a setup command that failed", { setupError: "setup exited with 1" }, "error", "setup", "setup_error"],
    [
      // before: no limit was read; a fork bomb held at its pids limit until the timeout was a timeout.
      "an agent stopped at its case's pids limit, also when it then ran out of time",
      {
        agent: {
          ...agentOk,
          timedOut: true,
          limit: { kind: "pids", detail: "reached its limit of 20 processes" },
        },
        grading: graded(true),
        agentTimeoutMs: 2000,
      },
      "failed",
      "agent",
      "pids_limit",
    ],
    [
      "an agent killed at its case's memory limit, even if its work passes",
      {
        agent: {
          ...agentOk,
          exitCode: null,
          signal: "SIGKILL",
          limit: { kind: "memory", detail: "killed at its memory limit of 32 MiB" },
        },
        grading: graded(true),
      },
      "failed",
      "agent",
      "memory_limit",
    ],
    [
      "an agent that timed out, even if its work passes",
      { agent: { ...agentOk, timedOut: true }, grading: graded(true), agentTimeoutMs: 2000 },
      "timeout",
      "agent",
      "agent_timeout",
    ],
    [
      "an agent that exited non-zero, even if its work passes",
      { agent: { ...agentOk, exitCode: 2 }, grading: graded(true) },
      "error",
      "agent",
      "agent_exit",
    ],
    [
      "an agent that reported an error",
      { agent: { ...agentOk, error: "rate limited" }, grading: graded(true) },
      "error",
      "agent",
      "agent_exit",
    ],
    [
      "a scorer that could not run",
      { agent: agentOk, grading: graded(true, ["unit"]) },
      "error",
      "scorer",
      "scorer_error",
    ],
    ["a passing grading", { agent: agentOk, grading: graded(true) }, "passed", undefined, undefined],
    ["a failing grading", { agent: agentOk, grading: failing }, "failed", "scorer", "quality"],
    [
      "a failing grading with no change",
      { agent: agentOk, grading: failing, diffEmpty: true },
      "failed",
      "agent",
      "empty_diff",
    ],
  ])("%s", (_label, facts, status, stage, kind) => {
    const d = decideStatus(facts);
    expect([d.status, d.failureStage, d.failureKind]).toEqual([status, stage, kind]);
  });

  it("is a scorer_timeout when a scorer ran out of time", () => {
    const g = graded(true, ["slow"]);
    (g.scorers[0]!.result as { timedOut?: boolean }).timedOut = true;
    expect(decideStatus({ agent: agentOk, grading: g })).toMatchObject({
      status: "error",
      failureStage: "scorer",
      failureKind: "scorer_timeout",
      message: "scorer slow could not run: broke",
    });
  });

  it("names the agent's exit status and its last line", () => {
    expect(
      decideStatus({
        agent: { ...agentOk, exitCode: 1 },
        agentTail: "working\nAPI error 529\n",
        grading: graded(true),
      }).message,
    ).toBe("the agent exited with status 1: API error 529");
  });
});

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
