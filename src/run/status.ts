/**
 * An attempt's status from what happened in its stages (docs/gate.md, "Attempts and their statuses"). The
 * first stage that went wrong decides, except that tampering with protected paths outranks
 * everything after the workspace was made (docs/decisions/0041). An agent that timed out or exited
 * non-zero is scored on what it left, and its failure is its own, unless there is evidence of
 * infrastructure trouble (docs/decisions/0192): an agent cannot choose to be an error.
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
  /** Entries of setup-built trees the agent changed (restored before scoring). */
  tamperedSetup?: string[];
  /** Test configuration the agent changed (restored before scoring). */
  tamperedConfig?: string[];
  /** The agent filled the disk its workspace is on, so evalgate could not capture or restore (0247). */
  diskFilled?: string;
}

export interface StatusDecision {
  status: AttemptStatus;
  failureStage?: FailureStage;
  failureKind?: FailureKind;
  message?: string;
  /** What went wrong without deciding the status (an agent that exited 1, but whose work passed). */
  warnings?: string[];
}

/** Everything the agent was found to have tampered with, in the order the message names it. */
export function allTampered(f: StageFacts): string[] {
  return [...(f.tampered ?? []), ...(f.tamperedConfig ?? []), ...(f.tamperedSetup ?? [])];
}

function listed(items: readonly string[]): string {
  const n = items.length;
  return items.slice(0, 3).join(", ") + (n > 3 ? ` and ${n - 3} more` : "");
}

/** The tampering message: each kind of thing the agent changed, named. */
function tamperedMessage(f: StageFacts): string {
  const parts: string[] = [];
  const p = f.tampered ?? [];
  if (p.length > 0) parts.push(`protected path${p.length > 1 ? "s" : ""} ${listed(p)}`);
  if (f.tamperedConfig?.length) parts.push(`test configuration ${listed(f.tamperedConfig)}`);
  if (f.tamperedSetup?.length) parts.push(`what setup built (${listed(f.tamperedSetup)})`);
  return `the agent changed ${parts.join("; ")} (restored before scoring)`;
}

/** Whether the agent did not end well: timed out, exited non-zero (not by its own stop), or failed to run. */
function agentTrouble(a: AgentRecord | undefined): a is AgentRecord {
  return a !== undefined && (a.timedOut || a.error !== undefined || (a.exitCode !== 0 && !a.stopped));
}

/** How the agent ended, for a message: "timed out after 120 s", "exited with status 1: <last line>". */
function agentEnd(f: StageFacts, a: AgentRecord): string {
  if (a.timedOut) {
    const secs = f.agentTimeoutMs ? `${Math.round(f.agentTimeoutMs / 1000)} s` : "its time limit";
    return `the agent did not finish within ${secs}${a.activity ? `; ${a.activity}` : ""}`;
  }
  return (
    a.error ??
    `the agent exited with ${a.exitCode === null ? `signal ${a.signal}` : `status ${a.exitCode}`}${lastLine(f.agentTail)}`
  );
}

export function decideStatus(f: StageFacts): StatusDecision {
  return decidedBeforeGrading(f) ?? decidedByGrading(f);
}

/**
 * What is decided whatever the scorers said: a workspace or setup error, tampering, a declared
 * limit, and the evidence that the agent could not do its work; undefined when the grading decides.
 */
function decidedBeforeGrading(f: StageFacts): StatusDecision | undefined {
  // A full disk is infrastructure trouble unless evalgate measured that the agent filled it.
  if (f.diskFilled) {
    return { status: "failed", failureStage: "agent", failureKind: "disk_limit", message: f.diskFilled };
  }
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
  if (allTampered(f).length > 0) {
    return { status: "failed", failureStage: "agent", failureKind: "tampered", message: tamperedMessage(f) };
  }
  const a = f.agent;
  // A limit the case declares is part of its task: an agent stopped there failed it, whatever it
  // left behind (as a timeout is decided whatever was scored).
  if (a?.limit) {
    return {
      status: "failed",
      failureStage: "agent",
      failureKind: `${a.limit.kind}_limit`,
      message: `the agent was ${a.limit.detail.startsWith("killed") ? "" : "stopped: it "}${a.limit.detail}`,
    };
  }
  // Evidence that the agent could not do its work (the model API refused it, the program could not
  // start): an error, which on_error may retry or exclude.
  if (agentTrouble(a) && a.infrastructure) {
    const evidence = a.error?.includes(a.infrastructure) ? "" : ` (${a.infrastructure})`;
    return a.timedOut
      ? {
          status: "timeout",
          failureStage: "agent",
          failureKind: "agent_timeout",
          message: `${agentEnd(f, a)}${evidence}`,
        }
      : {
          status: "error",
          failureStage: "agent",
          failureKind: "agent_exit",
          message: `${agentEnd(f, a)}${evidence}`,
        };
  }
  return undefined;
}

/** The attempt as graded: passed, or failed by its agent or by the quality of its work. */
function decidedByGrading(f: StageFacts): StatusDecision {
  const a = f.agent;
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
  // Without such evidence a timeout or a non-zero exit does not excuse the work: it is graded.
  if (g.passed) {
    if (!agentTrouble(a)) return { status: "passed" };
    return { status: "passed", warnings: [`${agentEnd(f, a)}, but the work it left passed the scorers`] };
  }
  const failing = g.scorers.filter((s) => s.result.state === "complete" && !s.result.passed);
  const why = failing
    .slice(0, 2)
    .map((s) => `${s.name}: ${s.result.state === "complete" ? s.result.reason : ""}`)
    .join("; ");
  const scoreText = g.score === null ? "" : `score ${g.score.toFixed(2)} < ${g.threshold}`;
  const required =
    g.requiredFailed.length > 0 ? `required scorer ${g.requiredFailed.join(", ")} failed` : scoreText;
  if (agentTrouble(a)) {
    return {
      status: "failed",
      failureStage: "agent",
      failureKind: a.timedOut ? "agent_timeout" : "agent_exit",
      message: `${agentEnd(f, a)}; the work it left ${f.diffEmpty ? "changed nothing" : "failed"}: ${why || required}`,
    };
  }
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
