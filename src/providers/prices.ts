/**
 * What an attempt cost, when the agent does not say. Claude Code reports its own cost; Codex and
 * Gemini CLI report tokens only, so their cost is computed from this table (USD per million tokens,
 * as the vendors publish them for their APIs) or from a target's `price:`. A model that is not in the
 * table and has no `price:` gets no cost: evalgate never guesses one.
 *
 * `input` is the price of uncached input tokens, `cached` of input tokens read from a prompt cache,
 * `output` of output tokens (reasoning included). Long-context tiers (Gemini 2.5 Pro above 200k
 * prompt tokens) and cache-write surcharges are not modelled: the figure is the short-prompt tier.
 */
import type { Usage } from "./types.js";

export interface Price {
  inputPerMtok: number;
  cachedPerMtok: number;
  outputPerMtok: number;
}

/** What the reference and noop providers use: no model, so nothing (a known zero, not unknown). */
export const NO_MODEL_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cachedTokens: 0,
  costUsd: 0,
  costSource: "agent",
  turns: 0,
  toolCalls: 0,
  model: null,
  agentVersion: null,
});

/** When the table was last checked against the vendors' price pages. */
export const PRICES_CHECKED = "2025-11";

const p = (input: number, cached: number, output: number): Price => ({
  inputPerMtok: input,
  cachedPerMtok: cached,
  outputPerMtok: output,
});

/** Model id (without a date suffix) → price. Documented in docs/agents.md. */
export const PRICE_TABLE: Readonly<Record<string, Price>> = {
  // OpenAI (Codex CLI)
  "gpt-5": p(1.25, 0.125, 10),
  "gpt-5-codex": p(1.25, 0.125, 10),
  "gpt-5.1": p(1.25, 0.125, 10),
  "gpt-5.1-codex": p(1.25, 0.125, 10),
  "gpt-5-mini": p(0.25, 0.025, 2),
  "gpt-5.1-codex-mini": p(0.25, 0.025, 2),
  "gpt-5-nano": p(0.05, 0.005, 0.4),
  "gpt-4.1": p(2, 0.5, 8),
  "gpt-4.1-mini": p(0.4, 0.1, 1.6),
  o3: p(2, 0.5, 8),
  "o4-mini": p(1.1, 0.275, 4.4),
  "codex-mini-latest": p(1.5, 0.375, 6),
  // Google (Gemini CLI)
  "gemini-2.5-pro": p(1.25, 0.125, 10),
  "gemini-2.5-flash": p(0.3, 0.03, 2.5),
  "gemini-2.5-flash-lite": p(0.1, 0.01, 0.4),
  // Anthropic (Claude Code reports its own cost; used only when its result event is missing)
  "claude-opus-4-5": p(5, 0.5, 25),
  "claude-opus-4-1": p(15, 1.5, 75),
  "claude-opus-4": p(15, 1.5, 75),
  "claude-sonnet-4-5": p(3, 0.3, 15),
  "claude-sonnet-4": p(3, 0.3, 15),
  "claude-3-7-sonnet": p(3, 0.3, 15),
  "claude-haiku-4-5": p(1, 0.1, 5),
  "claude-3-5-haiku": p(0.8, 0.08, 4),
};

/** The table's price for a model id, ignoring a provider prefix and a date or version suffix. */
export function tablePrice(model: string | null | undefined): Price | undefined {
  if (!model) return undefined;
  let id = model.trim().toLowerCase();
  id = id.slice(id.lastIndexOf("/") + 1); // "models/gemini-2.5-pro", "openai/gpt-5"
  if (PRICE_TABLE[id]) return PRICE_TABLE[id];
  const undated = id.replace(/-(\d{8}|\d{4}-\d{2}-\d{2}|latest|preview(-[\w-]+)?)$/, "");
  return PRICE_TABLE[undated];
}

/** Cost in USD of the tokens, or null when the token counts are unknown. */
export function costOf(
  tokens: Pick<Usage, "inputTokens" | "outputTokens" | "cachedTokens">,
  price: Price,
): number | null {
  if (tokens.inputTokens === null && tokens.outputTokens === null) return null;
  const usd =
    ((tokens.inputTokens ?? 0) * price.inputPerMtok +
      (tokens.cachedTokens ?? 0) * price.cachedPerMtok +
      (tokens.outputTokens ?? 0) * price.outputPerMtok) /
    1e6;
  return roundUsd(usd);
}

/**
 * Costs are kept to the nano-dollar, so that float noise in an agent's figure (0.018584999999999997)
 * and sums of many attempts (0.1 + 0.2) read as the amounts they are, and a rollup of one attempt
 * equals that attempt.
 */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

/**
 * Completes `usage` with a cost and where it came from: the agent's own figure when it gave one,
 * else the target's `price:`, else the table's price of the model, else null.
 */
export function withCost(usage: Omit<Usage, "costSource">, override?: Price): Usage {
  if (usage.costUsd !== null) return { ...usage, costUsd: roundUsd(usage.costUsd), costSource: "agent" };
  const price = override ?? tablePrice(usage.model);
  const cost = price ? costOf(usage, price) : null;
  return { ...usage, costUsd: cost, costSource: cost === null ? null : "price_table" };
}
