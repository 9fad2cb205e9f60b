/** `file`: a file of the workspace exists (or not), contains a text, or matches a pattern. */
import { readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import type { ScorerInput } from "../config/schema.js";
import type { Scorer, ScorerContext, ScorerResult } from "./types.js";

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

export const fileScorer: Scorer = {
  async run(ctx: ScorerContext): Promise<ScorerResult> {
    const o = ctx.spec.options as Extract<ScorerInput, { type: "file" }>;
    const abs = path.resolve(ctx.workspace, o.path);
    if (!inside(ctx.workspace, abs)) return { state: "error", reason: `${o.path} is outside the workspace` };
    let real: string | undefined;
    try {
      real = await realpath(abs);
      if (!inside(await realpath(ctx.workspace), real)) {
        return {
          state: "complete",
          score: 0,
          passed: false,
          reason: `${o.path} is a link to a place outside the workspace`,
        };
      }
    } catch {
      real = undefined;
    }
    const wantExists = o.exists ?? true;
    const isFile = real !== undefined && (await stat(real)).isFile();
    if (!wantExists) {
      return real === undefined
        ? { state: "complete", score: 1, passed: true, reason: `${o.path} does not exist` }
        : { state: "complete", score: 0, passed: false, reason: `${o.path} exists but should not` };
    }
    if (!isFile) {
      return {
        state: "complete",
        score: 0,
        passed: false,
        reason: real === undefined ? `${o.path} does not exist` : `${o.path} is not a file`,
      };
    }
    const text = await readFile(real!, "utf8");
    if (o.contains !== undefined && !text.includes(o.contains)) {
      return {
        state: "complete",
        score: 0,
        passed: false,
        reason: `${o.path} does not contain ${JSON.stringify(o.contains)}`,
      };
    }
    if (o.matches !== undefined && !new RegExp(o.matches, "m").test(text)) {
      return {
        state: "complete",
        score: 0,
        passed: false,
        reason: `${o.path} does not match /${o.matches}/`,
      };
    }
    return {
      state: "complete",
      score: 1,
      passed: true,
      reason: `${o.path} ${o.contains || o.matches ? "has the expected content" : "exists"}`,
    };
  },
};
