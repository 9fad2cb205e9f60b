/**
 * User mistakes in eval files and command lines, and how every error ends a command or a step. A
 * ConfigError or UsageError is shown as one clear message and exits 2; anything else that is thrown
 * is a bug in evalgate (exit 3). Both edges (the CLI and the action) map errors through
 * {@link failureOf}, so a mistake reads and exits the same in a terminal and in a workflow.
 */
import path from "node:path";

export interface ConfigProblem {
  /** The file, as the user would type it (relative to the working folder where possible). */
  file?: string;
  /** 1-based line of the offending key or value, when known. */
  line?: number;
  /** Dotted path of the key, e.g. `tests[2].scorers[0].weight`. */
  key?: string;
  message: string;
  /** What to do about it. */
  hint?: string;
}

export function formatProblem(p: ConfigProblem): string {
  const where = p.file ? `${p.file}${p.line ? `:${p.line}` : ""}` : "";
  const key = p.key ? `${p.key}: ` : "";
  const head = where ? `${where}: ${key}${p.message}` : `${key}${p.message}`;
  return p.hint ? `${head}\n    hint: ${p.hint}` : head;
}

export class ConfigError extends Error {
  readonly problems: ConfigProblem[];

  constructor(problems: ConfigProblem | ConfigProblem[]) {
    const list = Array.isArray(problems) ? problems : [problems];
    super(list.map(formatProblem).join("\n"));
    this.name = "ConfigError";
    this.problems = list;
  }
}

/** Exit status of the CLI and the action: the gate's verdict, a user's mistake, or a bug. */
export const EXIT = { pass: 0, fail: 1, usage: 2, internal: 3 } as const;
export type ExitStatus = (typeof EXIT)[keyof typeof EXIT];

/** A wrong command line (unknown flag value, bad --shard). Exits 2 like a ConfigError. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Collects problems so that validation reports every mistake of every file at once. */
export class ProblemList {
  readonly items: ConfigProblem[] = [];
  private readonly seen = new Set<string>();

  /** Adds a problem once: a file-level mistake found again for every test is one problem. */
  add(p: ConfigProblem): void {
    const key = formatProblem(p);
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.items.push(p);
  }

  get empty(): boolean {
    return this.items.length === 0;
  }

  throwIfAny(): void {
    if (!this.empty) throw new ConfigError(this.items);
  }
}

/** Levenshtein distance, for "did you mean" hints on unknown keys and names. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** Errors of a full disk or quota: the machine's state, not a bug, not the eval files. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** How an error ends a command or an action step: its exit status and the one message shown. */
export interface Failure {
  status: ExitStatus;
  /** Starts with `evalgate: `; may span lines. */
  message: string;
}

export interface DebugHelp {
  /** The user asked for details: a bug's stack is shown. */
  enabled: boolean;
  /** How to ask for them on this edge, said after a bug when they were not asked for. */
  how: string;
}

/**
 * The single error → exit-status mapping of both edges: the user's mistakes (eval files, options,
 * a full disk) exit 2 with what to fix; anything else is a bug and exits 3, saying so.
 */
export function failureOf(error: unknown, debug: DebugHelp): Failure {
  if (error instanceof ConfigError) {
    const n = error.problems.length;
    const lines = error.message.split("\n").map((line) => `  ${line}`);
    return {
      status: EXIT.usage,
      message: `evalgate: ${n} problem${n === 1 ? "" : "s"} in the eval files:\n${lines.join("\n")}`,
    };
  }
  if (error instanceof UsageError) return { status: EXIT.usage, message: `evalgate: ${error.message}` };
  if (isDiskFull(error)) {
    // The machine's state, not a bug: exit 2 like the other problems the user must fix first.
    const file = (error as NodeJS.ErrnoException).path;
    return {
      status: EXIT.usage,
      message: `evalgate: no space left on the disk${file ? ` for ${path.dirname(file)}` : ""}: free some space, or write to a folder on a disk with room`,
    };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  return {
    status: EXIT.internal,
    message: `evalgate: internal error: ${e.message}\n  This is a bug in evalgate; the bundle written so far was kept.${debug.enabled ? `\n${e.stack}` : ` ${debug.how}`}`,
  };
}
