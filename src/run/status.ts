/**
 * An attempt's status from what happened in its stages (docs/gate.md, "Attempts and their statuses"). The
 * first stage that went wrong decides, except that tampering with protected paths outranks
 * everything after the workspace was made (docs/decisions/0041); an agent that timed out or crashed
 * is still scored, and the record keeps both.
 */
import type { Grading } from "../scorers/grading.js";
import type { AgentRecord, AttemptStatus, FailureKind, FailureStage } from "./types.js";

/** The `tampered` entry of an agent that replaced its workspace folder itself (with a link). */
export const WORKSPACE_REPLACED = "./";

export interface StageFacts {
  workspaceError?: string;
  setupError?: string;
  agent?: AgentRecord;
  /** The last lines the agent printed (for the message of a crash). */
  agentTail?: string;
  agentTimeoutMs?: number;
  grading?: Grading;
  diffEmpty?: boolean;
  /** Protected files the agent changed (restored before scoring). */
  tampered?: string[];
}

export interface StatusDecision {
  status: AttemptStatus;
  failureStage?: FailureStage;
  failureKind?: FailureKind;
  message?: string;
}

export function decideStatus(f: StageFacts): StatusDecision {
  if (f.workspaceError) {
    return {
      status: "error",
      failureStage: "workspace",
      failureKind: "workspace_error",
      message: f.workspaceError,
    };
  }
  if (f.setupError)
    return { status: "error", failureStage: "setup", failureKind: "setup_error", message: f.setupError };
  // Tampering is certain whatever else happened: it is a failure of the agent, never an error that
  // on_error could retry or exclude (an agent cannot escape it by crashing afterwards).
  if (f.tampered?.includes(WORKSPACE_REPLACED)) {
    return {
      status: "failed",
      failureStage: "agent",
      failureKind: "tampered",
      message:
        "the agent replaced its workspace folder (with a link out of it): nothing was captured or scored",
    };
  }
  if (f.tampered && f.tampered.length > 0) {
    const n = f.tampered.length;
    const list = f.tampered.slice(0, 3).join(", ") + (n > 3 ? ` and ${n - 3} more` : "");
    return {
      status: "failed",
      failureStage: "agent",
      failureKind: "tampered",
      message: `the agent changed protected path${n > 1 ? "s" : ""} ${list} (restored before scoring)`,
    };
  }
  const a = f.agent;
  if (a?.timedOut) {
    const secs = f.agentTimeoutMs ? `${Math.round(f.agentTimeoutMs / 1000)} s` : "its time limit";
    return {
      status: "timeout",
      failureStage: "agent",
      failureKind: "agent_timeout",
      message: `the agent did not finish within ${secs}${a.activity ? `; ${a.activity}` : ""}`,
    };
  }
  // An agent that stopped for a reason of its own (out of turns) exits non-zero: that is its outcome.
  if (a && (a.error || (a.exitCode !== 0 && !a.stopped))) {
    return {
      status: "error",
      failureStage: "agent",
      failureKind: "agent_exit",
      message:
        a.error ??
        `the agent exited with ${a.exitCode === null ? `signal ${a.signal}` : `status ${a.exitCode}`}${lastLine(f.agentTail)}`,
    };
  }
  const g = f.grading;
  if (!g)
    return {
      status: "error",
      failureStage: "scorer",
      failureKind: "scorer_error",
      message: "the attempt was not graded",
    };
  if (g.errored.length > 0) {
    const broken = g.scorers.filter((s) => s.result.state === "error");
    const timedOut = broken.some((s) => s.result.state === "error" && s.result.timedOut);
    const first = broken[0]!;
    return {
      status: "error",
      failureStage: "scorer",
      failureKind: timedOut ? "scorer_timeout" : "scorer_error",
      message: `scorer ${first.name} could not run: ${first.result.reason}`,
    };
  }
  if (g.passed) return { status: "passed" };
  const failing = g.scorers.filter((s) => s.result.state === "complete" && !s.result.passed);
  const why = failing
    .slice(0, 2)
    .map((s) => `${s.name}: ${s.result.state === "complete" ? s.result.reason : ""}`)
    .join("; ");
  const scoreText = g.score === null ? "" : `score ${g.score.toFixed(2)} < ${g.threshold}`;
  const required =
    g.requiredFailed.length > 0 ? `required scorer ${g.requiredFailed.join(", ")} failed` : scoreText;
  if (f.diffEmpty) {
    return {
      status: "failed",
      failureStage: "agent",
      failureKind: "empty_diff",
      message: `the agent changed nothing; ${why || required}`,
    };
  }
  return {
    status: "failed",
    failureStage: "scorer",
    failureKind: "quality",
    message: why ? `${why}` : required,
  };
}

function lastLine(tail: string | undefined): string {
  const line = (tail ?? "")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);
  if (!line) return "";
  // evalgate's own explanation (sandbox/explain.ts) names a path and a fix: kept whole.
  const max = line.startsWith("evalgate: ") ? 600 : 200;
  return `: ${line.length > max ? `${line.slice(0, max - 1)}…` : line}`;
}

/** Whether an attempt that failed at `stage` ended before its agent started (no prompt, no log). */
export function agentNeverRan(stage: string | null | undefined): boolean {
  return stage === "workspace" || stage === "setup";
}
