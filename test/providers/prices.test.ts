import { describe, expect, it } from "vitest";
import { costOf, tablePrice, withCost } from "../../src/providers/prices.js";
import { usage } from "../helpers.js";

describe("prices", () => {
  it("finds models with a provider prefix or a date suffix, and nothing for unknown models", () => {
    expect(tablePrice("claude-sonnet-4-5-20250929")).toEqual(tablePrice("claude-sonnet-4-5"));
    expect(tablePrice("models/gemini-2.5-pro")?.inputPerMtok).toBe(1.25);
    expect(tablePrice("openai/gpt-5")?.outputPerMtok).toBe(10);
    expect(tablePrice("gpt-5-2025-08-07")?.outputPerMtok).toBe(10);
    expect(tablePrice("my-local-llama")).toBeUndefined();
    expect(tablePrice(null)).toBeUndefined();
  });

  it("prices uncached, cached and output tokens separately", () => {
    const price = { inputPerMtok: 2, cachedPerMtok: 0.5, outputPerMtok: 8 };
    expect(
      costOf(usage({ inputTokens: 1_000_000, cachedTokens: 2_000_000, outputTokens: 500_000 }), price),
    ).toBe(7);
    expect(costOf(usage({}), price)).toBeNull();
  });

  it("keeps the agent's own cost, else prices from the target or the table, else leaves it unknown", () => {
    expect(withCost(usage({ costUsd: 0.5, inputTokens: 10, model: "gpt-5" }))).toMatchObject({
      costUsd: 0.5,
      costSource: "agent",
    });
    expect(withCost(usage({ inputTokens: 1_000_000, model: "gpt-5" }))).toMatchObject({
      costUsd: 1.25,
      costSource: "price_table",
    });
    // Float noise in an agent's figure is rounded to the nano-dollar, as rollups are.
    expect(withCost(usage({ costUsd: 0.018584999999999997 })).costUsd).toBe(0.018585);
    const own = { inputPerMtok: 1, cachedPerMtok: 1, outputPerMtok: 1 };
    expect(withCost(usage({ inputTokens: 1_000_000, model: "gpt-5" }), own).costUsd).toBe(1);
    expect(withCost(usage({ inputTokens: 1_000_000, model: "house-model" }))).toMatchObject({
      costUsd: null,
      costSource: null,
    });
  });
});
