/**
 * Which suites a baseline bundle and a run share (a suite is a root eval file, by its path). Cases
 * are compared by identity, so shared suites compare case by case; the totals ("+5 passed") are only
 * honest over the suites both ran. A baseline that shares no suite with the run is not a baseline of
 * it at all (decision 0202).
 */
import { BaseHistory } from "./history.js";
import type { Bundle } from "./read.js";
import { targetRollups } from "./summary.js";

export interface SuiteFit {
  /** Suites both ran. */
  shared: string[];
  /** Suites only the baseline ran: left out of the comparison. */
  baseOnly: string[];
  /** Suites only this run has (new ones): nothing to compare them with. */
  runOnly: string[];
}

export function suiteFit(baseline: Bundle, runSuites: readonly string[]): SuiteFit {
  const base = new Set(baseline.summary.evals.map((e) => e.eval_path));
  const run = new Set(runSuites);
  return {
    shared: [...run].filter((s) => base.has(s)).sort(),
    baseOnly: [...base].filter((s) => !run.has(s)).sort(),
    runOnly: [...run].filter((s) => !base.has(s)).sort(),
  };
}

function listed(paths: readonly string[]): string {
  const shown = paths.slice(0, 5).join(", ");
  return paths.length > 5 ? `${shown} and ${paths.length - 5} more` : shown;
}

/**
 * The baseline as this run can use it: whole when it ran the same suites; limited to the shared
 * suites (its rows and per-target totals) with a note when the sets differ; refused with a note when
 * they share none.
 */
export function baselineForSuites(
  baseline: Bundle,
  runSuites: readonly string[],
): { bundle?: Bundle; note?: string } {
  const fit = suiteFit(baseline, runSuites);
  if (fit.shared.length === 0) {
    return {
      note: `the baseline ran other suites (${listed(fit.baseOnly)}) than this run (${listed(fit.runOnly)}), so it was not compared`,
    };
  }
  if (fit.baseOnly.length === 0 && fit.runOnly.length === 0) return { bundle: baseline };
  const shared = new Set(fit.shared);
  const rows = baseline.rows.filter((r) => shared.has(r.root_eval_path));
  const bundle: Bundle = {
    ...baseline,
    rows,
    summary: {
      ...baseline.summary,
      evals: baseline.summary.evals.filter((e) => shared.has(e.eval_path)),
      targets: [...targetRollups(rows).values()],
    },
  };
  const parts = [
    fit.runOnly.length
      ? `${listed(fit.runOnly)} ${fit.runOnly.length === 1 ? "is" : "are"} new (not in the baseline)`
      : "",
    fit.baseOnly.length ? `the baseline's ${listed(fit.baseOnly)} did not run here` : "",
  ].filter(Boolean);
  return { bundle, note: `compared over the suites both ran: ${parts.join("; ")}` };
}

/**
 * The base history as this run can use it: each base run limited to the suites it shares with the
 * run (as {@link baselineForSuites}); runs that share none are left out. The note is the newest
 * run's, the one the totals are compared with.
 */
export function historyForSuites(
  history: BaseHistory,
  runSuites: readonly string[],
): { history?: BaseHistory; note?: string } {
  const fitted = history.bundles.map((b) => baselineForSuites(b, runSuites));
  const kept = fitted.flatMap((f) => (f.bundle ? [f.bundle] : []));
  const note = fitted[0]?.note;
  return { ...(kept.length > 0 ? { history: new BaseHistory(kept) } : {}), ...(note ? { note } : {}) };
}
