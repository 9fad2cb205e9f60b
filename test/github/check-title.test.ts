/** The check run's title and the comment's headline say the same thing first (issue 19 item 4). */
import { describe, expect, it } from "vitest";
import { checkTitle } from "../../src/github/check.js";
import { renderComment } from "../../src/report/comment.js";
import { failingRun, noBaselineRun, passingRun } from "../report/scenarios.js";

describe("the check run's title", () => {
  it.each([
    ["a run with regressions", failingRun],
    ["a passing run", passingRun],
    ["a run without a baseline", noBaselineRun],
  ])("leads with the comment headline's verdict and reason: %s", (_, make) => {
    const view = make();
    const head = renderComment(view, { key: "k", maxChars: 65_536 }).split("\n")[1]!;
    const reason = head.replace(/^## \S+ evalgate — /, "");
    expect(checkTitle(view).startsWith(`${reason} · `)).toBe(true);
  });

  it("puts regressions first, as the headline does", () => {
    expect(checkTitle(failingRun())).toBe(
      "gate failed: 2 regressions, 1 errored case · 6 of 9 cases passed (2 failed, 1 errored, 2 flaky)",
    );
  });
});
