/**
 * A bundle's files → the ReportView the renderers draw. Reads are bounded: a diff is read up to a
 * cap from its head, a log only its tail, so a bundle whose agent printed gigabytes renders in
 * constant memory. Paths come from index.jsonl and the case summaries, which may come from a
 * downloaded artifact: a path that leaves the bundle is refused, never read.
 */
import pLimit from "p-limit";
import {
  type AttemptEvidence,
  type AttemptUsage,
  type CaseView,
  type ChangeView,
  type Excerpt,
  type FailingTest,
  isStablePass,
  type ReportView,
  type RunView,
  type ScorerView,
  type TargetNumbers,
  type UsageRollup,
} from "../report/view.js";
import { BundleFiles } from "./files.js";
import { readBundle } from "./read.js";
import type {
  WireAttempt,
  WireCaseSummary,
  WireChange,
  WireGrading,
  WireIndexRow,
  WireSummary,
  WireTargetRollup,
} from "./wire.js";

export interface LoadReportOptions {
  /**
   * Which cases get their attempts' evidence (result.json, grading.json, diff, log tail): the
   * cases that are not a stable pass (default; what the PR comment shows), or every case (what
   * report.html shows).
   */
  evidence?: "problems" | "all";
}

/** Bytes read from the head of a diff of a case that is not a stable pass. */
export const DIFF_READ_BYTES = 64 * 1024;
/** Bytes read from the head of a diff of a passing case (report.html only). */
const PASSING_DIFF_READ_BYTES = 16 * 1024;
/** All diffs of passing cases together, beyond which report.html links to the files instead. */
const PASSING_DIFF_BUDGET = 8 * 1024 * 1024;
/** Bytes read from the end of an agent log. */
export const LOG_TAIL_READ_BYTES = 16 * 1024;
/**
 * Diffs and logs of the other cases together, beyond which each is read with the small caps below
 * (what the comment shows still fits in them): thousands of failing cases stay in bounded memory.
 */
const EVIDENCE_BUDGET = 48 * 1024 * 1024;
const SMALL_DIFF_READ_BYTES = 8 * 1024;
const SMALL_LOG_TAIL_READ_BYTES = 4 * 1024;
const FAILING_TESTS_KEPT = 100;

const num = (x: unknown): number | null => (typeof x === "number" && Number.isFinite(x) ? x : null);

/** A usage rollup read defensively: the field is new, and older bundles do not have it. */
export function usageRollupOf(x: unknown): UsageRollup | null {
  if (!x || typeof x !== "object") return null;
  const u = x as Record<string, unknown>;
  return {
    inputTokens: num(u.input_tokens),
    outputTokens: num(u.output_tokens),
    cachedTokens: num(u.cached_tokens),
    costUsd: num(u.cost_usd),
    attempts: num(u.attempts),
    attemptsWithoutUsage: num(u.attempts_without_usage),
  };
}

function attemptUsageOf(x: unknown): AttemptUsage | null {
  if (!x || typeof x !== "object") return null;
  const u = x as Record<string, unknown>;
  return {
    inputTokens: num(u.input_tokens),
    outputTokens: num(u.output_tokens),
    cachedTokens: num(u.cached_tokens),
    costUsd: num(u.cost_usd),
  };
}

function targetOf(t: WireTargetRollup): TargetNumbers {
  return {
    name: t.name,
    provider: t.provider,
    model: t.model ?? null,
    cases: t.cases,
    passed: t.passed,
    failed: t.failed,
    errored: t.errored,
    flaky: t.flaky,
    attempts: t.attempts,
    attemptsPassed: t.attempts_passed,
    attemptSuccessRate: t.attempt_success_rate,
    usage: usageRollupOf((t as { usage?: unknown }).usage),
  };
}

function changeOf(c: WireChange | null | undefined): ChangeView | null {
  return c
    ? {
        change: c.change,
        baseVerdict: c.base_verdict,
        baseAttempts: c.base_attempts,
        successRateDelta: c.success_rate_delta,
        pValue: c.p_value,
        significant: c.significant,
      }
    : null;
}

type WireScorer = WireGrading["scorers"][number];
type Listed = { test?: unknown; outcome?: unknown; message?: unknown };

function listedTests(x: unknown): Listed[] {
  return Array.isArray(x) ? (x.filter((t) => t && typeof t === "object") as Listed[]) : [];
}

function failingTestOf(t: Listed): FailingTest {
  return {
    name: String(t.test ?? "(unnamed)"),
    outcome: String(t.outcome ?? "failed"),
    message: typeof t.message === "string" ? t.message : null,
  };
}

/** The tests that failed a `tests` scorer: the listed ones that did not pass, else every failing one. */
function failingTestsOf(s: WireScorer): { tests: FailingTest[]; total: number } {
  if (s.type !== "tests" || s.passed !== false || !s.details) return { tests: [], total: 0 };
  const d = s.details as Record<string, unknown>;
  const f2p = listedTests(d.fail_to_pass);
  const p2p = listedTests(d.pass_to_pass);
  if (f2p.length + p2p.length > 0) {
    const bad = [
      ...f2p.filter((t) => t.outcome !== "passed"),
      ...p2p.filter((t) => t.outcome !== "passed" && t.outcome !== "skipped"),
    ];
    return { tests: bad.slice(0, FAILING_TESTS_KEPT).map(failingTestOf), total: bad.length };
  }
  const failing = listedTests(d.failing);
  const counts = (d.counts ?? {}) as Record<string, unknown>;
  const total = (num(counts.failed) ?? 0) + (num(counts.errored) ?? 0);
  return {
    tests: failing.slice(0, FAILING_TESTS_KEPT).map(failingTestOf),
    total: Math.max(total, failing.length),
  };
}

function scorerOf(s: WireScorer, runDir: string): ScorerView {
  const failing = failingTestsOf(s);
  return {
    name: s.name,
    type: s.type,
    weight: s.weight,
    required: s.required,
    state: s.state === "error" ? "error" : "complete",
    score: s.score,
    passed: s.passed,
    reason: s.reason ?? "",
    timedOut: Boolean(s.timed_out),
    durationMs: num(s.duration_ms),
    failingTests: failing.tests,
    failingTestsTotal: failing.total,
    log: s.log ? `${runDir}/${s.log}` : null,
  };
}

async function evidenceOf(parent: BundleFiles, run: RunView, passingCase: boolean): Promise<AttemptEvidence> {
  const reader = parent.child();
  const result = await reader.json<WireAttempt>(`${run.dir}/result.json`);
  const files = (result?.files ?? {}) as Record<string, unknown>;
  const grading = files.grading ? await reader.json<WireGrading>(`${run.dir}/${files.grading}`) : null;
  let diff: Excerpt | null = null;
  if (files.diff) {
    const rel = `${run.dir}/${files.diff}`;
    if (!passingCase) {
      const roomy = reader.spent.evidenceBytes < EVIDENCE_BUDGET;
      diff = await reader.head(rel, roomy ? DIFF_READ_BYTES : SMALL_DIFF_READ_BYTES);
      reader.spent.evidenceBytes += diff?.text.length ?? 0;
    } else if (reader.spent.passingDiffBytes < PASSING_DIFF_BUDGET) {
      diff = await reader.head(rel, PASSING_DIFF_READ_BYTES);
      reader.spent.passingDiffBytes += diff?.text.length ?? 0;
    }
  }
  const logName = typeof files.agent_log === "string" ? files.agent_log : "agent.log";
  let logTail: Excerpt | null = null;
  if (!passingCase) {
    const roomy = reader.spent.evidenceBytes < EVIDENCE_BUDGET;
    logTail = await reader.tail(
      `${run.dir}/${logName}`,
      roomy ? LOG_TAIL_READ_BYTES : SMALL_LOG_TAIL_READ_BYTES,
    );
    reader.spent.evidenceBytes += logTail?.text.length ?? 0;
  }
  const agent = result?.agent;
  parent.problems.push(...reader.problems);
  return {
    usage: attemptUsageOf(result?.usage),
    tampered: Array.isArray(result?.tampered) ? result.tampered.map(String) : [],
    agent: agent
      ? {
          exitCode: agent.exit_code,
          signal: agent.signal,
          timedOut: agent.timed_out,
          durationMs: agent.duration_ms,
          error: agent.error,
        }
      : null,
    diffStat: result?.diff
      ? {
          files: result.diff.files.map((f) => f.path),
          additions: result.diff.additions,
          deletions: result.diff.deletions,
        }
      : null,
    scorers: grading ? grading.scorers.map((s) => scorerOf(s, run.dir)) : null,
    diff,
    logTail,
    problems: reader.problems,
  };
}

function runsOf(row: WireIndexRow, summary: WireCaseSummary | null): RunView[] {
  if (summary) {
    return summary.runs.map((r) => ({
      attempt: r.attempt,
      retry: r.retry,
      counted: r.counted,
      status: r.status,
      failureStage: r.failure_stage,
      failureKind: r.failure_kind,
      message: r.message,
      score: r.score,
      passRate: r.pass_rate,
      durationMs: r.duration_ms,
      dir: `${row.result_dir}/${r.dir}`,
      evidence: null,
    }));
  }
  // Without the case summary, the index row still knows each try's status and folder.
  return row.runs.map((r) => ({
    attempt: r.attempt,
    retry: r.retry,
    counted: false,
    status: r.status as RunView["status"],
    failureStage: null,
    failureKind: r.failure_kind,
    message: null,
    score: null,
    passRate: null,
    durationMs: null,
    dir: r.dir,
    evidence: null,
  }));
}

function caseOf(row: WireIndexRow, summary: WireCaseSummary | null): CaseView {
  return {
    evalPath: row.eval_path,
    rootEvalPath: row.root_eval_path ?? row.eval_path,
    testId: row.test_id,
    target: row.target,
    suite: row.suite,
    provider: row.provider,
    model: row.model ?? null,
    tags: row.tags ?? [],
    verdict: row.verdict,
    classification: row.classification,
    flaky: row.flaky,
    reason: row.reason,
    attempts: {
      planned: row.attempts.planned,
      counted: row.attempts.counted,
      passed: row.attempts.passed,
      failed: row.attempts.failed,
      errored: row.attempts.errored,
      timedOut: row.attempts.timed_out,
      cancelled: row.attempts.cancelled,
      retried: row.attempts.retried,
    },
    successRate: row.attempt_success_rate,
    wilson95: summary?.stats?.wilson_95 ?? null,
    meanScore: row.mean_score,
    meanPassRate: row.mean_pass_rate,
    policy: summary?.policy
      ? {
          name: summary.policy.name,
          threshold: summary.policy.threshold,
          onError: summary.policy.on_error,
        }
      : null,
    change: changeOf(row.change),
    usage: usageRollupOf((row as { usage?: unknown }).usage),
    resultDir: row.result_dir,
    runs: runsOf(row, summary),
  };
}

function viewOf(summary: WireSummary, cases: CaseView[], problems: string[]): ReportView {
  const cmp = summary.comparison;
  const f = summary.run.filters;
  const baseTargets = (cmp as { targets?: unknown } | null)?.targets;
  return {
    run: {
      id: summary.run.id,
      startedAt: summary.run.started_at,
      finishedAt: summary.run.finished_at,
      durationMs: summary.run.duration_ms,
      evalgateVersion: summary.run.evalgate_version,
      shard: summary.run.shard ?? null,
      mergedFrom: summary.run.merged_from ?? null,
      filters: { targets: f?.targets ?? [], tests: f?.tests ?? [], tags: f?.tags ?? [] },
    },
    git: summary.git,
    suites: summary.evals.map((e) => ({
      evalPath: e.eval_path,
      name: e.name,
      description: e.description,
      cases: e.cases,
      regressions: e.regressions ?? "fail",
    })),
    gate: {
      verdict: summary.gate.verdict,
      reasons: summary.gate.reasons,
      warnings: summary.gate.warnings ?? [],
      budgetStops: (summary.gate.budget_stops ?? []).map((s) => ({
        evalPath: s.eval_path,
        reason: s.reason,
      })),
    },
    counts: {
      cases: summary.counts.cases,
      passed: summary.counts.passed,
      failed: summary.counts.failed,
      errored: summary.counts.errored,
      flaky: summary.counts.flaky,
      attempts: summary.counts.attempts,
      attemptsPassed: summary.counts.attempts_passed,
      attemptsFailed: summary.counts.attempts_failed,
      attemptsErrored: summary.counts.attempts_errored,
    },
    usage: usageRollupOf((summary as { usage?: unknown }).usage),
    targets: summary.targets.map(targetOf),
    comparison: cmp
      ? {
          baselineRunId: cmp.baseline_run_id,
          baselineSha: cmp.baseline_git_sha,
          regressed: cmp.regressed,
          improved: cmp.improved,
          unchanged: cmp.unchanged,
          new: cmp.new,
          removed: cmp.removed,
          significant: cmp.significant,
          removedCases: (cmp.removed_cases ?? []).map((r) => ({
            evalPath: r.eval_path,
            testId: r.test_id,
            target: r.target,
            suite: r.suite,
            baseVerdict: r.base_verdict,
          })),
          targets: Array.isArray(baseTargets) ? (baseTargets as WireTargetRollup[]).map(targetOf) : null,
        }
      : null,
    cases,
    problems,
  };
}

/**
 * Reads a bundle into a ReportView. Throws BundleError when the folder is not a bundle (no
 * summary.json or index.jsonl); a missing or damaged file below that is listed in `problems`.
 */
export async function loadReportView(
  bundleDir: string,
  options: LoadReportOptions = {},
): Promise<ReportView> {
  const bundle = await readBundle(bundleDir);
  const reader = new BundleFiles(bundle.dir);
  const limit = pLimit(16);
  const cases = await Promise.all(
    bundle.rows.map((row) =>
      limit(async () => {
        const summaryPath = row.summary_path ?? `${row.result_dir}/summary.json`;
        const c = caseOf(row, await reader.json<WireCaseSummary>(summaryPath));
        const stable = isStablePass(c);
        if (!stable || options.evidence === "all") {
          for (const run of c.runs) run.evidence = await evidenceOf(reader, run, stable);
        }
        return c;
      }),
    ),
  );
  return viewOf(bundle.summary, cases, reader.problems.sort());
}
