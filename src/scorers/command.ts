/** `command`: exit status 0 scores 1.0, anything else 0.0. */
import type { ScorerInput } from "../config/schema/scorers.js";
import { failureExcerpt, notRun, runScorerCommand } from "./process.js";
import type { Scorer, ScorerContext, ScorerResult } from "./types.js";

export const commandScorer: Scorer = {
  async run(ctx: ScorerContext): Promise<ScorerResult> {
    const options = ctx.spec.options as Extract<ScorerInput, { type: "command" }>;
    const outcome = await runScorerCommand(ctx, options);
    const broken = notRun(outcome, ctx.spec.timeoutMs);
    if (broken) return broken;
    const passed = outcome.exitCode === 0;
    return {
      state: "complete",
      score: passed ? 1 : 0,
      passed,
      reason: passed ? "exit 0" : `exit ${outcome.exitCode}: ${failureExcerpt(outcome.tail) || "no output"}`,
      details: { exit_code: outcome.exitCode, duration_ms: outcome.durationMs },
    };
  },
};
