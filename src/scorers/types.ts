/** The contract between the attempt lifecycle and a scorer. */
import type { ScorerProblem } from "../config/plan/checks.js";
import type { ScorerInput } from "../config/schema/scorers.js";
import type { ScorerSpec, TestSpec } from "../config/types.js";
import type { ProcessRunner } from "../sandbox/process.js";
import type { CapturedDiff } from "../workspace/attempt.js";

export interface ScorerContext {
  spec: ScorerSpec;
  test: TestSpec;
  workspace: string;
  diff: CapturedDiff;
  /** Where the scorer's own output goes (scorers/<name>.log). */
  logFile: string;
  runner: ProcessRunner;
  /**
   * A fresh, empty folder outside the workspace for this grading's report ({REPORT_DIR}), writable
   * to the scorer's processes; a tests scorer makes its own when the lifecycle gives none.
   */
  reportDir?: string;
  /** Environment for scorer processes, given the scorer's own passthrough list. */
  env(passthrough: readonly string[]): Record<string, string>;
}

/** A scorer either completed, with a score, or could not run: an error is never a 0 score. */
export type ScorerResult =
  | { state: "complete"; score: number; passed: boolean; reason: string; details?: Record<string, unknown> }
  | {
      state: "error";
      reason: string;
      timedOut?: boolean;
      details?: Record<string, unknown>;
      /**
       * The error may be the attempt's doing although the scorer runs none of its code: the judge
       * answered, but about the agent's diff, and its answer cannot be read (a prompt injection).
       * Calibrated like a scorer that runs the code (run/verify.ts, docs/decisions/0249).
       */
      fromAttempt?: boolean;
    };

export type { ScorerProblem };

export interface Scorer {
  run(ctx: ScorerContext): Promise<ScorerResult>;
  /**
   * Checks what the schema cannot (a pattern that does not parse, a missing rubric file). The run's
   * preflight asks every scorer; the planner reports the problems with the eval file's name and line.
   */
  check?(options: ScorerInput, evalDir: string): ScorerProblem[];
}
