/**
 * The wire records of one try of an attempt: its result.json and grading.json, snake_case and
 * versioned, written as each try finishes.
 */
import type { CaseSpec } from "../config/types.js";
import type { Usage } from "../providers/types.js";
import { agentNeverRan } from "../run/status.js";
import type { AttemptResult } from "../run/types.js";
import { wireIdentity } from "./wire.js";

export const ATTEMPT_SCHEMA = "evalgate.attempt/v1";
export const GRADING_SCHEMA = "evalgate.grading/v1";

export interface WireUsage {
  input_tokens: number | null;
  output_tokens: number | null;
  cached_tokens: number | null;
  cost_usd: number | null;
  cost_source: "agent" | "price_table" | null;
  turns: number | null;
  tool_calls: number | null;
  model: string | null;
  agent_version: string | null;
}

export function wireUsage(u: Usage): WireUsage {
  return {
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    cached_tokens: u.cachedTokens,
    cost_usd: u.costUsd,
    cost_source: u.costSource,
    turns: u.turns,
    tool_calls: u.toolCalls,
    model: u.model,
    agent_version: u.agentVersion,
  };
}

export function wireAttempt(spec: CaseSpec, r: AttemptResult, setupLog: boolean) {
  // No prompt or agent log is written when the workspace or setup failed: name none that is missing.
  const agentRan = !agentNeverRan(r.failureStage);
  const files: Record<string, unknown> = {
    prompt: agentRan ? "prompt.md" : null,
    agent_log: agentRan ? "agent.log" : null,
    setup_log: setupLog ? "setup.log" : null,
    diff: r.diff ? "diff.patch" : null,
    grading: r.grading ? "grading.json" : null,
    transcript: r.transcript ?? null,
    agent_output: r.agentOutput ?? null,
    scorer_logs: Object.fromEntries((r.grading?.scorers ?? []).map((s) => [s.name, `scorers/${s.name}.log`])),
  };
  return {
    schema: ATTEMPT_SCHEMA,
    ...wireIdentity(spec),
    attempt: r.attempt,
    retry: r.retry,
    status: r.status,
    failure_stage: r.failureStage ?? null,
    failure_kind: r.failureKind ?? null,
    message: r.message ?? null,
    score: r.grading?.score ?? null,
    pass_rate: r.grading?.passRate ?? null,
    threshold: spec.test.threshold,
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    duration_ms: r.durationMs,
    phases: {
      workspace_ms: r.phases.workspaceMs,
      agent_ms: r.phases.agentMs,
      diff_ms: r.phases.diffMs,
      scorers_ms: r.phases.scorersMs,
    },
    baseline: r.startSha ? { sha: r.startSha } : null,
    usage: r.usage ? wireUsage(r.usage) : null,
    tampered: r.tampered ?? [],
    warnings: r.warnings ?? [],
    verify: r.verify ?? null,
    agent: r.agent
      ? {
          provider: spec.target.provider,
          model: spec.target.model ?? null,
          exit_code: r.agent.exitCode,
          signal: r.agent.signal,
          timed_out: r.agent.timedOut,
          duration_ms: r.agent.durationMs,
          error: r.agent.error ?? null,
          stopped: r.agent.stopped ?? null,
          activity: r.agent.activity ?? null,
          infrastructure: r.agent.infrastructure ?? null,
          limit: r.agent.limit ? { kind: r.agent.limit.kind, detail: r.agent.limit.detail } : null,
        }
      : null,
    environment: r.environment ?? null,
    resources:
      r.resources?.map((a) => ({ resource: a.resource, by: a.by ?? null, note: a.note ?? null })) ?? null,
    // How the attempt got what setup built (absent: setup built nothing, or an older bundle).
    ...(r.setupTrees
      ? { setup_trees: { mode: r.setupTrees.mode, reason: r.setupTrees.reason ?? null } }
      : {}),
    diff: r.diff
      ? {
          files: (r.diff.files ?? []).map((f) => ({
            path: f.path,
            old_path: f.oldPath ?? null,
            status: f.status,
            additions: f.additions,
            deletions: f.deletions,
            binary: f.binary,
            mode_change: f.modeChange ?? null,
          })),
          additions: r.diff.additions,
          deletions: r.diff.deletions,
          bytes: r.diff.bytes,
          truncated: r.diff.truncated,
          empty: r.diff.fileCount === 0,
        }
      : null,
    files,
  };
}

export type WireAttempt = ReturnType<typeof wireAttempt>;

export function wireGrading(r: AttemptResult) {
  const g = r.grading!;
  return {
    schema: GRADING_SCHEMA,
    score: g.score,
    pass_rate: g.passRate,
    passed: g.passed,
    threshold: g.threshold,
    required_failed: g.requiredFailed,
    errored: g.errored,
    scorers: g.scorers.map((s) => ({
      name: s.name,
      type: s.type,
      weight: s.weight,
      required: s.required,
      state: s.result.state,
      score: s.result.state === "complete" ? s.result.score : null,
      passed: s.result.state === "complete" ? s.result.passed : null,
      reason: s.result.reason,
      timed_out: s.result.state === "error" ? (s.result.timedOut ?? false) : false,
      duration_ms: s.durationMs,
      log: `scorers/${s.name}.log`,
      details: s.result.details ?? null,
    })),
  };
}

export type WireGrading = ReturnType<typeof wireGrading>;

/** A case's environment (the image by digest, from the first try that ran in it) and resources as applied. */
export function wireCaseEnvironment(spec: CaseSpec, tries: readonly AttemptResult[]) {
  const env = tries.find((t) => t.environment)?.environment;
  const applied = tries.find((t) => t.resources)?.resources;
  const r = spec.resources;
  return {
    ...(env
      ? { environment: { image: env.image, digest: env.digest, workdir: env.workdir, engine: env.engine } }
      : {}),
    ...(r
      ? {
          resources: {
            memory_bytes: r.memoryBytes ?? null,
            cpus: r.cpus ?? null,
            pids: r.pids ?? null,
            disk_bytes: r.diskBytes ?? null,
            applied: (applied ?? []).map((a) => ({
              resource: a.resource,
              by: a.by ?? null,
              note: a.note ?? null,
            })),
          },
        }
      : {}),
  };
}
