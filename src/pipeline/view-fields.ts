/**
 * Fields of a bundle's JSON files, read as untrusted data into the types the ReportView promises.
 *
 * A bundle may come from a downloaded artifact that the code under evaluation wrote in full (the
 * fork recipe publishes a fork's bundle with a write token), so a count may be a string of HTML and
 * a status may be anything. The renderers escape every text; numbers, booleans and the words they
 * print as they are (statuses, failure kinds, changes) are made what their type says here, so
 * nothing else can carry markup into a comment or a page, and nothing crashes on a wrong type.
 */
import type {
  AdmissionView,
  AttemptUsage,
  CaseExamView,
  ChangeKind,
  ChangeView,
  ExamView,
  FailingTest,
  HistoryPoint,
  ScorerView,
  SetupView,
  TargetNumbers,
  UsageRollup,
} from "../report/view.js";

export type Json = Record<string, unknown>;

/** An object, or an empty one. */
export const record = (x: unknown): Json =>
  x && typeof x === "object" && !Array.isArray(x) ? (x as Json) : {};
/** An array, or an empty one. */
export const list = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
/** A finite number, or null. */
export const num = (x: unknown): number | null => (typeof x === "number" && Number.isFinite(x) ? x : null);
/** A count: a finite number, else 0. */
export const numOr0 = (x: unknown): number => num(x) ?? 0;
/** A text: strings as they are, numbers and booleans written out, anything else empty. */
export const text = (x: unknown): string =>
  typeof x === "string" ? x : typeof x === "number" || typeof x === "boolean" ? String(x) : "";
export const textOrNull = (x: unknown): string | null => (x == null ? null : text(x) || null);
export const bool = (x: unknown): boolean => x === true;
export const boolOrNull = (x: unknown): boolean | null => (typeof x === "boolean" ? x : null);
export const texts = (x: unknown): string[] => list(x).map(text);

/** One of `words`, else `fallback`. */
export function oneOf<const W extends string, F>(x: unknown, words: readonly W[], fallback: F): W | F {
  return (words as readonly unknown[]).includes(x) ? (x as W) : fallback;
}

/** A snake_case word (failure stages and kinds), else null. */
export const word = (x: unknown): string | null =>
  typeof x === "string" && /^[a-z][a-z0-9_]{0,63}$/.test(x) ? x : null;

export function attemptUsageOf(x: unknown): AttemptUsage | null {
  if (!x || typeof x !== "object") return null;
  const u = x as Json;
  return {
    inputTokens: num(u.input_tokens),
    outputTokens: num(u.output_tokens),
    cachedTokens: num(u.cached_tokens),
    costUsd: num(u.cost_usd),
  };
}

/** A rollup: an attempt's fields plus how many attempts it covers (missing in older bundles). */
export function usageRollupOf(x: unknown): UsageRollup | null {
  const usage = attemptUsageOf(x);
  if (!usage) return null;
  const u = x as Json;
  const texts = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  return {
    ...usage,
    attempts: num(u.attempts),
    attemptsWithoutUsage: num(u.attempts_without_usage),
    agentVersions: texts(u.agent_versions),
    models: texts(u.models),
  };
}

export function targetOf(x: unknown): TargetNumbers {
  const t = record(x);
  return {
    name: text(t.name),
    provider: text(t.provider),
    model: textOrNull(t.model),
    cases: numOr0(t.cases),
    passed: numOr0(t.passed),
    failed: numOr0(t.failed),
    errored: numOr0(t.errored),
    flaky: numOr0(t.flaky),
    attempts: numOr0(t.attempts),
    attemptsPassed: numOr0(t.attempts_passed),
    attemptSuccessRate: num(t.attempt_success_rate),
    usage: usageRollupOf(t.usage),
  };
}

const CHANGES: readonly ChangeKind[] = ["regressed", "improved", "unchanged", "new", "removed"];

export function changeOf(x: unknown): ChangeView | null {
  if (!x || typeof x !== "object") return null;
  const c = x as Json;
  const change = oneOf(c.change, CHANGES, null);
  if (change === null) return null;
  const base = c.base_attempts && typeof c.base_attempts === "object" ? record(c.base_attempts) : null;
  return {
    change,
    baseVerdict: textOrNull(c.base_verdict),
    baseAttempts: base ? { counted: numOr0(base.counted), passed: numOr0(base.passed) } : null,
    successRateDelta: num(c.success_rate_delta),
    pValue: num(c.p_value),
    significant: bool(c.significant),
    baseFlaky: typeof c.base_flaky === "boolean" ? c.base_flaky : null,
    baseRuns: Math.max(1, numOr0(c.base_runs)),
    keyChanged: bool(c.key_changed),
  };
}

/** A case summary's `setup` as the view's field (none: no setup ran, or the bundle predates it). */
export function setupFieldOf(x: unknown): { setup?: SetupView } {
  if (!x || typeof x !== "object") return {};
  const s = record(x);
  const command = Array.isArray(s.command) ? s.command.map(text).join(" ") : text(s.command);
  const c = s.npm_cache && typeof s.npm_cache === "object" ? record(s.npm_cache) : null;
  const npmCache = c
    ? { reused: numOr0(c.reused), kept: numOr0(c.kept), rejected: numOr0(c.rejected) }
    : null;
  return { setup: { command, durationMs: numOr0(s.duration_ms), npmCache } };
}

/** A row's admission (null: the bundle predates it). */
export function admissionViewOf(x: unknown): AdmissionView | null {
  if (!x || typeof x !== "object") return null;
  const a = record(x);
  const state = oneOf(a.state, ["admitted", "reported", "unproven"] as const, null);
  if (state === null) return null;
  return { state, runs: numOr0(a.runs), rate: num(a.rate), demoted: bool(a.demoted) };
}

/** A case's base runs (its summary's `history`), newest first; at most 50. */
export function historyOf(x: unknown): HistoryPoint[] {
  return list(x)
    .slice(0, 50)
    .map(record)
    .map((h) => ({
      runId: text(h.run_id),
      gitSha: textOrNull(h.git_sha),
      startedAt: text(h.started_at),
      verdict: oneOf(h.verdict, ["pass", "fail", "error"] as const, "error"),
      counted: numOr0(h.counted),
      passed: Math.min(numOr0(h.passed), numOr0(h.counted)),
    }));
}

const FAILING_TESTS_KEPT = 100;

function failingTestOf(t: Json): FailingTest {
  return {
    name: text(t.test) || "(unnamed)",
    outcome: text(t.outcome) || "failed",
    message: typeof t.message === "string" ? t.message : null,
  };
}

const objects = (x: unknown): Json[] => list(x).filter((t) => t && typeof t === "object") as Json[];

/** The tests that failed a `tests` scorer: the listed ones that did not pass, else every failing one. */
function failingTestsOf(s: Json): { tests: FailingTest[]; total: number } {
  if (s.type !== "tests" || s.passed !== false || !s.details) return { tests: [], total: 0 };
  const d = record(s.details);
  const f2p = objects(d.fail_to_pass);
  const p2p = objects(d.pass_to_pass);
  if (f2p.length + p2p.length > 0) {
    const bad = [
      ...f2p.filter((t) => t.outcome !== "passed"),
      ...p2p.filter((t) => t.outcome !== "passed" && t.outcome !== "skipped"),
    ];
    return { tests: bad.slice(0, FAILING_TESTS_KEPT).map(failingTestOf), total: bad.length };
  }
  const failing = objects(d.failing);
  const counts = record(d.counts);
  const total = numOr0(counts.failed) + numOr0(counts.errored);
  return {
    tests: failing.slice(0, FAILING_TESTS_KEPT).map(failingTestOf),
    total: Math.max(total, failing.length),
  };
}

export function scorerOf(x: unknown, runDir: string): ScorerView {
  const s = record(x);
  const failing = failingTestsOf(s);
  const log = text(s.log);
  return {
    name: text(s.name),
    type: text(s.type),
    weight: numOr0(s.weight),
    required: bool(s.required),
    state: s.state === "error" ? "error" : "complete",
    score: num(s.score),
    passed: boolOrNull(s.passed),
    reason: text(s.reason),
    timedOut: bool(s.timed_out),
    durationMs: num(s.duration_ms),
    failingTests: failing.tests,
    failingTestsTotal: failing.total,
    log: log ? `${runDir}/${log}` : null,
  };
}

const EXAM_STATUSES = ["proposed", "changed", "removed"] as const;

/** An index row's `exam`: how the case stands to an exam read from another commit, or null. */
export function caseExamOf(x: unknown): CaseExamView | null {
  if (!x || typeof x !== "object") return null;
  const e = x as Json;
  const status = oneOf(e.status, EXAM_STATUSES, null);
  return status ? { status, changes: texts(e.changes) } : null;
}

/** summary.json's `exam`, or null (the checkout's own exam, or an older bundle). */
export function examOf(x: unknown): ExamView | null {
  if (!x || typeof x !== "object") return null;
  const e = x as Json;
  return {
    sha: text(e.sha),
    ref: text(e.ref),
    files: list(e.files).map((f) => {
      const r = record(f);
      return {
        evalPath: text(r.eval_path),
        change: oneOf(r.change, ["added", "removed", "changed"] as const, "changed"),
        changes: texts(r.changes),
      };
    }),
    quarantine: texts(e.quarantine),
    proposed: numOr0(e.proposed),
    changed: numOr0(e.changed),
    removed: numOr0(e.removed),
  };
}

/** A shard `i/n` (1 <= i <= n, whole numbers), or null: anything else is no shard at all. */
export function shardOf(value: unknown): { index: number; total: number } | null {
  if (!value || typeof value !== "object") return null;
  const { index, total } = record(value);
  const whole = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 1;
  return whole(index) && whole(total) && index <= total ? { index, total } : null;
}

/** summary.json `isolation.gaps`, read item by item (a merged shard's bundle is untrusted input). */
export function gapsOf(value: unknown): { gaps?: string[] } {
  if (!Array.isArray(value)) return {};
  const gaps = value.filter((g): g is string => typeof g === "string").slice(0, 20);
  return gaps.length > 0 ? { gaps } : {};
}

/** A case summary's policy: its rate is `min_rate`, or `threshold` in bundles written before the rename. */
export function policyOf(p: Json | null): { name: string; threshold: number | null; onError: string } | null {
  return p
    ? { name: text(p.name), threshold: num(p.min_rate ?? p.threshold), onError: text(p.on_error) }
    : null;
}
