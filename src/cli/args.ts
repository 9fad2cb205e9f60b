/**
 * How the CLI spells its options in the core's messages (`--out DIR`); the commands pass it in. The
 * values themselves are parsed by the shared parsers of config/options.ts.
 */
import type { OptionNaming } from "../config/options.js";
import type { RepeatSetting } from "../config/types.js";
import type { ExamRequest, OpenExam } from "../pipeline/exam.js";
import type { RunOptions } from "../pipeline/run.js";

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

/** The flags that choose a run's cases and size it: `run` and `calibrate` take them alike. */
export interface SelectionFlags {
  target?: string[];
  test?: string[];
  tag?: string[];
  repeat?: RepeatSetting;
  concurrency?: number;
}

/** The flags of one run as the CLI gives them: the selection, where it writes, what it compares with. */
export interface RunOptionFlags extends SelectionFlags {
  out?: string;
  workDir?: string;
  keepWorkspaces?: boolean;
  baseline?: string[];
  shard?: RunOptions["shard"];
}

/** The run options of a run the CLI starts (`evalgate run`, each run of `evalgate calibrate`). */
export function cliRunOptions(
  paths: string[],
  o: RunOptionFlags,
  at: { cwd: string; projectRoot: string; exam?: OpenExam },
): RunOptions {
  return {
    cwd: at.cwd,
    projectRoot: at.projectRoot,
    ...(at.exam ? { exam: at.exam } : {}),
    paths,
    targets: o.target,
    tests: o.test,
    tags: o.tag,
    repeat: o.repeat,
    concurrency: o.concurrency,
    out: o.out,
    workDir: o.workDir,
    keepWorkspaces: Boolean(o.keepWorkspaces),
    baselines: o.baseline ?? [],
    shard: o.shard,
    naming: CLI_NAMING,
  };
}
