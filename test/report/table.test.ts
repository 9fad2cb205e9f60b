/** The console's table of cases, from records that may be damaged. */
import { describe, expect, it } from "vitest";
import { renderCaseTable } from "../../src/report/table.js";
import type { CaseView } from "../../src/report/view.js";

const row = (over: Partial<Record<keyof CaseView, unknown>>): CaseView =>
  ({
    suite: "s",
    testId: "t",
    target: "a",
    verdict: "pass",
    classification: "stable_pass",
    flaky: false,
    attempts: { planned: 1, counted: 1, passed: 1, failed: 0, errored: 0 },
    successRate: 1,
    change: null,
    ...over,
  }) as unknown as CaseView;

describe("renderCaseTable", () => {
  it("renders known verdicts", () => {
    expect(renderCaseTable([row({})])).toContain("✓ pass   s/t");
  });

  it("shows a verdict it does not know as not passing instead of crashing", () => {
    const out = renderCaseTable([
      row({ verdict: "***", classification: "stable_***" }),
      row({ testId: "u", verdict: undefined, attempts: undefined, successRate: "***" }),
    ]);
    const lines = out.split("\n");
    expect(lines[1]).toMatch(/^! \*\*\* +s\/t /);
    expect(lines[2]).toMatch(/^! undefined +s\/u +a +— +—/);
    expect(out).not.toContain("✓");
  });
});
