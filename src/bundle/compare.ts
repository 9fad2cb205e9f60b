/** Comparing two bundles case by case (the `compare` command). */
import { type CaseChange, compareCase } from "../gate/compare.js";
import { type GateCase, sortRegressions } from "../gate/run.js";
import { type Bundle, rowKey } from "./read.js";
import { rootsOf } from "./summary.js";
import { type WireComparison, type WireIdentity, type WireIndexRow, wireChange } from "./wire.js";

export const COMPARE_SCHEMA = "evalgate.compare/v1";

export interface ComparedCase extends WireIdentity {
  suite: string;
  change: CaseChange["change"];
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
  counts: Record<CaseChange["change"], number> & { significant: number };
  cases: ComparedCase[];
}

const side = (r: WireIndexRow | undefined) =>
  r && { verdict: r.verdict, counted: r.attempts.counted, passed: r.attempts.passed, flaky: r.flaky };

export function compareBundles(base: Bundle, head: Bundle): BundleComparison {
  const baseRows = new Map(base.rows.map((r) => [rowKey(r), r]));
  const headRows = new Map(head.rows.map((r) => [rowKey(r), r]));
  const rules = new Map(head.summary.evals.map((e) => [e.eval_path, e.regressions ?? "fail"]));
  const counted = countedRegressions(head, baseRows);
  const keys = [...headRows.keys(), ...[...baseRows.keys()].filter((k) => !headRows.has(k))];
  const cases: ComparedCase[] = keys.map((k) => {
    const b = baseRows.get(k);
    const h = headRows.get(k);
    const row = (h ?? b)!;
    const c = compareCase(side(b), side(h));
    const rule = rules.get(h?.root_eval_path ?? row.eval_path) ?? "fail";
    return {
      eval_path: row.eval_path,
      test_id: row.test_id,
      target: row.target,
      suite: row.suite,
      change: c.change,
      base_verdict: b?.verdict ?? null,
      head_verdict: h?.verdict ?? null,
      base_attempts: c.baseAttempts,
      head_attempts: h ? { counted: h.attempts.counted, passed: h.attempts.passed } : null,
      success_rate_delta: c.successRateDelta,
      p_value: c.pValue,
      significant: c.significant,
      head_flaky: h?.flaky ?? false,
      counted_by_gate: c.change === "regressed" && rule === "fail" && counted.has(k),
    };
  });
  const count = (k: CaseChange["change"]) => cases.filter((c) => c.change === k).length;
  return {
    schema: COMPARE_SCHEMA,
    base: { run_id: base.summary.run.id, git_sha: base.summary.git?.sha ?? null },
    head: { run_id: head.summary.run.id, git_sha: head.summary.git?.sha ?? null },
    verdict: cases.some((c) => c.counted_by_gate) ? "fail" : "pass",
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

/**
 * The head's flips its gate counts as regressions: per root eval file, with its evidence rule
 * (Barnard's test and Holm's correction over the cases compared, unless `evidence: any`).
 */
function countedRegressions(head: Bundle, baseRows: ReadonlyMap<string, WireIndexRow>): Set<string> {
  const out = new Set<string>();
  for (const root of rootsOf(head.summary.evals)) {
    const mine = head.rows.filter((r) => r.root_eval_path === root.evalPath);
    const cases = mine.map((r): GateCase & { key: string } => ({
      key: rowKey(r),
      identity: { evalPath: r.eval_path, testId: r.test_id, target: r.target },
      rootEvalPath: r.root_eval_path,
      suite: r.suite,
      decision: {
        verdict: r.verdict,
        classification: r.classification,
        flaky: r.flaky,
        counts: { ...r.attempts, timedOut: r.attempts.timed_out },
        stats: {
          attemptSuccessRate: r.attempt_success_rate,
          wilson95: null,
          meanScore: r.mean_score,
          meanPassRate: r.mean_pass_rate,
          passAtK: [],
          passHatK: [],
        },
        reason: r.reason,
      },
      change: compareCase(side(baseRows.get(rowKey(r))), side(r)),
    }));
    for (const c of sortRegressions(root, cases).confirmed) out.add((c as GateCase & { key: string }).key);
  }
  return out;
}

/** Sets each row's `change` against the baseline's rows (merging shards against a baseline). */
export function applyBaseline(rows: WireIndexRow[], baseline: Bundle): void {
  const baseRows = new Map(baseline.rows.map((r) => [rowKey(r), r]));
  for (const r of rows) r.change = wireChange(compareCase(side(baseRows.get(rowKey(r))), side(r)));
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
