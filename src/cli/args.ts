/**
 * How the CLI spells its options in the core's messages (`--out DIR`); the commands pass it in. The
 * values themselves are parsed by the shared parsers of config/options.ts.
 */
import type { OptionNaming } from "../config/options.js";
import type { ExamRequest } from "../pipeline/exam.js";

export const CLI_NAMING: OptionNaming = {
  given: (option, value) => `--${option} ${value}`,
  option: (option) => `--${option}`,
  filters: "the --target / --test / --tag filters",
  roomOnDisk: "give --out and --work-dir folders on a disk with room",
};

/** `--exam-from REF`: the exam read from REF as the action reads a pull request's base (docs/exam.md). */
export function examRequest(ref: string): ExamRequest {
  return {
    ref,
    fix: "Name a commit or ref the repository has, or fetch it first (git fetch origin <ref>).",
  };
}
