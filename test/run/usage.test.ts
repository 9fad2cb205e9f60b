import { describe, expect, it } from "vitest";
import type { Usage } from "../../src/providers/types.js";
import type { AttemptResult } from "../../src/run/types.js";
import { sumTotals, totalsOfAttempts, totalTokens } from "../../src/run/usage.js";
import { usage } from "../helpers.js";

const attempt = (u?: Partial<Usage>, ran = true): AttemptResult =>
  ({
    status: "passed",
    ...(ran ? { agent: { exitCode: 0, signal: null, timedOut: false, durationMs: 1 } } : {}),
    ...(u ? { usage: usage(u) } : {}),
  }) as AttemptResult;

describe("usage rollups", () => {
  it("sums what was reported and counts the attempts that reported nothing", () => {
    const t = totalsOfAttempts([
      attempt({ inputTokens: 100, outputTokens: 10, costUsd: 0.1 }),
      attempt({ inputTokens: 50, cachedTokens: 5, costUsd: 0.2 }),
      attempt(),
      attempt({ turns: 3 }), // turns alone are not usage
    ]);
    expect(t).toEqual({
      inputTokens: 150,
      outputTokens: 10,
      cachedTokens: 5,
      costUsd: 0.3, // not 0.30000000000000004
      attempts: 2,
      attemptsWithoutUsage: 2,
      agentVersions: [],
      models: [],
    });
    expect(totalTokens(t)).toBe(165);
  });

  it("keeps unknown values null instead of 0", () => {
    expect(totalsOfAttempts([attempt({ inputTokens: 7 })])).toMatchObject({
      outputTokens: null,
      costUsd: null,
    });
    expect(totalsOfAttempts([attempt()])).toMatchObject({
      inputTokens: null,
      attempts: 0,
      attemptsWithoutUsage: 1,
    });
    expect(totalTokens(null)).toBeNull();
  });

  it("is null when no agent ran (cancelled attempts)", () => {
    expect(totalsOfAttempts([attempt(undefined, false)])).toBeNull();
    expect(totalsOfAttempts([])).toBeNull();
  });

  it("sums rollups of cases into targets and runs", () => {
    const a = totalsOfAttempts([attempt({ inputTokens: 1, costUsd: 0.1 })]);
    const b = totalsOfAttempts([attempt({ outputTokens: 2 }), attempt()]);
    expect(sumTotals([a, null, b])).toEqual({
      inputTokens: 1,
      outputTokens: 2,
      cachedTokens: null,
      costUsd: 0.1,
      attempts: 2,
      attemptsWithoutUsage: 1,
      agentVersions: [],
      models: [],
    });
    expect(sumTotals([null, undefined])).toBeNull();
  });
});
