/**
 * `script`: a program that prints its verdict. The last line that is JSON
 * ({"score": 0.7, "pass": true, "reason": "..."}) or "score=0.7" counts. A script that exits
 * non-zero, prints no score, or prints a score outside [0, 1] is an error: its output cannot be
 * trusted.
 */
import { z } from "zod";
import type { ScorerInput } from "../config/schema/scorers.js";
import { lastLines, notRun, runScorerCommand } from "./process.js";
import type { Scorer, ScorerContext, ScorerResult } from "./types.js";

const verdictSchema = z.object({
  score: z.number().min(0).max(1),
  pass: z.boolean().optional(),
  reason: z.string().optional(),
});

export interface ScriptVerdict {
  score: number;
  pass?: boolean;
  reason?: string;
}

/** The verdict a script printed, or a description of what is wrong with its output. */
export function parseScriptOutput(stdout: string): ScriptVerdict | { problem: string } {
  const lines = stdout
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (line.startsWith("{")) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue;
      }
      const v = verdictSchema.safeParse(parsed);
      if (!v.success) {
        return {
          problem: `the JSON verdict is invalid (${v.error.issues.map((x) => `${x.path.join(".") || "value"}: ${x.message}`).join("; ")})`,
        };
      }
      return v.data;
    }
    const m = /^score\s*[=:]\s*(-?[0-9.]+(?:e-?\d+)?)\s*$/i.exec(line);
    if (m) {
      const score = Number(m[1]);
      if (!Number.isFinite(score) || score < 0 || score > 1)
        return { problem: `score ${m[1]} is outside [0, 1]` };
      return { score };
    }
  }
  return {
    problem: 'printed no score (expected a last line like "score=0.7" or {"score": 0.7, "pass": true})',
  };
}

export const scriptScorer: Scorer = {
  async run(ctx: ScorerContext): Promise<ScorerResult> {
    const options = ctx.spec.options as Extract<ScorerInput, { type: "script" }>;
    const outcome = await runScorerCommand(ctx, options, true);
    const broken = notRun(outcome, ctx.spec.timeoutMs);
    if (broken) return broken;
    if (outcome.exitCode !== 0) {
      return {
        state: "error",
        reason: `exited with ${outcome.exitCode}: ${lastLines(outcome.tail) || "no output"}`,
      };
    }
    const verdict = parseScriptOutput(outcome.stdout);
    if ("problem" in verdict) return { state: "error", reason: verdict.problem };
    const passAt = options.pass_at ?? 1;
    const passed = verdict.pass ?? verdict.score >= passAt;
    return {
      state: "complete",
      score: verdict.score,
      passed,
      reason:
        verdict.reason ??
        `score ${verdict.score}${verdict.pass === undefined ? ` (passes at ${passAt})` : ""}`,
    };
  },
};
