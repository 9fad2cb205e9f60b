/**
 * The scoring contract: weighted score, required scorers, the attempt threshold, and the pass rate
 * (passed scorers / scorers). When any scorer could not run, the attempt has no score at all.
 */
import type { ScorerSpec } from "../config/types.js";
import type { ScorerResult } from "./types.js";

export interface ScorerGrade {
  name: string;
  type: string;
  weight: number;
  required: boolean;
  result: ScorerResult;
  durationMs: number;
}

export interface Grading {
  /** Weighted score in [0, 1]; null when a scorer errored. */
  score: number | null;
  /** Passed scorers / scorers; null when a scorer errored. */
  passRate: number | null;
  passed: boolean;
  threshold: number;
  /** Names of required scorers that did not pass. */
  requiredFailed: string[];
  /** Names of scorers that could not run. */
  errored: string[];
  scorers: ScorerGrade[];
}

export function grade(
  specs: readonly ScorerSpec[],
  results: readonly { result: ScorerResult; durationMs: number }[],
  threshold: number,
): Grading {
  const scorers: ScorerGrade[] = specs.map((s, i) => ({
    name: s.name,
    type: s.type,
    weight: s.weight,
    required: s.required,
    result: results[i]!.result,
    durationMs: results[i]!.durationMs,
  }));
  const errored = scorers.filter((s) => s.result.state === "error").map((s) => s.name);
  const requiredFailed = scorers
    .filter((s) => s.required && s.result.state === "complete" && !s.result.passed)
    .map((s) => s.name);
  if (errored.length > 0) {
    return { score: null, passRate: null, passed: false, threshold, requiredFailed, errored, scorers };
  }
  let score = 0;
  let passedCount = 0;
  for (const s of scorers) {
    if (s.result.state !== "complete") continue;
    score += s.weight * s.result.score;
    if (s.result.passed) passedCount++;
  }
  score = Math.min(1, Math.max(0, Math.round(score * 1e9) / 1e9));
  const passRate = scorers.length > 0 ? passedCount / scorers.length : 0;
  const passed = scorers.length > 0 && score >= threshold && requiredFailed.length === 0;
  return { score, passRate, passed, threshold, requiredFailed, errored, scorers };
}
