/**
 * A case's history on the base branch: its runs there, newest first, and the base side the drop
 * test pools from them (docs/decisions/0196). Pure: bundle/history.ts reads the runs from bundles.
 */
import type { Verdict } from "./case.js";
import type { SideCounts } from "./compare.js";

/** Comparable runs pooled at most (the newest). */
export const HISTORY_RUNS = 20;

/** One run of one case on the base branch. */
export interface BaseRun {
  runId: string;
  gitSha: string | null;
  startedAt: string;
  /** What makes attempts comparable (config/fingerprint.ts); null in bundles written before it. */
  key: string | null;
  verdict: Verdict;
  flaky: boolean;
  /** Every counted attempt. */
  counted: number;
  passed: number;
  /**
   * The counted attempts among the first `min` of the run's schedule: the part it always ran,
   * whatever the outcomes, so a sample of fixed size (every attempt when the repeat was fixed).
   */
  first: { counted: number; passed: number };
}

/** The runs a case is compared with. */
export interface CaseHistory {
  /** Comparable runs, newest first (at most HISTORY_RUNS). */
  runs: BaseRun[];
  /**
   * The base has runs of the case, but none with the head's key (its exam or agent changed, or
   * they predate keys): the newest is compared with alone, as a single baseline.
   */
  keyChanged: boolean;
}

/**
 * The runs of a case comparable with a head of `key`: those with the same key, newest first. When
 * none has it, the newest run alone (a changed exam starts a new history, but the comparison of
 * one run with another is still shown, as before histories existed).
 */
export function comparableRuns(all: readonly BaseRun[], key: string | null): CaseHistory {
  const newestFirst = [...all].sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  const same = newestFirst.filter((r) => key !== null && r.key === key);
  if (same.length > 0) return { runs: same.slice(0, HISTORY_RUNS), keyChanged: false };
  return { runs: newestFirst.slice(0, 1), keyChanged: newestFirst.length > 0 };
}

/**
 * The base side of a comparison: the newest run's verdict and flakiness, and the attempts pooled
 * over the runs' fixed parts. The attempts an adaptive run added depended on its outcomes (more
 * after early failures), so they would bias the pool; its first `min` did not.
 */
export function pooledSide(history: CaseHistory): SideCounts | undefined {
  const newest = history.runs[0];
  if (!newest) return undefined;
  const counted = history.runs.reduce((a, r) => a + r.first.counted, 0);
  const passed = history.runs.reduce((a, r) => a + r.first.passed, 0);
  return { verdict: newest.verdict, counted, passed, flaky: newest.flaky };
}
