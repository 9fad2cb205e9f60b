/**
 * What every part of the planner shares: where problems go (all of them, reported together before
 * anything runs), notes, how paths are shown, where resolved targets and scorers are written, and
 * the checks the run's preflight answers.
 */
import path from "node:path";
import { type ConfigProblem, ProblemList } from "../../errors.js";
import type { ScorerSpec, TargetSpec } from "../types.js";
import { filePath, keyPath, lineOf, mayFollowFromPruned, type PathKey, type YamlSource } from "../yaml.js";
import type { PlanChecks } from "./checks.js";

/** Where a resolved value is written, for problems found about it later. */
export interface Origin {
  src: YamlSource;
  at: PathKey[];
}

export class PlanContext {
  readonly problems = new ProblemList();
  /** Warnings that do not stop a run (an old spelling), shown by validate and run as notes. */
  readonly notes = new Set<string>();
  /** Advice for the eval file's author, shown by validate only (a better scorer for a command). */
  readonly tips = new Map<string, string>();
  readonly targetOrigins = new WeakMap<TargetSpec, Origin>();
  readonly scorerOrigins = new WeakMap<ScorerSpec, Origin>();
  /** Where each resolved environment is written (a test's `environment:`, or its file's). */
  readonly environmentOrigins = new WeakMap<object, Origin>();

  constructor(
    readonly cwd: string,
    readonly projectRoot: string,
    readonly checks: PlanChecks = {},
  ) {}

  display(abs: string): string {
    const rel = path.relative(this.cwd, abs);
    return rel && !rel.startsWith("..") ? rel : abs;
  }

  /** The hint for a path that is not there: where relative paths of the file in `dir` start. */
  relativeHint(dir: string): string {
    return `paths are relative to ${this.display(dir) || "."}/`;
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
