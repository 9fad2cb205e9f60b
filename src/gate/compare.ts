/**
 * Comparison of a case with its baseline. Pure. Cases are matched by identity; the change is
 * decided on verdicts, the delta and p-value on counted attempts only (errors are left out of both
 * sides, so an error never looks like an improvement or a regression).
 */
import type { Verdict } from "./case.js";
import { barnardOneSidedLower, dropPValue } from "./drop.js";

export type ChangeKind = "regressed" | "improved" | "unchanged" | "new" | "removed";

export interface SideCounts {
  verdict: Verdict;
  /** Attempts the verdict was decided on (errors excluded). */
  counted: number;
  passed: number;
  /** The side's case was flaky (absent: unknown). */
  flaky?: boolean;
  /**
   * The head's path: its schedule's looks and the successes at each look reached (absent: one look
   * at the end). A drop is tested over these looks (gate/drop.ts).
   */
  path?: HeadPath;
}

export interface HeadPath {
  looks: readonly number[];
  passes: readonly number[];
}

export interface CaseChange {
  change: ChangeKind;
  baseVerdict: Verdict | null;
  baseAttempts: { counted: number; passed: number } | null;
  /** Head success rate minus base success rate (counted attempts only). */
  successRateDelta: number | null;
  /**
   * One-sided p-value in the direction the rate moved (1 when it did not move): a drop by Barnard's
   * test over the head's looks (gate/drop.ts), an improvement by Barnard's test on the totals.
   */
  pValue: number | null;
  /** p ≤ 0.05, uncorrected (the gate corrects for the number of cases compared: gate/run.ts). */
  significant: boolean;
  /** The baseline's case was flaky (null: not known, e.g. an older bundle). */
  baseFlaky?: boolean | null;
  /** Base runs pooled into baseAttempts (absent: one). */
  baseRuns?: number;
  /** The base has the case but no run with the head's history key: its newest run was compared. */
  keyChanged?: boolean;
}

/** One case of two runs compared (`evalgate compare`): base and head side by side. */
export interface ComparedCase {
  evalPath: string;
  testId: string;
  target: string;
  suite: string;
  change: ChangeKind;
  baseVerdict: Verdict | null;
  headVerdict: Verdict | null;
  baseAttempts: { counted: number; passed: number } | null;
  headAttempts: { counted: number; passed: number } | null;
  successRateDelta: number | null;
  pValue: number | null;
  significant: boolean;
  headFlaky: boolean;
  /** Whether the head's gate counts this regression (gate.regressions: fail). */
  countedByGate: boolean;
}

/** Two runs compared case by case. */
export interface RunComparison {
  base: { runId: string; gitSha: string | null };
  head: { runId: string; gitSha: string | null };
  /** fail when a regression is counted by the head's gate. */
  verdict: "pass" | "fail";
  counts: Record<ChangeKind, number> & { significant: number };
  cases: ComparedCase[];
}

export const SIGNIFICANCE = 0.05;

export function compareCase(base: SideCounts | undefined, head: SideCounts | undefined): CaseChange {
  if (!base) {
    return {
      change: "new",
      baseVerdict: null,
      baseAttempts: null,
      successRateDelta: null,
      pValue: null,
      significant: false,
    };
  }
  const baseAttempts = { counted: base.counted, passed: base.passed };
  if (!head) {
    return {
      change: "removed",
      baseVerdict: base.verdict,
      baseAttempts,
      successRateDelta: null,
      pValue: null,
      significant: false,
    };
  }
  let change: ChangeKind = "unchanged";
  if (base.verdict === "pass" && head.verdict === "fail") change = "regressed";
  else if (base.verdict === "fail" && head.verdict === "pass") change = "improved";
  let successRateDelta: number | null = null;
  let pValue: number | null = null;
  if (base.counted > 0 && head.counted > 0) {
    const baseRate = base.passed / base.counted;
    const headRate = head.passed / head.counted;
    successRateDelta = Math.round((headRate - baseRate) * 1e9) / 1e9;
    if (headRate < baseRate)
      pValue = head.path
        ? dropPValue(base, head.path.looks, head.path.passes)
        : barnardOneSidedLower(base.passed, base.counted, head.passed, head.counted);
    else if (headRate > baseRate)
      pValue = barnardOneSidedLower(head.passed, head.counted, base.passed, base.counted);
    else pValue = 1;
  }
  return {
    change,
    baseVerdict: base.verdict,
    baseAttempts,
    successRateDelta,
    pValue,
    significant: pValue !== null && pValue <= SIGNIFICANCE,
    baseFlaky: base.flaky ?? null,
  };
}
