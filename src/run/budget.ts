/**
 * Budgets per root eval file: cost, tokens and wall-clock duration. Once a limit is exceeded, no
 * new attempt of that eval file starts.
 */
import { formatDuration } from "../config/duration.js";
import type { Budget, EvalRoot } from "../config/types.js";
import type { AttemptResult } from "./types.js";
import { totalTokens, type UsageTotals } from "./usage.js";

interface Spent {
  costUsd: number;
  tokens: number;
  /** Attempts that used an agent but could not say what it cost. */
  unknownCost: number;
}

/** Tokens an attempt used: input + output + cached (all tokens the model processed). */
export function attemptTokens(r: AttemptResult): number | null {
  return r.usage ? totalTokens(r.usage) : null;
}

/**
 * Why spending `spent` breaks the cost or token limit of `budget`, or undefined. The scheduler asks
 * after each attempt; the run gate asks again over the bundle's usage rollups, so that shards merged
 * into one bundle are held to the budget of the whole run.
 */
export function spendingOverrun(
  budget: Budget,
  spent: { costUsd: number; tokens: number },
): string | undefined {
  if (budget.costUsd !== undefined && spent.costUsd > budget.costUsd) {
    const [limit, used] = dollars(budget.costUsd, spent.costUsd);
    return `the cost budget of ${limit} was exceeded (${used} spent)`;
  }
  if (budget.tokens !== undefined && spent.tokens > budget.tokens) {
    return `the token budget of ${budget.tokens} was exceeded (${spent.tokens} used)`;
  }
  return undefined;
}

/**
 * A limit and the larger amount spent, in dollars with cents, or with as many more decimals (up to
 * six) as it takes to tell them apart: a budget of $0.001 is not "$0.00 exceeded ($0.00 spent)".
 */
export function dollars(limit: number, spent: number): [string, string] {
  const at = (n: number, d: number) => {
    const s = n.toFixed(d);
    return `$${d > 2 ? s.replace(/(\.\d\d\d*?)0+$/, "$1") : s}`;
  };
  let d = 2;
  while (d < 6 && at(limit, d) === at(spent, d)) d++;
  return [at(limit, d), at(spent, d)];
}

/** Spending of a usage rollup, for spendingOverrun (unknown counts as nothing spent). */
export function spentOf(t: UsageTotals | null): { costUsd: number; tokens: number } {
  return { costUsd: t?.costUsd ?? 0, tokens: totalTokens(t) ?? 0 };
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
    const overrun = spendingOverrun(b, s);
    if (overrun) {
      this.stopped.set(root, overrun);
    } else if (b.durationMs !== undefined && this.now() - this.started >= b.durationMs) {
      this.stopped.set(root, `the duration budget of ${formatDuration(b.durationMs)} ran out`);
    }
  }
}
