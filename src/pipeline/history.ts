/**
 * `evalgate history`: each case's runs on the base branch (the pooled baseline), as one view the
 * text and JSON renderers read (report/history.ts). Built from the bundles alone.
 */
import picomatch from "picomatch";
import type { BaseHistory } from "../bundle/history.js";
import { comparableRuns, pooledSide } from "../gate/history.js";
import { wilsonInterval } from "../gate/stats.js";
import type { CaseHistoryView } from "../report/history.js";

export interface HistoryFilters {
  /** Only tests whose id or suite/id matches one of these globs. */
  tests?: readonly string[];
  targets?: readonly string[];
}

/** Every case of the history's bundles that passes the filters, with its runs newest first. */
export function historyView(history: BaseHistory, filters: HistoryFilters = {}): CaseHistoryView[] {
  const out: CaseHistoryView[] = [];
  const seen = new Set<string>();
  for (const bundle of history.bundles) {
    for (const row of bundle.rows) {
      const key = `${row.eval_path}\u0000${row.test_id}\u0000${row.target}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const names = [row.test_id, `${row.suite}/${row.test_id}`];
      if (filters.tests?.length && !filters.tests.some((g) => names.some((n) => picomatch.isMatch(n, g))))
        continue;
      if (filters.targets?.length && !filters.targets.includes(row.target)) continue;
      const runs = history.runsOf(key);
      const current = runs[0]?.key ?? null;
      const pooled = pooledSide(comparableRuns(runs, current));
      const counted = pooled?.counted ?? 0;
      const passed = pooled?.passed ?? 0;
      out.push({
        evalPath: row.eval_path,
        testId: row.test_id,
        target: row.target,
        suite: row.suite,
        key: current,
        runs: runs.map((r) => ({
          runId: r.runId,
          gitSha: r.gitSha,
          startedAt: r.startedAt,
          verdict: r.verdict,
          counted: r.counted,
          passed: r.passed,
          comparable: current !== null && r.key === current,
        })),
        pooled: {
          runs: runs.filter((r) => current !== null && r.key === current).length || Math.min(1, runs.length),
          counted,
          passed,
          rate: counted > 0 ? passed / counted : null,
          wilson95: wilsonInterval(passed, counted),
        },
      });
    }
  }
  return out;
}
