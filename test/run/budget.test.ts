import { describe, expect, it } from "vitest";
import { spendingOverrun } from "../../src/run/budget.js";

describe("spendingOverrun", () => {
  it("is nothing within the budget, and names the limit and what was spent beyond it", () => {
    expect(spendingOverrun({ costUsd: 1, tokens: 100 }, { costUsd: 1, tokens: 100 })).toBeUndefined();
    expect(spendingOverrun({ costUsd: 1 }, { costUsd: 1.2, tokens: 0 })).toBe(
      "the cost budget of $1.00 was exceeded ($1.20 spent)",
    );
    expect(spendingOverrun({ tokens: 2000 }, { costUsd: 0, tokens: 2500 })).toBe(
      "the token budget of 2000 was exceeded (2500 used)",
    );
  });

  it("shows as many decimals as it takes to tell the limit from the amount spent", () => {
    expect(spendingOverrun({ costUsd: 0.03 }, { costUsd: 0.0375, tokens: 0 })).toBe(
      "the cost budget of $0.03 was exceeded ($0.04 spent)",
    );
    expect(spendingOverrun({ costUsd: 0.001 }, { costUsd: 0.0025, tokens: 0 })).toBe(
      "the cost budget of $0.001 was exceeded ($0.003 spent)",
    );
    expect(spendingOverrun({ costUsd: 10 }, { costUsd: 10.004, tokens: 0 })).toBe(
      "the cost budget of $10.00 was exceeded ($10.004 spent)",
    );
  });
});
