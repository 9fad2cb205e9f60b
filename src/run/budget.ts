/**
 * Budgets per root eval file: cost, tokens and wall-clock duration. Once a limit is exceeded, no
 * new attempt of that eval file starts.
 */
import { formatDuration } from "../config/duration.js";
import type { Budget, EvalRoot } from "../config/types.js";
import type { AttemptResult } from "./types.js";

interface Spent {
  costUsd: number;
  tokens: number;
  /** Attempts that used an agent but could not say what it cost. */
  unknownCost: number;
}

/** Tokens an attempt used: input + output + cached (all tokens the model processed). */
export function attemptTokens(r: AttemptResult): number | null {
  const u = r.usage;
  if (!u) return null;
  const parts = [u.inputTokens, u.outputTokens, u.cachedTokens].filter(
    (x): x is number => typeof x === "number",
  );
  return parts.length > 0 ? parts.reduce((a, b) => a + b, 0) : null;
}

export class BudgetTracker {
  private readonly budgets = new Map<string, Budget>();
  private readonly spent = new Map<string, Spent>();
  private readonly stopped = new Map<string, string>();
  private readonly started: number;

  constructor(
    roots: readonly EvalRoot[],
    private readonly now: () => number,
  ) {
    this.started = now();
    for (const r of roots) {
      this.budgets.set(r.evalPath, r.budget);
      this.spent.set(r.evalPath, { costUsd: 0, tokens: 0, unknownCost: 0 });
    }
  }

  durationOf(root: string): number | undefined {
    return this.budgets.get(root)?.durationMs;
  }

  /** Milliseconds left of the duration budget, or undefined when there is none. */
  timeLeftMs(root: string): number | undefined {
    const d = this.durationOf(root);
    return d === undefined ? undefined : d - (this.now() - this.started);
  }

  record(root: string, r: AttemptResult): void {
    const s = this.spent.get(root);
    if (!s) return;
    if (typeof r.usage?.costUsd === "number") s.costUsd += r.usage.costUsd;
    else if (r.agent) s.unknownCost++;
    s.tokens += attemptTokens(r) ?? 0;
    this.check(root);
  }

  /** Why new attempts of `root` must not start, or undefined while within budget. */
  stopReason(root: string): string | undefined {
    this.check(root);
    return this.stopped.get(root);
  }

  stops(): Map<string, string> {
    return new Map(this.stopped);
  }

  private check(root: string): void {
    if (this.stopped.has(root)) return;
    const b = this.budgets.get(root);
    const s = this.spent.get(root);
    if (!b || !s) return;
    if (b.costUsd !== undefined && s.costUsd > b.costUsd) {
      this.stopped.set(
        root,
        `the cost budget of $${b.costUsd.toFixed(2)} was exceeded ($${s.costUsd.toFixed(2)} spent)`,
      );
    } else if (b.tokens !== undefined && s.tokens > b.tokens) {
      this.stopped.set(root, `the token budget of ${b.tokens} was exceeded (${s.tokens} used)`);
    } else if (b.durationMs !== undefined && this.now() - this.started >= b.durationMs) {
      this.stopped.set(root, `the duration budget of ${formatDuration(b.durationMs)} ran out`);
    }
  }
}
