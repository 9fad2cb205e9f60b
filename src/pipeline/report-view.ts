/**
 * A bundle's files → the ReportView the renderers draw. Reads are bounded: a diff is read up to a
 * cap from its head, a log only its tail, so a bundle whose agent printed gigabytes renders in
 * constant memory. Paths come from index.jsonl and the case summaries, which may come from a
 * downloaded artifact: a path that leaves the bundle is refused, never read.
 */
import pLimit from "p-limit";
import { BundleFiles, type FileSeal, SealBroken } from "../bundle/files.js";
import { brokenSeal, readBundle, SEAL_ON_READ_ABOVE } from "../bundle/read.js";
import { compactReport } from "../report/html.js";
import {
  type AttemptEvidence,
  type AttemptTry,
  type CaseView,
  type Excerpt,
  isStablePass,
  needsReview,
  type ReportView,
} from "../report/view.js";
import {
  admissionViewOf,
  attemptUsageOf,
  bool,
  boolOrNull,
  caseExamOf,
  changeOf,
  examOf,
  gapsOf,
  historyOf,
  type Json,
  list,
  num,
  numOr0,
  oneOf,
  policyOf,
  record,
  scorerOf,
  setupFieldOf,
  shardOf,
  targetOf,
  text,
  textOrNull,
  texts,
  usageRollupOf,
  word,
} from "./view-fields.js";

export interface LoadReportOptions {
  /**
   * Which cases get their attempts' evidence (result.json, grading.json, diff, log tail): the
   * cases that are not a stable pass (default; what the PR comment shows), or every case (what
   * report.html and junit.xml show). In a large bundle (compactReport, report/html.ts) a case that
   * needs no review is one line of links in report.html, and its diffs are not read.
   */
  evidence?: "problems" | "all";
  /** Files in the bundle's seal above which it is checked as files are read (bundle/read.ts). */
  sealOnReadAbove?: number;
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
async function evidenceOf(
  parent: BundleFiles,
  run: AttemptTry,
  passingCase: boolean,
  /** The case is one line of links in a compact report.html (compactReport, report/html.ts). */
  oneLine: boolean,
): Promise<AttemptEvidence> {
  const reader = parent.child();
  // A passing one-line case: only what junit.xml names of it, its scorers (every attempt passed, so
  // each was graded into grading.json). Its result.json and diff are not read.
  const light = passingCase && oneLine;
  const result = light ? {} : record(await reader.json<Json>(`${run.dir}/result.json`));
  const files = record(result.files);
  const gradingName = light ? "grading.json" : text(files.grading);
  const gradingJson = gradingName ? await reader.json<unknown>(`${run.dir}/${gradingName}`) : null;
  // Not graded, or grading.json missing or damaged: null (the renderers say so), not "no scorers".
  const grading = gradingJson && typeof gradingJson === "object" ? record(gradingJson) : null;
  let diff: Excerpt | null = null;
  const diffName = text(files.diff);
  if (diffName) {
    const rel = `${run.dir}/${diffName}`;
    if (!passingCase) {
      const roomy = reader.spent.evidenceBytes < EVIDENCE_BUDGET;
      diff = await reader.head(rel, roomy ? DIFF_READ_BYTES : SMALL_DIFF_READ_BYTES);
      reader.spent.evidenceBytes += diff?.text.length ?? 0;
    } else if (!oneLine && reader.spent.passingDiffBytes < PASSING_DIFF_BUDGET) {
      diff = await reader.head(rel, PASSING_DIFF_READ_BYTES);
      reader.spent.passingDiffBytes += diff?.text.length ?? 0;
    }
  }
  // An older bundle names no agent_log: it always had one. A null one means the agent never ran.
  const logName = files.agent_log === undefined ? "agent.log" : text(files.agent_log);
  let logTail: Excerpt | null = null;
  if (!passingCase && logName) {
    const roomy = reader.spent.evidenceBytes < EVIDENCE_BUDGET;
    logTail = await reader.tail(
      `${run.dir}/${logName}`,
      roomy ? LOG_TAIL_READ_BYTES : SMALL_LOG_TAIL_READ_BYTES,
    );
    reader.spent.evidenceBytes += logTail?.text.length ?? 0;
  }
  const scorers = grading ? list(grading.scorers).map((sc) => scorerOf(sc, run.dir)) : null;
  if (!passingCase) {
    // A failed scorer's own output says what it found: its last lines, read in a small cap.
    for (const s of scorers ?? []) {
      if (!s.log || (s.state === "complete" && s.passed !== false)) continue;
      s.logTail = await reader.tail(s.log, SMALL_LOG_TAIL_READ_BYTES);
      reader.spent.evidenceBytes += s.logTail?.text.length ?? 0;
    }
  }
  const agent = result.agent && typeof result.agent === "object" ? record(result.agent) : null;
  const diffInfo = result.diff && typeof result.diff === "object" ? record(result.diff) : null;
  parent.problems.push(...reader.problems);
  return {
    usage: attemptUsageOf(result.usage),
    tampered: texts(result.tampered),
    agent: agent
      ? {
          exitCode: num(agent.exit_code),
          signal: textOrNull(agent.signal),
          timedOut: bool(agent.timed_out),
          durationMs: numOr0(agent.duration_ms),
          error: textOrNull(agent.error),
        }
      : null,
    diffStat: diffInfo
      ? {
          files: list(diffInfo.files).map((f) => text(record(f).path)),
          additions: numOr0(diffInfo.additions),
          deletions: numOr0(diffInfo.deletions),
        }
      : null,
    scorers,
    diff,
    logTail,
    problems: reader.problems,
  };
}

const STATUSES: readonly AttemptTry["status"][] = ["passed", "failed", "timeout", "error"];

function runsOf(row: Json, summary: Json | null): AttemptTry[] {
  const resultDir = text(row.result_dir);
  if (summary) {
    return list(summary.runs).map((x) => {
      const r = record(x);
      return {
        attempt: numOr0(r.attempt),
        retry: numOr0(r.retry),
        counted: bool(r.counted),
        status: oneOf(r.status, STATUSES, "error"),
        failureStage: word(r.failure_stage),
        failureKind: word(r.failure_kind),
        message: textOrNull(r.message),
        score: num(r.score),
        passRate: num(r.pass_rate),
        durationMs: num(r.duration_ms),
        dir: `${resultDir}/${text(r.dir)}`,
        evidence: null,
      };
    });
  }
  // Without the case summary, the index row still knows each try's status and folder.
  return list(row.runs).map((x) => {
    const r = record(x);
    return {
      attempt: numOr0(r.attempt),
      retry: numOr0(r.retry),
      counted: false,
      status: oneOf(r.status, STATUSES, "error"),
      failureStage: null,
      failureKind: word(r.failure_kind),
      message: null,
      score: null,
      passRate: null,
      durationMs: null,
      dir: text(r.dir),
      evidence: null,
    };
  });
}

function caseOf(row: Json, summary: Json | null): CaseView {
  const a = record(row.attempts);
  const [low, high, ...rest] = list(record(summary?.stats).wilson_95).map(num);
  const policy = summary?.policy && typeof summary.policy === "object" ? record(summary.policy) : null;
  return {
    evalPath: text(row.eval_path),
    rootEvalPath: text(row.root_eval_path) || text(row.eval_path),
    testId: text(row.test_id),
    target: text(row.target),
    suite: text(row.suite),
    provider: text(row.provider),
    model: textOrNull(row.model),
    tags: texts(row.tags),
    verdict: oneOf(row.verdict, ["pass", "fail", "error"] as const, "error"),
    classification: text(row.classification),
    flaky: bool(row.flaky),
    reason: text(row.reason),
    evidence: oneOf(row.evidence, ["decided", "inconclusive"] as const, "decided"),
    settleAttempts: num(row.settle_attempts),
    attempts: {
      planned: numOr0(a.planned),
      counted: numOr0(a.counted),
      passed: numOr0(a.passed),
      failed: numOr0(a.failed),
      errored: numOr0(a.errored),
      timedOut: numOr0(a.timed_out),
      cancelled: numOr0(a.cancelled),
      retried: numOr0(a.retried),
    },
    successRate: num(row.attempt_success_rate),
    wilson95: low != null && high != null && rest.length === 0 ? [low, high] : null,
    meanScore: num(row.mean_score),
    meanPassRate: num(row.mean_pass_rate),
    policy: policyOf(policy),
    change: changeOf(row.change),
    history: historyOf(summary?.history),
    admission: admissionViewOf(row.admission),
    usage: usageRollupOf(row.usage),
    resultDir: text(row.result_dir),
    runs: runsOf(row, summary),
    exam: caseExamOf(row.exam),
    ...setupFieldOf(summary?.setup),
  };
}

function viewOf(summary: Json, cases: CaseView[], problems: string[]): ReportView {
  const run = record(summary.run);
  const f = record(run.filters);
  const shard = shardOf(run.shard);
  const git = summary.git && typeof summary.git === "object" ? record(summary.git) : null;
  const gate = record(summary.gate);
  const counts = record(summary.counts);
  const cmp =
    summary.comparison && typeof summary.comparison === "object" ? record(summary.comparison) : null;
  return {
    run: {
      id: text(run.id),
      startedAt: text(run.started_at),
      finishedAt: text(run.finished_at),
      durationMs: numOr0(run.duration_ms),
      evalgateVersion: text(run.evalgate_version),
      shard,
      mergedFrom: Array.isArray(run.merged_from) ? texts(run.merged_from) : null,
      filters: { targets: texts(f.targets), tests: texts(f.tests), tags: texts(f.tags) },
      interrupted: summary.status === "interrupted" ? texts(gate.reasons)[0] || "interrupted" : null,
    },
    git: git
      ? { sha: textOrNull(git.sha), branch: textOrNull(git.branch), dirty: boolOrNull(git.dirty) }
      : null,
    suites: list(summary.evals).map((x) => {
      const e = record(x);
      return {
        evalPath: text(e.eval_path),
        name: text(e.name),
        description: textOrNull(e.description),
        cases: numOr0(e.cases),
        regressions: oneOf(e.regressions, ["fail", "warn", "ignore"] as const, "fail"),
        regressionEvidence: oneOf(e.regression_evidence, ["significant", "any"] as const, "any"),
        regressionAlpha: num(e.regression_alpha) ?? 0.05,
      };
    }),
    gate: {
      // Anything but an explicit pass fails: a damaged bundle never reads as a green gate.
      verdict: gate.verdict === "pass" ? "pass" : "fail",
      reasons: texts(gate.reasons),
      warnings: texts(gate.warnings),
      budgetStops: list(gate.budget_stops).map((x) => {
        const b = record(x);
        return { evalPath: text(b.eval_path), reason: text(b.reason) };
      }),
    },
    counts: {
      cases: numOr0(counts.cases),
      passed: numOr0(counts.passed),
      failed: numOr0(counts.failed),
      errored: numOr0(counts.errored),
      flaky: numOr0(counts.flaky),
      attempts: numOr0(counts.attempts),
      attemptsPassed: numOr0(counts.attempts_passed),
      attemptsFailed: numOr0(counts.attempts_failed),
      attemptsErrored: numOr0(counts.attempts_errored),
    },
    usage: usageRollupOf(summary.usage),
    targets: list(summary.targets).map(targetOf),
    isolation:
      summary.isolation && typeof summary.isolation === "object"
        ? {
            level: textOrNull(record(summary.isolation).level),
            reason: textOrNull(record(summary.isolation).reason),
            ...gapsOf(record(summary.isolation).gaps),
          }
        : null,
    exam: examOf(summary.exam),
    comparison: cmp
      ? {
          baselineRunId: text(cmp.baseline_run_id),
          baselineRuns: Math.max(1, numOr0(cmp.baseline_runs)),
          baselineSha: textOrNull(cmp.baseline_git_sha),
          regressed: numOr0(cmp.regressed),
          improved: numOr0(cmp.improved),
          unchanged: numOr0(cmp.unchanged),
          new: numOr0(cmp.new),
          removed: numOr0(cmp.removed),
          significant: numOr0(cmp.significant),
          removedCases: list(cmp.removed_cases).map((x) => {
            const r = record(x);
            return {
              evalPath: text(r.eval_path),
              testId: text(r.test_id),
              target: text(r.target),
              suite: text(r.suite),
              baseVerdict: text(r.base_verdict),
            };
          }),
          targets: Array.isArray(cmp.targets) ? cmp.targets.map(targetOf) : null,
        }
      : null,
    cases,
    problems,
  };
}

/**
 * A bundle's records: its summary.json and, per case, its index row and (when already at hand) its
 * summary.json. Read from disk by {@link loadReportView}, or as a run or a merge has just written
 * them, so that the view a run renders is the view `evalgate report` would read from its bundle.
 */
export interface BundleRecords {
  /** The bundle folder: where the evidence files (result.json, diffs, logs) are read from. */
  dir: string;
  summary: unknown;
  cases: { row: unknown; summary?: unknown }[];
  /** The bundle's seal, when the files read must be checked against it as they are read. */
  seal?: FileSeal;
}

/**
 * The ReportView of a bundle's records. A case summary not given is read from the bundle; a missing
 * or damaged file is listed in `problems`, and a field of the wrong type is read as empty (see
 * view-fields.ts). Attempts' evidence is read from their files, in bounded excerpts.
 */
export async function viewOfRecords(
  records: BundleRecords,
  options: LoadReportOptions = {},
): Promise<ReportView> {
  const reader = new BundleFiles(records.dir, undefined, records.seal);
  const limit = pLimit(16);
  const attempts = records.cases.reduce((n, x) => n + list(record(x.row).runs).length, 0);
  const compact = compactReport(records.cases.length, attempts);
  const cases = await Promise.all(
    records.cases.map((x) =>
      limit(async () => {
        const row = record(x.row);
        const summaryPath = text(row.summary_path) || `${text(row.result_dir)}/summary.json`;
        const summary = x.summary !== undefined ? x.summary : await reader.json<Json>(summaryPath);
        const c = caseOf(row, summary && typeof summary === "object" ? record(summary) : null);
        const stable = isStablePass(c);
        if (!stable || options.evidence === "all") {
          const oneLine = compact && !needsReview(c);
          for (const run of c.runs) run.evidence = await evidenceOf(reader, run, stable, oneLine);
        }
        return c;
      }),
    ),
  );
  return viewOf(record(records.summary), cases, reader.problems.sort());
}

/**
 * Reads a bundle into a ReportView. Throws BundleError when the folder is not a bundle (no
 * summary.json or index.jsonl) or a file it reads does not match its seal; below that, see
 * {@link viewOfRecords}.
 */
export async function loadReportView(
  bundleDir: string,
  options: LoadReportOptions = {},
): Promise<ReportView> {
  const sealOnReadAbove = options.sealOnReadAbove ?? SEAL_ON_READ_ABOVE;
  const b = await readBundle(bundleDir, { check: "lenient", sealOnReadAbove });
  const cases = b.rows.map((row) => ({ row }));
  return viewOfRecords({ dir: b.dir, summary: b.summary, cases, seal: b.fileSeal }, options).catch((e) => {
    throw e instanceof SealBroken ? brokenSeal(bundleDir, e.message) : e;
  });
}
