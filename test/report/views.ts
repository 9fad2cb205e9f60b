/** Synthetic report views for renderer tests: deterministic, built like loadReportView builds them. */
import type {
  AttemptEvidence,
  AttemptTry,
  CaseView,
  ComparisonView,
  ReportView,
  ScorerView,
  TargetNumbers,
  UsageRollup,
} from "../../src/report/view.js";

export function usage(
  inputTokens: number,
  outputTokens: number,
  costUsd: number | null,
  attempts = 1,
): UsageRollup {
  return { inputTokens, outputTokens, cachedTokens: 0, costUsd, attempts, attemptsWithoutUsage: 0 };
}

export function scorer(over: Partial<ScorerView> & { name: string }): ScorerView {
  return {
    type: "command",
    weight: 1,
    required: false,
    state: "complete",
    score: 1,
    passed: true,
    reason: "exit 0",
    timedOut: false,
    durationMs: 1200,
    failingTests: [],
    failingTestsTotal: 0,
    log: null,
    ...over,
  };
}

export function evidence(over: Partial<AttemptEvidence> = {}): AttemptEvidence {
  return {
    usage: null,
    tampered: [],
    agent: { exitCode: 0, signal: null, timedOut: false, durationMs: 30_000, error: null },
    diffStat: null,
    scorers: null,
    diff: null,
    logTail: null,
    problems: [],
    ...over,
  };
}

export function diffOf(dir: string, file: string, body: string): Pick<AttemptEvidence, "diff" | "diffStat"> {
  const text = `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1,1 +1,1 @@\n${body}`;
  const lines = body.split("\n");
  return {
    diff: { text, totalBytes: text.length, truncated: false, path: `${dir}/diff.patch` },
    diffStat: {
      files: [file],
      additions: lines.filter((l) => l.startsWith("+")).length,
      deletions: lines.filter((l) => l.startsWith("-")).length,
    },
  };
}

export function logOf(dir: string, text: string): Pick<AttemptEvidence, "logTail"> {
  return { logTail: { text, totalBytes: text.length, truncated: false, path: `${dir}/agent.log` } };
}

export function run(
  caseDir: string,
  attempt: number,
  status: AttemptTry["status"],
  over: Partial<AttemptTry> = {},
): AttemptTry {
  return {
    attempt,
    retry: 0,
    counted: status === "passed" || status === "failed",
    status,
    failureStage: status === "passed" ? null : status === "failed" ? "scorer" : "agent",
    failureKind:
      status === "passed"
        ? null
        : status === "failed"
          ? "quality"
          : status === "timeout"
            ? "agent_timeout"
            : "agent_exit",
    message: null,
    score: status === "passed" ? 1 : status === "failed" ? 0 : null,
    passRate: status === "passed" ? 1 : status === "failed" ? 0 : null,
    durationMs: 40_000 + attempt * 1000,
    dir: `${caseDir}/run-${attempt}`,
    evidence: null,
    ...over,
  };
}

export interface CaseInput extends Partial<CaseView> {
  testId: string;
  target: string;
  runs: AttemptTry[];
}

export function kase(input: CaseInput): CaseView {
  const finals = input.runs.filter((r) => r.counted || r.status === "error" || r.status === "timeout");
  const passed = input.runs.filter((r) => r.counted && r.status === "passed").length;
  const counted = input.runs.filter((r) => r.counted).length;
  const errored = finals.filter((r) => r.status === "error" || r.status === "timeout").length;
  const verdict = input.verdict ?? (errored > 0 ? "error" : passed === counted ? "pass" : "fail");
  const flaky = input.flaky ?? (passed > 0 && passed < counted);
  return {
    evalPath: "evals/checkout.eval.yaml",
    rootEvalPath: "evals/checkout.eval.yaml",
    suite: "checkout-bugs",
    provider: "command",
    model: null,
    tags: [],
    verdict,
    classification: flaky
      ? "flaky"
      : verdict === "pass"
        ? "stable_pass"
        : verdict === "error"
          ? "infrastructure_failure"
          : "stable_fail",
    flaky,
    reason:
      verdict === "error"
        ? `${errored} of ${input.runs.length} attempts errored (agent_exit); errors are not counted as failures`
        : `${passed} of ${counted} attempts passed${verdict === "fail" ? ", policy needs all" : ""}`,
    attempts: {
      planned: input.runs.length,
      counted,
      passed,
      failed: counted - passed,
      errored,
      timedOut: finals.filter((r) => r.status === "timeout").length,
      cancelled: 0,
      retried: 0,
    },
    successRate: counted ? passed / counted : null,
    wilson95: null,
    meanScore: null,
    meanPassRate: null,
    policy: { name: "all_attempts_successful", threshold: null, onError: "fail" },
    change: null,
    usage: null,
    resultDir: `${input.testId}--${input.target}`,
    ...input,
  };
}

/** Target rollups from cases, as buildSummary makes them. */
export function targetsOf(cases: readonly CaseView[], withUsage = false): TargetNumbers[] {
  const out = new Map<string, TargetNumbers>();
  for (const c of cases) {
    let t = out.get(c.target);
    if (!t) {
      t = {
        name: c.target,
        provider: c.provider,
        model: c.model,
        cases: 0,
        passed: 0,
        failed: 0,
        errored: 0,
        flaky: 0,
        attempts: 0,
        attemptsPassed: 0,
        attemptSuccessRate: null,
        usage: withUsage ? usage(0, 0, 0, 0) : null,
      };
      out.set(c.target, t);
    }
    t.cases++;
    if (c.verdict === "pass") t.passed++;
    if (c.verdict === "fail") t.failed++;
    if (c.verdict === "error") t.errored++;
    if (c.flaky) t.flaky++;
    t.attempts += c.attempts.counted;
    t.attemptsPassed += c.attempts.passed;
    if (t.usage && c.usage) {
      t.usage.inputTokens! += c.usage.inputTokens ?? 0;
      t.usage.outputTokens! += c.usage.outputTokens ?? 0;
      t.usage.costUsd! += c.usage.costUsd ?? 0;
      t.usage.attempts! += c.usage.attempts ?? 0;
    }
  }
  for (const t of out.values()) t.attemptSuccessRate = t.attempts ? t.attemptsPassed / t.attempts : null;
  return [...out.values()];
}

export interface ViewInput {
  cases: CaseView[];
  gate?: Partial<ReportView["gate"]>;
  comparison?: ComparisonView | null;
  withUsage?: boolean;
  suites?: ReportView["suites"];
}

export function view(input: ViewInput): ReportView {
  const cases = input.cases;
  const runs = cases.flatMap((c) => c.runs);
  const targets = targetsOf(cases, input.withUsage);
  const total = (k: "inputTokens" | "outputTokens" | "costUsd") =>
    targets.reduce((a, t) => a + (t.usage?.[k] ?? 0), 0);
  return {
    run: {
      id: "20261122-091402Z-a1b2c3",
      startedAt: "2026-11-22T09:08:02.000Z",
      finishedAt: "2026-11-22T09:14:14.000Z",
      durationMs: 372_000,
      evalgateVersion: "1.0.0",
      shard: null,
      mergedFrom: null,
      filters: { targets: [], tests: [], tags: [] },
      interrupted: null,
    },
    git: { sha: "a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0", branch: "fix/cart", dirty: false },
    suites: input.suites ?? [
      {
        evalPath: "evals/checkout.eval.yaml",
        name: "checkout-bugs",
        description: null,
        cases: cases.length,
        regressions: "fail",
      },
    ],
    gate: {
      verdict: "pass",
      reasons: [],
      warnings: [],
      budgetStops: [],
      ...input.gate,
    },
    counts: {
      cases: cases.length,
      passed: cases.filter((c) => c.verdict === "pass").length,
      failed: cases.filter((c) => c.verdict === "fail").length,
      errored: cases.filter((c) => c.verdict === "error").length,
      flaky: cases.filter((c) => c.flaky).length,
      attempts: runs.length,
      attemptsPassed: runs.filter((r) => r.status === "passed").length,
      attemptsFailed: runs.filter((r) => r.status === "failed").length,
      attemptsErrored: runs.filter((r) => r.status === "error" || r.status === "timeout").length,
    },
    usage: input.withUsage
      ? {
          inputTokens: total("inputTokens"),
          outputTokens: total("outputTokens"),
          cachedTokens: 0,
          costUsd: total("costUsd"),
          attempts: runs.length,
          attemptsWithoutUsage: 0,
        }
      : null,
    targets,
    comparison: input.comparison ?? null,
    cases,
    problems: [],
  };
}
