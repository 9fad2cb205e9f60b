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
    // before: every timeout was `timeout` and every non-zero exit or reported error `error`, never
    // counted: an agent that exits 1 whenever it fails passed under on_error: exclude.
    [
      "an agent that timed out, its work passing (a warning says so)",
      { agent: { ...agentOk, timedOut: true }, grading: graded(true), agentTimeoutMs: 2000 },
      "passed",
      undefined,
      undefined,
    ],
    [
      "an agent that timed out, its work failing: counted against it",
      { agent: { ...agentOk, timedOut: true }, grading: failing, agentTimeoutMs: 2000 },
      "failed",
      "agent",
      "agent_timeout",
    ],
    [
      "an agent that timed out while the model API answered 429",
      {
        agent: { ...agentOk, timedOut: true, infrastructure: "the model API answered 429 (rate limit)" },
        grading: failing,
      },
      "timeout",
      "agent",
      "agent_timeout",
    ],
    [
      "an agent that exited non-zero, its work passing",
      { agent: { ...agentOk, exitCode: 2 }, grading: graded(true) },
      "passed",
      undefined,
      undefined,
    ],
    [
      "an agent that exited non-zero, its work failing",
      { agent: { ...agentOk, exitCode: 1 }, grading: failing },
      "failed",
      "agent",
      "agent_exit",
    ],
    [
      "an agent that exited non-zero, with no change",
      { agent: { ...agentOk, exitCode: 1 }, grading: failing, diffEmpty: true },
      "failed",
      "agent",
      "agent_exit",
    ],
    [
      "an agent that reported an error of its own, its work failing",
      { agent: { ...agentOk, error: "the agent reported an error: gave up" }, grading: failing },
      "failed",
      "agent",
      "agent_exit",
    ],
    [
      "an agent whose model API answered 5xx, even if its work passes",
      {
        agent: { ...agentOk, exitCode: 1, infrastructure: "the model API answered 503 (server error)" },
        grading: graded(true),
      },
      "error",
      "agent",
      "agent_exit",
    ],
    [
      "an agent that could not be started (no grading at all)",
      {
        agent: {
          ...agentOk,
          exitCode: null,
          error: "not found",
          infrastructure: "the agent could not be started",
        },
      },
      "error",
      "agent",
      "agent_exit",
    ],
    [
      "infrastructure evidence of an agent that ended well is no error",
      { agent: { ...agentOk, infrastructure: "the model API answered 429 (rate limit)" }, grading: failing },
      "failed",
      "scorer",
      "quality",
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

  it("names the agent's exit status, its last line and the evidence", () => {
    expect(
      decideStatus({
        agent: { ...agentOk, exitCode: 1, infrastructure: "the model API answered 529 (server error)" },
        agentTail: "working\nAPI error 529\n",
        grading: graded(true),
      }).message,
    ).toBe("the agent exited with status 1: API error 529 (the model API answered 529 (server error))");
  });

  it("keeps both: how the agent ended and why its work failed", () => {
    const failingUnit = {
      ...graded(false),
      scorers: [
        {
          name: "unit",
          type: "command",
          weight: 1,
          required: false,
          durationMs: 1,
          result: { state: "complete", score: 0, passed: false, reason: "exit 1" },
        },
      ],
    } as unknown as Grading;
    expect(
      decideStatus({ agent: { ...agentOk, exitCode: 1 }, agentTail: "giving up\n", grading: failingUnit }),
    ).toEqual({
      status: "failed",
      failureStage: "agent",
      failureKind: "agent_exit",
      message: "the agent exited with status 1: giving up; the work it left failed: unit: exit 1",
    });
  });

  it("warns when an agent that exited non-zero or timed out passed", () => {
    expect(decideStatus({ agent: { ...agentOk, exitCode: 3 }, grading: graded(true) })).toEqual({
      status: "passed",
      warnings: ["the agent exited with status 3, but the work it left passed the scorers"],
    });
    expect(
      decideStatus({ agent: { ...agentOk, timedOut: true }, agentTimeoutMs: 60_000, grading: graded(true) })
        .warnings,
    ).toEqual(["the agent did not finish within 60 s, but the work it left passed the scorers"]);
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

  it("names test configuration and what setup built apart from protected paths", () => {
    const d = decideStatus({
      agent: agentOk,
      grading: graded(true),
      tampered: ["test/a.js"],
      tamperedConfig: ["package.json (scripts)"],
      tamperedSetup: [".venv/lib/python3.11/site-packages/pass.pth"],
    });
    expect(d.message).toBe(
      "the agent changed protected path test/a.js; test configuration package.json (scripts); what setup built (.venv/lib/python3.11/site-packages/pass.pth) (restored before scoring)",
    );
  });
});
