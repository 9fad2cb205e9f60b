/** The scorer registry. */
import type { ScorerSpec } from "../config/types.js";
import { astGrepScorer } from "./ast-grep.js";
import { commandScorer } from "./command.js";
import { diffScorer } from "./diff.js";
import { fileScorer } from "./file.js";
import { llmJudgeScorer } from "./llm-judge.js";
import { scriptScorer } from "./script.js";
import { testsScorer } from "./tests.js";
import type { Scorer } from "./types.js";

const SCORERS: Record<ScorerSpec["type"], Scorer> = {
  command: commandScorer,
  script: scriptScorer,
  file: fileScorer,
  diff: diffScorer,
  tests: testsScorer,
  "ast-grep": astGrepScorer,
  "llm-judge": llmJudgeScorer,
};

export function scorerFor(type: ScorerSpec["type"]): Scorer {
  return SCORERS[type];
}

export type { Scorer, ScorerContext, ScorerResult } from "./types.js";
