/** `file`: a file of the workspace exists (or not), contains a text, or matches a pattern. */
import { readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import type { ScorerInput } from "../config/schema/scorers.js";
import { isWithin } from "../paths.js";
import type { Scorer, ScorerContext, ScorerProblem, ScorerResult } from "./types.js";
import { mustResolveInside } from "./workspace-path.js";

/** Larger files are not read (an agent can make a sparse file of any size). */
const READ_CAP_BYTES = 64 * 1024 * 1024;

export const fileScorer: Scorer = {
  check(options: ScorerInput): ScorerProblem[] {
    const o = options as Extract<ScorerInput, { type: "file" }>;
    if (o.matches === undefined) return [];
    try {
      new RegExp(o.matches, "m");
      return [];
    } catch (e) {
      return [{ at: ["matches"], message: `not a valid regular expression: ${(e as Error).message}` }];
    }
  },

  async run(ctx: ScorerContext): Promise<ScorerResult> {
    const o = ctx.spec.options as Extract<ScorerInput, { type: "file" }>;
    const abs = path.resolve(ctx.workspace, o.path);
    if (!isWithin(ctx.workspace, abs))
      return { state: "error", reason: `${o.path} is outside the workspace` };
    await mustResolveInside(ctx.workspace, abs, o.path);
    const real = await realpath(abs).catch(() => undefined);
    const wantExists = o.exists ?? true;
    const info = real === undefined ? undefined : await stat(real);
    const isFile = info?.isFile() === true;
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
    if (info!.size > READ_CAP_BYTES && (o.contains !== undefined || o.matches !== undefined)) {
      return {
        state: "complete",
        score: 0,
        passed: false,
        reason: `${o.path} is ${info!.size} bytes, more than the 64 MiB the file scorer reads`,
      };
    }
    // An existence check reads nothing: a sparse file of many GB made in a second would fail the read.
    const text = o.contains !== undefined || o.matches !== undefined ? await readFile(real!, "utf8") : "";
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
