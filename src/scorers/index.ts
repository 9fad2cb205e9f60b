/** The scorer registry. */
import type { ScorerSpec } from "../config/types.js";
import { commandScorer } from "./command.js";
import { diffScorer } from "./diff.js";
import { fileScorer } from "./file.js";
import { scriptScorer } from "./script.js";
import type { Scorer } from "./types.js";

const SCORERS: Record<ScorerSpec["type"], Scorer> = {
  command: commandScorer,
  script: scriptScorer,
  file: fileScorer,
  diff: diffScorer,
};

export function scorerFor(type: ScorerSpec["type"]): Scorer {
  return SCORERS[type];
}

export type { Scorer, ScorerContext, ScorerResult } from "./types.js";
