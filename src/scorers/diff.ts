/** `diff`: the shape of the agent's change: which files, how many, how many lines. */
import picomatch from "picomatch";
import type { ScorerInput } from "../config/schema/scorers.js";
import { pathMatcher } from "../workspace/path-glob.js";
import type { Scorer, ScorerContext, ScorerProblem, ScorerResult } from "./types.js";

export const diffScorer: Scorer = {
  check(options: ScorerInput): ScorerProblem[] {
    const o = options as Extract<ScorerInput, { type: "diff" }>;
    const problems: ScorerProblem[] = [];
    for (const key of ["allow", "deny"] as const) {
      (o[key] ?? []).forEach((g, i) => {
        try {
          picomatch.makeRe(g, { dot: true, strictBrackets: true });
        } catch (e) {
          problems.push({ at: [key, i], message: `bad glob "${g}": ${(e as Error).message}` });
        }
      });
    }
    return problems;
  },

  async run(ctx: ScorerContext): Promise<ScorerResult> {
    const o = ctx.spec.options as Extract<ScorerInput, { type: "diff" }>;
    const files = ctx.diff.files;
    const touched = files.flatMap((f) => (f.oldPath ? [f.path, f.oldPath] : [f.path]));
    const problems: string[] = [];
    if (o.require_change && files.length === 0) problems.push("the agent changed no file");
    if (o.deny?.length) {
      const deny = pathMatcher(o.deny);
      const hit = touched.filter((p) => deny(p));
      if (hit.length)
        problems.push(`changed denied file${hit.length > 1 ? "s" : ""} ${hit.slice(0, 5).join(", ")}`);
    }
    if (o.allow?.length) {
      const allow = pathMatcher(o.allow);
      const outside = touched.filter((p) => !allow(p));
      if (outside.length)
        problems.push(
          `changed file${outside.length > 1 ? "s" : ""} outside the allowed globs: ${outside.slice(0, 5).join(", ")}`,
        );
    }
    if (o.max_files !== undefined && files.length > o.max_files) {
      problems.push(`${files.length} files changed, at most ${o.max_files} allowed`);
    }
    const lines = ctx.diff.additions + ctx.diff.deletions;
    if (o.max_lines !== undefined && lines > o.max_lines)
      problems.push(`${lines} lines changed, at most ${o.max_lines} allowed`);
    const summary = `${files.length} file${files.length === 1 ? "" : "s"}, +${ctx.diff.additions} −${ctx.diff.deletions}`;
    return problems.length === 0
      ? { state: "complete", score: 1, passed: true, reason: summary }
      : { state: "complete", score: 0, passed: false, reason: `${problems.join("; ")} (${summary})` };
  },
};
