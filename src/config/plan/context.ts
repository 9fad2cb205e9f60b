/**
 * What every part of the planner shares: where problems go (all of them, reported together before
 * anything runs), notes, how paths are shown, where resolved targets and scorers are written, and
 * the checks the run's preflight answers.
 */
import path from "node:path";
import { type ConfigProblem, ProblemList } from "../../errors.js";
import { isWithin } from "../../paths.js";
import type { ScorerSpec, TargetSpec } from "../types.js";
import { filePath, keyPath, lineOf, mayFollowFromPruned, type PathKey, type YamlSource } from "../yaml.js";
import type { PlanChecks } from "./checks.js";

/** Where a resolved value is written, for problems found about it later. */
export interface Origin {
  src: YamlSource;
  at: PathKey[];
}

/**
 * The exam side of a plan (config/plan/exam-load.ts): the files of another commit, materialized in
 * `projectRoot`, named with `label` (" at the base commit abc1234"); a path written there that
 * leaves the repository is read where the checkout would read it (`headRoot`).
 */
export interface ExamSide {
  label: string;
  headRoot: string;
}

export class PlanContext {
  readonly problems: ProblemList;
  /** Warnings that do not stop a run (an old spelling), shown by validate and run as notes. */
  readonly notes: Set<string>;
  /** Advice for the eval file's author, shown by validate only (a better scorer for a command). */
  readonly tips: Map<string, string>;
  readonly targetOrigins: WeakMap<TargetSpec, Origin>;
  readonly scorerOrigins: WeakMap<ScorerSpec, Origin>;
  /** Where each resolved environment is written (a test's `environment:`, or its file's). */
  readonly environmentOrigins: WeakMap<object, Origin>;

  constructor(
    readonly cwd: string,
    readonly projectRoot: string,
    readonly checks: PlanChecks = {},
    /** Set on the exam side: it shares the checkout side's problems, notes and origins. */
    readonly exam?: ExamSide & { of: PlanContext },
  ) {
    this.problems = exam?.of.problems ?? new ProblemList();
    this.notes = exam?.of.notes ?? new Set();
    this.tips = exam?.of.tips ?? new Map();
    this.targetOrigins = exam?.of.targetOrigins ?? new WeakMap();
    this.scorerOrigins = exam?.of.scorerOrigins ?? new WeakMap();
    this.environmentOrigins = exam?.of.environmentOrigins ?? new WeakMap();
  }

  /** The context of the exam's files (another commit's, in `root`), reporting into this one. */
  examSide(root: string, side: ExamSide): PlanContext {
    const cwd = path.join(root, path.relative(this.projectRoot, this.cwd));
    return new PlanContext(cwd, root, this.checks, { ...side, of: this });
  }

  private shown(abs: string): string {
    const rel = path.relative(this.cwd, abs);
    return rel && !rel.startsWith("..") ? rel : abs;
  }

  display(abs: string): string {
    const shown = this.shown(abs);
    return this.exam && shown !== abs ? `${shown}${this.exam.label}` : shown;
  }

  /** The hint for a path that is not there: where relative paths of the file in `dir` start. */
  relativeHint(dir: string): string {
    return `paths are relative to ${this.shown(dir) || "."}/${this.exam?.label ?? ""}`;
  }

  /**
   * A path written in a file of folder `dir`, made absolute. On the exam side, a path that leaves
   * the repository is not the exam's: it is read where the checkout's file would read it.
   */
  resolve(dir: string, p: string): string {
    const abs = path.resolve(dir, p);
    if (!this.exam || isWithin(this.projectRoot, abs)) return abs;
    return path.resolve(this.exam.headRoot, path.relative(this.projectRoot, dir), p);
  }

  /** A folder of this side's repository, in the checkout (the exam side's folders map to the checkout's). */
  inCheckout(dir: string): string {
    if (!this.exam || !isWithin(this.projectRoot, dir)) return dir;
    return path.join(this.exam.headRoot, path.relative(this.projectRoot, dir));
  }

  evalPathOf(abs: string): string {
    const rel = path.relative(this.projectRoot, abs);
    return (rel && !rel.startsWith("..") ? rel : abs).split(path.sep).join("/");
  }

  problem(src: YamlSource, at: readonly PathKey[], message: string, hint?: string, key?: string): void {
    const full = key ? [...at, key] : at;
    // Schema errors were reported and the bad parts dropped: a problem that may only be their echo
    // (a weight sum without the dropped scorer) waits for the next validate.
    if (mayFollowFromPruned(src, full)) return;
    const p: ConfigProblem = {
      file: src.display,
      line: lineOf(src, at, key),
      key: keyPath(filePath(src, full)) || undefined,
      message,
    };
    if (hint) p.hint = hint;
    this.problems.add(p);
  }

  /**
   * A key with an old and a new name (`threshold` → `min_rate` / `min_score`): the value under
   * either, a warning for the old one, a problem for both.
   */
  renamed(
    src: YamlSource,
    at: PathKey[],
    holder: Record<string, unknown>,
    old: string,
    now: string,
    meaning: string,
  ): number | undefined {
    const oldValue = holder[old] as number | undefined;
    const newValue = holder[now] as number | undefined;
    if (oldValue !== undefined && newValue !== undefined) {
      this.problem(src, [...at, old], `${old} and ${now} are the same setting`, `keep ${now} only`);
    } else if (oldValue !== undefined) {
      const where = `${src.display}:${lineOf(src, [...at, old]) ?? "?"}`;
      this.notes.add(
        `${where}: ${keyPath(filePath(src, [...at, old]))} is the old name of ${now} (${meaning}); it still works, rename it to ${now}`,
      );
    }
    return newValue ?? oldValue;
  }
}
