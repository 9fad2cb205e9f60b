/**
 * The report view: everything the renderers (PR comment, job summary, report.html, junit.xml) show,
 * as one plain data object. `bundle/report-view.ts` builds it from a bundle's files; the renderers
 * are pure functions of it, so they are tested with synthetic views and never touch the file system.
 */

import type { Verdict } from "../gate/case.js";
import type { ChangeKind } from "../gate/compare.js";

export type { ChangeKind, Verdict };

/** Tokens and cost added up over attempts. Unknown numbers are null, never 0. */
export interface UsageRollup {
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  costUsd: number | null;
  /** Attempts counted in. */
  attempts: number | null;
  /** Attempts whose agent reported no usage: the totals are a lower bound when this is above 0. */
  attemptsWithoutUsage: number | null;
  /** The agent CLI versions and models the attempts reported (empty in older bundles). */
  agentVersions?: string[];
  models?: string[];
}

/** One attempt's usage, as its provider reported it. */
export interface AttemptUsage {
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  costUsd: number | null;
}

export interface TargetNumbers {
  name: string;
  provider: string;
  model: string | null;
  cases: number;
  passed: number;
  failed: number;
  errored: number;
  flaky: number;
  attempts: number;
  attemptsPassed: number;
  attemptSuccessRate: number | null;
  usage: UsageRollup | null;
}

export interface SuiteView {
  evalPath: string;
  name: string;
  description: string | null;
  cases: number;
  regressions: "fail" | "warn" | "ignore";
  /** gate.regressions.evidence (older bundles: any, every flip counted). */
  regressionEvidence?: "significant" | "any";
  regressionAlpha?: number;
}

export interface ComparisonView {
  baselineRunId: string;
  /** Base runs pooled (the newest is baselineRunId); 1 in older bundles. */
  baselineRuns?: number;
  baselineSha: string | null;
  regressed: number;
  improved: number;
  unchanged: number;
  new: number;
  removed: number;
  significant: number;
  removedCases: { evalPath: string; testId: string; target: string; suite: string; baseVerdict: string }[];
  /** The baseline's per-target rollups; null when the baseline bundle predates them. */
  targets: TargetNumbers[] | null;
}

export interface ChangeView {
  change: ChangeKind;
  baseVerdict: string | null;
  baseAttempts: { counted: number; passed: number } | null;
  successRateDelta: number | null;
  pValue: number | null;
  significant: boolean;
  /** The baseline's case was flaky (null: not known). */
  baseFlaky?: boolean | null;
  /** Base runs pooled into baseAttempts (1 in older bundles). */
  baseRuns?: number;
  /** No base run had this run's history key: the newest was compared alone. */
  keyChanged?: boolean;
}

/** Whether a case's verdict gates: admitted by its history, reported without gating, or unproven. */
export interface AdmissionView {
  state: "admitted" | "reported" | "unproven";
  runs: number;
  rate: number | null;
  demoted: boolean;
}

/** One base run of a case, as its history lists it. */
export interface HistoryPoint {
  runId: string;
  gitSha: string | null;
  startedAt: string;
  verdict: string;
  counted: number;
  passed: number;
}

export interface AttemptCounts {
  planned: number;
  counted: number;
  passed: number;
  failed: number;
  errored: number;
  timedOut: number;
  cancelled: number;
  retried: number;
}

/** A failing test named by a `tests` scorer. */
export interface FailingTest {
  name: string;
  outcome: string;
  message: string | null;
}

export interface ScorerView {
  name: string;
  type: string;
  weight: number;
  required: boolean;
  state: "complete" | "error";
  score: number | null;
  passed: boolean | null;
  reason: string;
  timedOut: boolean;
  durationMs: number | null;
  /** For `tests` scorers: the tests that decided the failure (listed ones, else every failing one). */
  failingTests: FailingTest[];
  /** How many tests failed in all (failingTests may hold fewer). */
  failingTestsTotal: number;
  /** Bundle-relative path of the scorer's log. */
  log: string | null;
  /** The end of a failed or errored scorer's log (loaded for cases that are not a stable pass). */
  logTail?: Excerpt | null;
}

/** A bounded piece of a text file: the head of a diff or the tail of a log. */
export interface Excerpt {
  text: string;
  /** Size of the whole file in bytes. */
  totalBytes: number;
  /** Whether `text` is only part of the file. */
  truncated: boolean;
  /** Bundle-relative path of the file. */
  path: string;
}

/** What the attempt's files say beyond its summary line (loaded for cases that are not a stable pass). */
export interface AttemptEvidence {
  usage: AttemptUsage | null;
  /** Protected files the agent changed (restored before scoring). */
  tampered: string[];
  agent: {
    exitCode: number | null;
    signal: string | null;
    timedOut: boolean;
    durationMs: number;
    error: string | null;
  } | null;
  diffStat: { files: string[]; additions: number; deletions: number } | null;
  /** null when the attempt was not graded (or grading.json is missing). */
  scorers: ScorerView[] | null;
  diff: Excerpt | null;
  logTail: Excerpt | null;
  /** Files that should be there and could not be read. */
  problems: string[];
}

/** One try of an attempt: the first, or a retry of an attempt that errored. */
export interface AttemptTry {
  attempt: number;
  retry: number;
  /** Whether the verdict counts this try (the last try of its attempt, passed or failed). */
  counted: boolean;
  status: "passed" | "failed" | "timeout" | "error";
  failureStage: string | null;
  failureKind: string | null;
  message: string | null;
  score: number | null;
  passRate: number | null;
  durationMs: number | null;
  /** Bundle-relative folder of the try. */
  dir: string;
  evidence: AttemptEvidence | null;
}

/**
 * How a case stands to the exam read from another commit (docs/exam.md): proposed (new in the pull
 * request, not gating), changed (judged by the exam's definition; `changes` says what the PR
 * changes), removed (the PR removes it; it ran as the exam has it).
 */
export interface CaseExamView {
  status: "proposed" | "changed" | "removed";
  changes: string[];
}

/** Where the exam was read from and what the pull request changes in it (summary.json `exam`). */
export interface ExamView {
  sha: string;
  ref: string;
  files: { evalPath: string; change: "added" | "removed" | "changed"; changes: string[] }[];
  quarantine: string[];
  proposed: number;
  changed: number;
  removed: number;
}

export interface CaseView {
  evalPath: string;
  rootEvalPath: string;
  testId: string;
  target: string;
  suite: string;
  provider: string;
  model: string | null;
  tags: string[];
  verdict: Verdict;
  classification: string;
  flaky: boolean;
  reason: string;
  /** Whether the attempts settled the verdict (older bundles: decided). */
  evidence?: "decided" | "inconclusive";
  /** For an inconclusive case: the attempts a fresh run would likely need to settle it (null: unknown). */
  settleAttempts?: number | null;
  attempts: AttemptCounts;
  successRate: number | null;
  wilson95: [number, number] | null;
  meanScore: number | null;
  meanPassRate: number | null;
  policy: { name: string; threshold: number | null; onError: string } | null;
  change: ChangeView | null;
  /** The base runs the case was compared with, newest first (empty without a base). */
  history?: HistoryPoint[];
  /** Whether its verdict gates (null: the bundle predates admission; it did). */
  admission?: AdmissionView | null;
  usage: UsageRollup | null;
  /** Bundle-relative result directory. */
  resultDir: string;
  runs: AttemptTry[];
  /** Set when the exam came from another commit and this case is not as it has it. */
  exam?: CaseExamView | null;
}

export interface ReportView {
  run: {
    id: string;
    startedAt: string;
    finishedAt: string;
    durationMs: number;
    evalgateVersion: string;
    shard: { index: number; total: number } | null;
    mergedFrom: string[] | null;
    /** --target, --test and --tag of the run: with any, the counts cover part of the suites. */
    filters: { targets: string[]; tests: string[]; tags: string[] };
    /** Set when the run was stopped early (a cancelled job, SIGTERM): what stopped and what finished. */
    interrupted: string | null;
  };
  git: { sha: string | null; branch: string | null; dirty: boolean | null } | null;
  suites: SuiteView[];
  gate: {
    verdict: "pass" | "fail";
    reasons: string[];
    warnings: string[];
    budgetStops: { evalPath: string; reason: string }[];
  };
  counts: {
    cases: number;
    passed: number;
    failed: number;
    errored: number;
    flaky: number;
    attempts: number;
    attemptsPassed: number;
    attemptsFailed: number;
    attemptsErrored: number;
  };
  usage: UsageRollup | null;
  targets: TargetNumbers[];
  comparison: ComparisonView | null;
  /** What the agents ran under, when the bundle says (summary.json `isolation`). */
  isolation?: IsolationView | null;
  /** Where the exam was read from, when not the checkout's own. */
  exam?: ExamView | null;
  cases: CaseView[];
  /** Files of the bundle that could not be read: shown in the reports, never fatal. */
  problems: string[];
}

export interface IsolationView {
  /** bwrap | pid-namespace | subreaper | none; null when no target runs an agent program. */
  level: string | null;
  reason: string | null;
  /** What the agent could do at that level (the threat model's rows the run did not keep). */
  gaps?: string[];
}

/** A case that passed on every counted attempt with nothing odd: its evidence is not loaded. */
export function isStablePass(c: Pick<CaseView, "verdict" | "flaky" | "classification" | "change">): boolean {
  return (
    c.verdict === "pass" && !c.flaky && c.classification === "stable_pass" && c.change?.change !== "regressed"
  );
}

export function caseFlags(c: CaseView, counted?: ReadonlySet<CaseView>): string[] {
  const flags: string[] = [];
  if (c.flaky) flags.push("flaky");
  const timedOut = ["agent_timeout", "scorer_timeout"];
  if (c.runs.some((r) => r.status === "timeout" || timedOut.includes(r.failureKind ?? "")))
    flags.push("timeout");
  if (c.runs.some((r) => r.failureKind === "tampered")) flags.push("tampered");
  // A flip the gate does not count (not significant, known flaky) may be noise: not "regressed".
  if (c.change?.change === "regressed")
    flags.push(!counted || counted.has(c) ? "regressed" : "flipped (not counted)");
  // How the case stands to an exam read from the base commit (docs/exam.md).
  if (c.exam?.status === "proposed") flags.push("proposed, not gating");
  if (c.exam?.status === "changed") flags.push("exam changed by the PR");
  if (c.exam?.status === "removed") flags.push("removed by the PR");
  return flags;
}

/** A case new in the pull request: it ran from its own definition and never gates (docs/exam.md). */
export function isProposed(c: Pick<CaseView, "exam">): boolean {
  return c.exam?.status === "proposed";
}

/** Whether the case belongs with the problems a reviewer must see (regressed, errored, failed, flaky). */
export function needsReview(c: CaseView): boolean {
  return c.verdict !== "pass" || c.flaky || c.change?.change === "regressed";
}

/** Regressions, flaky and errored cases: never left out of a report. */
export function isProtected(c: CaseView): boolean {
  return c.change?.change === "regressed" || c.flaky || c.verdict === "error";
}

const REVIEW_ORDER = (c: CaseView): number =>
  c.change?.change === "regressed"
    ? 0
    : c.verdict === "error"
      ? 1
      : c.verdict === "fail"
        ? 2
        : c.flaky
          ? 3
          : c.change?.change === "improved"
            ? 4
            : 5;

/** Cases in the order a reviewer reads them: regressed, errored, failed, flaky, improved, the rest. */
export function reviewOrder(cases: readonly CaseView[]): CaseView[] {
  return cases
    .map((c, i) => ({ c, i }))
    .sort((a, b) => REVIEW_ORDER(a.c) - REVIEW_ORDER(b.c) || a.i - b.i)
    .map((x) => x.c);
}
