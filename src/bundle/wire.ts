/**
 * The wire types of the run bundle (SPEC §4): snake_case and versioned. This is the only place
 * where internal camelCase records become files that other tools read.
 */

import type { CaseSpec } from "../config/types.js";
import type { CaseDecision } from "../gate/case.js";
import type { CaseChange } from "../gate/compare.js";
import { agentNeverRan } from "../run/status.js";
import type { AttemptResult, Usage } from "../run/types.js";
import type { UsageTotals } from "../run/usage.js";

export const SUMMARY_SCHEMA = "evalgate.summary/v1";
export const CASE_SCHEMA = "evalgate.case/v1";
export const ATTEMPT_SCHEMA = "evalgate.attempt/v1";
export const GRADING_SCHEMA = "evalgate.grading/v1";

export interface WireIdentity {
  eval_path: string;
  test_id: string;
  target: string;
}

export interface WireCounts {
  planned: number;
  counted: number;
  passed: number;
  failed: number;
  errored: number;
  timed_out: number;
  cancelled: number;
  retried: number;
}

export interface WireRunRef {
  attempt: number;
  retry: number;
  counted: boolean;
  status: AttemptResult["status"];
  failure_stage: string | null;
  failure_kind: string | null;
  message: string | null;
  score: number | null;
  pass_rate: number | null;
  duration_ms: number;
  /** diff.patch was cut at limits.diff (see result.json diff.bytes for the whole size). */
  diff_truncated: boolean;
  /** Relative to the case's result directory. */
  dir: string;
}

export interface WireChange {
  change: "regressed" | "improved" | "unchanged" | "new" | "removed";
  base_verdict: string | null;
  base_attempts: { counted: number; passed: number } | null;
  success_rate_delta: number | null;
  p_value: number | null;
  significant: boolean;
  /** The baseline's case was flaky (absent in older bundles). */
  base_flaky?: boolean | null;
}

export interface WireIndexRow extends WireIdentity {
  suite: string;
  /** The root eval file whose gate governs this case (a wrapper, or eval_path itself). */
  root_eval_path: string;
  provider: string;
  model: string | null;
  tags: string[];
  verdict: CaseDecision["verdict"];
  classification: CaseDecision["classification"];
  flaky: boolean;
  reason: string;
  /** Whether the attempts settled the verdict (absent in older bundles: decided). */
  evidence?: "decided" | "inconclusive";
  /** For an inconclusive case: about how many more attempts would settle it, if known. */
  settle_attempts?: number | null;
  attempts: WireCounts;
  attempt_success_rate: number | null;
  mean_score: number | null;
  mean_pass_rate: number | null;
  /** What the case's attempts used (retries included), or null when no agent ran. */
  usage: WireUsageTotals | null;
  /** Relative to the bundle root. */
  result_dir: string;
  summary_path: string;
  runs: {
    attempt: number;
    retry: number;
    status: string;
    failure_kind: string | null;
    diff_truncated: boolean;
    dir: string;
    result_path: string;
    grading_path: string | null;
    diff_path: string | null;
  }[];
  change: WireChange | null;
}

export interface WireCaseSummary extends WireIdentity {
  schema: typeof CASE_SCHEMA;
  suite: string;
  provider: string;
  model: string | null;
  description: string | null;
  instruction: string;
  tags: string[];
  policy: { name: string; threshold: number | null; on_error: string };
  verdict: CaseDecision["verdict"];
  classification: CaseDecision["classification"];
  flaky: boolean;
  reason: string;
  /** Whether the attempts settled the verdict (absent in older bundles: decided). */
  evidence?: "decided" | "inconclusive";
  settle_attempts?: number | null;
  /** Adaptive attempts: the range the case was given (absent: a fixed repeat). */
  repeat?: { min: number; max: number } | null;
  attempts: WireCounts;
  stats: {
    attempt_success_rate: number | null;
    wilson_95: [number, number] | null;
    mean_score: number | null;
    mean_pass_rate: number | null;
    pass_at_k: Record<string, number>;
    pass_hat_k: Record<string, number>;
  };
  usage: WireUsageTotals | null;
  runs: WireRunRef[];
  change: WireChange | null;
}

export interface WireComparison {
  baseline_run_id: string;
  baseline_git_sha: string | null;
  regressed: number;
  improved: number;
  unchanged: number;
  new: number;
  removed: number;
  /** Cases whose success rate moved significantly (p < 0.05), whatever their verdicts. */
  significant: number;
  /** Cases of the baseline that this run no longer has (only when the run was not filtered or sharded). */
  removed_cases: (WireIdentity & { suite: string; base_verdict: string })[];
  /** The baseline's per-target rollups (its summary's `targets`), for per-target deltas; absent in older bundles. */
  targets?: WireTargetRollup[];
}

export function wireChange(c: CaseChange): WireChange {
  return {
    change: c.change,
    base_verdict: c.baseVerdict,
    base_attempts: c.baseAttempts,
    success_rate_delta: c.successRateDelta,
    p_value: c.pValue,
    significant: c.significant,
    base_flaky: c.baseFlaky ?? null,
  };
}

export interface WireTargetRollup {
  name: string;
  provider: string;
  model: string | null;
  cases: number;
  passed: number;
  failed: number;
  errored: number;
  flaky: number;
  attempts: number;
  attempts_passed: number;
  attempt_success_rate: number | null;
  usage: WireUsageTotals | null;
}

export interface WireSummary {
  schema: typeof SUMMARY_SCHEMA;
  /** interrupted: the run was stopped (SIGINT, SIGTERM) and the bundle holds what had completed. */
  status: "complete" | "interrupted";
  run: {
    id: string;
    started_at: string;
    finished_at: string;
    duration_ms: number;
    evalgate_version: string;
    node_version: string;
    platform: string;
    concurrency: number;
    repeat_override: number | { min: number; max: number } | null;
    filters: { targets: string[]; tests: string[]; tags: string[] };
    /** This bundle is shard `index` of `total` (1-based), or null. */
    shard: { index: number; total: number } | null;
    /** Run ids of the shard bundles this bundle was merged from, or null. */
    merged_from: string[] | null;
  };
  git: { sha: string | null; branch: string | null; dirty: boolean | null } | null;
  tags: Record<string, string>;
  evals: {
    eval_path: string;
    name: string;
    description: string | null;
    tags: Record<string, string>;
    min_case_pass_rate: number;
    regressions: "fail" | "warn" | "ignore";
    /** Absent in older bundles (every flip counted: any). */
    regression_evidence?: "significant" | "any";
    regression_alpha?: number;
    on_inconclusive?: "pass" | "warn" | "fail";
    budget: { cost_usd: number | null; tokens: number | null; duration_ms: number | null };
    cases: number;
  }[];
  gate: {
    verdict: "pass" | "fail";
    reasons: string[];
    warnings: string[];
    /** Eval files whose budget was spent, and why. */
    budget_stops: { eval_path: string; reason: string }[];
  };
  counts: {
    cases: number;
    passed: number;
    failed: number;
    errored: number;
    flaky: number;
    attempts: number;
    attempts_passed: number;
    attempts_failed: number;
    attempts_errored: number;
  };
  targets: WireTargetRollup[];
  /** What every case of the run used. */
  usage: WireUsageTotals | null;
  comparison: WireComparison | null;
  /** What the agents ran under (sandbox: auto | bwrap | none); absent in bundles before it existed. */
  isolation?: WireIsolation;
  index: "index.jsonl";
  /** A digest of every other file of the bundle, written last (bundle/seal.ts); absent in older bundles. */
  seal?: WireSeal;
}

export interface WireSeal {
  algorithm: "sha256";
  /** Every regular file of the bundle but summary.json, by its bundle-relative path: its sha256. */
  files: Record<string, string>;
  /** sha256 over summary.json without `seal` and the `files` list: the seal of the whole bundle. */
  digest: string;
}

export type WireIsolationLevel = "bwrap" | "pid-namespace" | "subreaper" | "none";

export interface WireIsolation {
  /** The weakest level any agent of the run ran under; null when no target runs an agent program. */
  level: WireIsolationLevel | null;
  /** Why it is not bwrap (null when it is). */
  reason: string | null;
  targets: { name: string; level: WireIsolationLevel; reason: string | null }[];
}

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

/**
 * A usage rollup (case, target, run). Values are null when no attempt reported them; `attempts`
 * counts the attempts whose usage was summed, `attempts_without_usage` those whose agent reported none.
 */
export interface WireUsageTotals {
  input_tokens: number | null;
  output_tokens: number | null;
  cached_tokens: number | null;
  cost_usd: number | null;
  attempts: number;
  attempts_without_usage: number;
  /** The agent CLI versions and models its attempts reported (distinct, sorted). */
  agent_versions: string[];
  models: string[];
}

export function wireUsageTotals(t: UsageTotals | null): WireUsageTotals | null {
  if (!t) return null;
  return {
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cached_tokens: t.cachedTokens,
    cost_usd: t.costUsd,
    attempts: t.attempts,
    attempts_without_usage: t.attemptsWithoutUsage,
    agent_versions: t.agentVersions,
    models: t.models,
  };
}

/** Back from the wire (bundles written before usage rollups existed have none). */
export function usageTotalsOf(w: WireUsageTotals | null | undefined): UsageTotals | null {
  if (!w) return null;
  return {
    inputTokens: w.input_tokens ?? null,
    outputTokens: w.output_tokens ?? null,
    cachedTokens: w.cached_tokens ?? null,
    costUsd: w.cost_usd ?? null,
    attempts: w.attempts ?? 0,
    attemptsWithoutUsage: w.attempts_without_usage ?? 0,
    agentVersions: w.agent_versions ?? [],
    models: w.models ?? [],
  };
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

export function wireIdentity(spec: CaseSpec): WireIdentity {
  return { eval_path: spec.identity.evalPath, test_id: spec.identity.testId, target: spec.identity.target };
}

export function wireCounts(d: CaseDecision): WireCounts {
  const c = d.counts;
  return {
    planned: c.planned,
    counted: c.counted,
    passed: c.passed,
    failed: c.failed,
    errored: c.errored,
    timed_out: c.timedOut,
    cancelled: c.cancelled,
    retried: c.retried,
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
    baseline: r.baselineSha ? { sha: r.baselineSha } : null,
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
        }
      : null,
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
