/** How numbers read in reports: rates, deltas, tokens, money, durations. Plain text, no markup. */

import { formatDuration } from "../config/duration.js";
// Reports count tokens as the budget does (input + cached + output): one meaning of "tokens".
import { totalTokens } from "../run/usage.js";
import type { ReportView, TargetNumbers, UsageRollup } from "./view.js";

export { totalTokens };

const MINUS = "−";

// One formatter for every count: `toLocaleString` builds a new one per call, and a 2,000-case
// comment formats tens of thousands of counts while it fits itself into its budget.
const COUNT = new Intl.NumberFormat("en-US");

/** 1234 → "1,234". */
export function count(n: number): string {
  return COUNT.format(n);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

export function percent(rate: number | null): string {
  return rate === null ? "—" : `${Math.round(rate * 100)} %`;
}

/** A change of a rate in percentage points: "+5 pp", "−14 pp", "±0 pp". */
export function pointsDelta(d: number): string {
  const pp = Math.round(d * 100);
  return pp === 0 ? "±0 pp" : `${pp > 0 ? "+" : MINUS}${Math.abs(pp)} pp`;
}

/** A change of a count: "+2", "−2"; empty when nothing changed. */
export function countDelta(d: number): string {
  return d === 0 ? "" : `${d > 0 ? "+" : MINUS}${count(Math.abs(d))}`;
}

export function tokens(n: number | null): string {
  if (n === null) return "—";
  if (n >= 999_500) return `${(n / 1_000_000).toFixed(1)} M`;
  if (n >= 1000) return `${Math.round(n / 1000)} k`;
  return String(n);
}

/** A change of a token count: "+12 k", "−1.2 M", "±0". */
export function tokensDelta(d: number): string {
  const shown = tokens(Math.abs(d));
  return shown === "0" ? "±0" : `${d > 0 ? "+" : MINUS}${shown}`;
}

export function usd(n: number | null): string {
  if (n === null) return "—";
  if (n > 0 && n < 0.01) return "<$0.01";
  return n >= 1000 ? `$${count(Math.round(n))}` : `$${n.toFixed(2)}`;
}

export function usdDelta(d: number): string {
  const cents = Math.round(d * 100);
  return cents === 0 ? "±$0.00" : `${cents > 0 ? "+" : MINUS}$${(Math.abs(cents) / 100).toFixed(2)}`;
}

export function duration(ms: number | null): string {
  return ms === null || !Number.isFinite(ms) ? "—" : formatDuration(ms);
}

export function shortSha(sha: string | null | undefined): string | null {
  return sha ? sha.slice(0, 7) : null;
}

/** Whether a rollup misses some attempts (its totals are a lower bound). */
export function partial(u: UsageRollup | null): boolean {
  return Boolean(u && (u.attemptsWithoutUsage ?? 0) > 0);
}

const POLICY: Record<string, (t: number | null) => string> = {
  all_attempts_successful: () => "all attempts successful",
  any_attempt_successful: () => "any attempt successful",
  attempt_success_rate_at_least: (t) => `attempt success rate ≥ ${percent(t ?? 1)}`,
  mean_pass_rate_at_least: (t) => `mean pass rate ≥ ${percent(t ?? 1)}`,
};

export function policyText(p: { name: string; threshold: number | null }): string {
  return POLICY[p.name]?.(p.threshold) ?? p.name;
}

/** "2026-11-22 09:14 UTC". */
export function utcMinute(d: Date): string {
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** " (+2)" after a number, or nothing when there is no change to show. */
export const paren = (d: string): string => (d ? ` (${d})` : "");

/**
 * Whether no attempt of a rollup reported usage (a `noop` or `reference` target, an agent without
 * the output contract): its "$0.00 (±$0.00)" and "0 (±0)" would be noise, not figures.
 */
export function withoutUsage(u: UsageRollup | null): boolean {
  if (!u) return true;
  const { attempts, attemptsWithoutUsage } = u;
  return attempts !== null && attempts > 0 && (attemptsWithoutUsage ?? 0) >= attempts;
}

/** A cost, "≥ " in front when some attempts reported none (the total is a lower bound). */
export function costOf(u: UsageRollup | null): string {
  if (!u || u.costUsd === null || withoutUsage(u)) return "—";
  return `${partial(u) ? "≥ " : ""}${usd(u.costUsd)}`;
}

/** A token total with its change against the base, "≥ " in front when it is a lower bound. */
export function tokensCell(u: UsageRollup | null, base: UsageRollup | null): string {
  if (withoutUsage(u)) return "—";
  const n = totalTokens(u);
  const b = withoutUsage(base) ? null : totalTokens(base);
  return `${partial(u) && n !== null ? "≥ " : ""}${tokens(n)}${n !== null && b !== null ? paren(tokensDelta(n - b)) : ""}`;
}

/** The cells of a target's row, each with its change against the same target of the baseline. */
export interface TargetCells {
  passed: string;
  failed: string;
  flaky: string;
  errored: string;
  rate: string;
  cost: string;
  tokens: string;
}

/**
 * The baseline's per-target numbers by name, when this run's can be compared with them: not when
 * `--test` or `--tag` chose some of the cases, or in one shard, where a target ran fewer cases than
 * in the base by choice. (`--target` leaves each chosen target whole.)
 */
export function comparableBaseTargets(view: ReportView): Map<string, TargetNumbers> | null {
  const f = view.run.filters;
  const targets = view.comparison?.targets;
  if (!targets || f.tests.length > 0 || f.tags.length > 0 || view.run.shard) return null;
  return new Map(targets.map((t) => [t.name, t]));
}

/** One target's numbers against the baseline's (`base` undefined: no baseline, or a new target). */
export function targetCells(t: TargetNumbers, base: TargetNumbers | undefined): TargetCells {
  const n = (k: "passed" | "failed" | "flaky" | "errored") =>
    `${count(t[k])}${base ? paren(countDelta(t[k] - base[k])) : ""}`;
  const rate =
    percent(t.attemptSuccessRate) +
    (base && t.attemptSuccessRate !== null && base.attemptSuccessRate !== null
      ? paren(pointsDelta(t.attemptSuccessRate - base.attemptSuccessRate))
      : "");
  const baseCost = withoutUsage(base?.usage ?? null) ? null : base?.usage?.costUsd;
  const cost =
    costOf(t.usage) +
    (t.usage?.costUsd != null && baseCost != null && !withoutUsage(t.usage)
      ? paren(usdDelta(t.usage.costUsd - baseCost))
      : "");
  return {
    passed: n("passed"),
    failed: n("failed"),
    flaky: n("flaky"),
    errored: n("errored"),
    rate,
    cost,
    tokens: tokensCell(t.usage, base?.usage ?? null),
  };
}

/**
 * What a shard says when it is done: its slice's failures so far, and that the merge decides. A
 * shard never says the gate passed or failed (issue 19): it exits 0 whatever its slice holds.
 */
export function shardFinished(
  shard: { index: number; total: number },
  counts: { cases: number; failed: number; errored: number },
): string {
  return `shard ${shard.index}/${shard.total} finished: ${counts.failed + counts.errored} of ${counts.cases} cases failing so far; the merge job decides the gate`;
}
