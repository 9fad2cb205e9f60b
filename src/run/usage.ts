/**
 * Usage rollups: what the attempts of a case, a target or a run used, summed. A value is null when
 * no attempt reported it (never 0 for "unknown"); `attempts` counts the attempts whose usage was
 * summed and `attemptsWithoutUsage` those whose agent ran but reported none, so a reader can tell a
 * partial sum from a complete one.
 */
import { roundUsd } from "../providers/prices.js";
import type { Usage } from "../providers/types.js";
import type { AttemptResult } from "./types.js";

export interface UsageTotals {
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  costUsd: number | null;
  attempts: number;
  attemptsWithoutUsage: number;
  /** The agent CLI versions and models the attempts reported, distinct and sorted (drift shows as two). */
  agentVersions: string[];
  models: string[];
}

const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])].sort();

/** True when an attempt's usage holds at least one token count or a cost. */
export function hasUsage(u: Usage | undefined): u is Usage {
  return (
    u !== undefined &&
    (u.inputTokens !== null || u.outputTokens !== null || u.cachedTokens !== null || u.costUsd !== null)
  );
}

const add = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : a + b);

const addCost = (a: number | null, b: number | null): number | null => {
  const sum = add(a, b);
  return sum === null ? null : roundUsd(sum);
};

/** The rollup of a case's tries (retries included: they were paid for). Null when no agent ran. */
export function totalsOfAttempts(tries: readonly AttemptResult[]): UsageTotals | null {
  const ran = tries.filter((t) => t.agent !== undefined);
  if (ran.length === 0) return null;
  const totals: UsageTotals = {
    inputTokens: null,
    outputTokens: null,
    cachedTokens: null,
    costUsd: null,
    attempts: 0,
    attemptsWithoutUsage: 0,
    agentVersions: [],
    models: [],
  };
  for (const t of ran) {
    if (t.usage?.agentVersion) totals.agentVersions = union(totals.agentVersions, [t.usage.agentVersion]);
    if (t.usage?.model) totals.models = union(totals.models, [t.usage.model]);
    if (!hasUsage(t.usage)) {
      totals.attemptsWithoutUsage++;
      continue;
    }
    totals.attempts++;
    totals.inputTokens = add(totals.inputTokens, t.usage.inputTokens);
    totals.outputTokens = add(totals.outputTokens, t.usage.outputTokens);
    totals.cachedTokens = add(totals.cachedTokens, t.usage.cachedTokens);
    totals.costUsd = addCost(totals.costUsd, t.usage.costUsd);
  }
  return totals;
}

/** Sums rollups (cases → target → run). Null when every part is null. */
export function sumTotals(parts: readonly (UsageTotals | null | undefined)[]): UsageTotals | null {
  let out: UsageTotals | null = null;
  for (const p of parts) {
    if (!p) continue;
    out = out
      ? {
          inputTokens: add(out.inputTokens, p.inputTokens),
          outputTokens: add(out.outputTokens, p.outputTokens),
          cachedTokens: add(out.cachedTokens, p.cachedTokens),
          costUsd: addCost(out.costUsd, p.costUsd),
          attempts: out.attempts + p.attempts,
          attemptsWithoutUsage: out.attemptsWithoutUsage + p.attemptsWithoutUsage,
          agentVersions: union(out.agentVersions, p.agentVersions),
          models: union(out.models, p.models),
        }
      : { ...p };
  }
  return out;
}

/** All tokens the model processed (input + cached + output), or null when none was reported. */
export function totalTokens(
  t: Pick<UsageTotals, "inputTokens" | "outputTokens" | "cachedTokens"> | null,
): number | null {
  if (!t) return null;
  const parts = [t.inputTokens, t.outputTokens, t.cachedTokens].filter((x): x is number => x !== null);
  return parts.length > 0 ? parts.reduce((a, b) => a + b, 0) : null;
}
