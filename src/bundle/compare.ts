/** Comparing two bundles case by case (the `compare` command). */
import { type ChangeKind, type ComparedCase, compareCase, type RunComparison } from "../gate/compare.js";
import { type GateCase, sortRegressions } from "../gate/run.js";
import { type Bundle, rowKey } from "./read.js";
import { isProposed, rootsOf } from "./summary.js";
import { type WireComparison, type WireIdentity, type WireIndexRow, wireChange } from "./wire.js";

export const COMPARE_SCHEMA = "evalgate.compare/v1";

/** One case of `evalgate compare --format json` (the in-memory ComparedCase, snake_case). */
export interface WireComparedCase extends WireIdentity {
  suite: string;
  change: ChangeKind;
  base_verdict: string | null;
  head_verdict: string | null;
  base_attempts: { counted: number; passed: number } | null;
  head_attempts: { counted: number; passed: number } | null;
  success_rate_delta: number | null;
  p_value: number | null;
  significant: boolean;
  head_flaky: boolean;
  /** Whether the head's gate counts this regression (gate.regressions: fail). */
  counted_by_gate: boolean;
}

export interface BundleComparison {
  schema: typeof COMPARE_SCHEMA;
  base: { run_id: string; git_sha: string | null };
  head: { run_id: string; git_sha: string | null };
  /** fail when a regression is counted by the head's gate. */
  verdict: "pass" | "fail";
  counts: Record<ChangeKind, number> & { significant: number };
  cases: WireComparedCase[];
}

/** A case's index row as one side of a comparison (gate/compare.ts), or undefined when it has none. */
export const sideOfRow = (r: WireIndexRow | undefined) =>
  r && { verdict: r.verdict, counted: r.attempts.counted, passed: r.attempts.passed, flaky: r.flaky };

export function compareBundles(base: Bundle, head: Bundle): RunComparison {
  const baseRows = new Map(base.rows.map((r) => [rowKey(r), r]));
  const headRows = new Map(head.rows.map((r) => [rowKey(r), r]));
  const rules = new Map(head.summary.evals.map((e) => [e.eval_path, e.regressions ?? "fail"]));
  const counted = countedRegressions(head, baseRows);
  const keys = [...headRows.keys(), ...[...baseRows.keys()].filter((k) => !headRows.has(k))];
  const cases: ComparedCase[] = keys.map((k) => {
    const b = baseRows.get(k);
    const h = headRows.get(k);
    const row = (h ?? b)!;
    const c = compareCase(sideOfRow(b), sideOfRow(h));
    const rule = rules.get(h?.root_eval_path ?? row.eval_path) ?? "fail";
    return {
      evalPath: row.eval_path,
      testId: row.test_id,
      target: row.target,
      suite: row.suite,
      change: c.change,
      baseVerdict: b?.verdict ?? null,
      headVerdict: h?.verdict ?? null,
      baseAttempts: c.baseAttempts,
      headAttempts: h ? { counted: h.attempts.counted, passed: h.attempts.passed } : null,
      successRateDelta: c.successRateDelta,
      pValue: c.pValue,
      significant: c.significant,
      headFlaky: h?.flaky ?? false,
      countedByGate: c.change === "regressed" && rule === "fail" && counted.has(k),
    };
  });
  const count = (k: ChangeKind) => cases.filter((c) => c.change === k).length;
  return {
    base: { runId: base.summary.run.id, gitSha: base.summary.git?.sha ?? null },
    head: { runId: head.summary.run.id, gitSha: head.summary.git?.sha ?? null },
    verdict: cases.some((c) => c.countedByGate) ? "fail" : "pass",
    counts: {
      regressed: count("regressed"),
      improved: count("improved"),
      unchanged: count("unchanged"),
      new: count("new"),
      removed: count("removed"),
      significant: cases.filter((c) => c.significant).length,
    },
    cases,
  };
}

/** The comparison as `evalgate compare --format json` prints it. */
export function wireBundleComparison(c: RunComparison): BundleComparison {
  return {
    schema: COMPARE_SCHEMA,
    base: { run_id: c.base.runId, git_sha: c.base.gitSha },
    head: { run_id: c.head.runId, git_sha: c.head.gitSha },
    verdict: c.verdict,
    counts: c.counts,
    cases: c.cases.map((x) => ({
      eval_path: x.evalPath,
      test_id: x.testId,
      target: x.target,
      suite: x.suite,
      change: x.change,
      base_verdict: x.baseVerdict,
      head_verdict: x.headVerdict,
      base_attempts: x.baseAttempts,
      head_attempts: x.headAttempts,
      success_rate_delta: x.successRateDelta,
      p_value: x.pValue,
      significant: x.significant,
      head_flaky: x.headFlaky,
      counted_by_gate: x.countedByGate,
    })),
  };
}

/**
 * The head's flips its gate counts as regressions: per root eval file, with its evidence rule
 * (Barnard's test and Holm's correction over the cases compared, unless `evidence: any`).
 */
function countedRegressions(head: Bundle, baseRows: ReadonlyMap<string, WireIndexRow>): Set<string> {
  const out = new Set<string>();
  for (const root of rootsOf(head.summary.evals)) {
    // A proposed case (new in a pull request, docs/exam.md) never gates: it is no regression.
    const mine = head.rows.filter((r) => r.root_eval_path === root.evalPath && !isProposed(r));
    const cases = mine.map((r): GateCase & { key: string } => ({
      key: rowKey(r),
      identity: { evalPath: r.eval_path, testId: r.test_id, target: r.target },
      rootEvalPath: r.root_eval_path,
      suite: r.suite,
      decision: {
        verdict: r.verdict,
        flaky: r.flaky,
        counts: { ...r.attempts, timedOut: r.attempts.timed_out },
        reason: r.reason,
      },
      change: compareCase(sideOfRow(baseRows.get(rowKey(r))), sideOfRow(r)),
    }));
    for (const c of sortRegressions(root, cases).confirmed) out.add((c as GateCase & { key: string }).key);
  }
  return out;
}

/** Sets each row's `change` against the baseline's rows (merging shards against a baseline). */
export function applyBaseline(rows: WireIndexRow[], baseline: Bundle): void {
  const baseRows = new Map(baseline.rows.map((r) => [rowKey(r), r]));
  for (const r of rows) r.change = wireChange(compareCase(sideOfRow(baseRows.get(rowKey(r))), sideOfRow(r)));
}

/**
 * The summary's comparison block from rows whose `change` is set. Removed cases are the baseline's
 * cases of the same eval files that this run does not have; a filtered run reports none.
 */
export function comparisonSummary(
  baseline: Bundle,
  rows: readonly WireIndexRow[],
  filtered: boolean,
): WireComparison {
  const count = (k: string) => rows.filter((r) => r.change?.change === k).length;
  const here = new Set(rows.map(rowKey));
  const evalPaths = new Set(rows.map((r) => r.eval_path));
  const removed = filtered
    ? []
    : baseline.rows.filter((r) => evalPaths.has(r.eval_path) && !here.has(rowKey(r)));
  return {
    baseline_run_id: baseline.summary.run.id,
    baseline_git_sha: baseline.summary.git?.sha ?? null,
    regressed: count("regressed"),
    improved: count("improved"),
    unchanged: count("unchanged"),
    new: count("new"),
    removed: removed.length,
    significant: rows.filter((r) => r.change?.significant).length,
    removed_cases: removed.map((r) => ({
      eval_path: r.eval_path,
      test_id: r.test_id,
      target: r.target,
      suite: r.suite,
      base_verdict: r.verdict,
    })),
    targets: baseline.summary.targets,
  };
}
