import { describe, expect, it } from "vitest";
import { renderComment } from "../../src/report/comment.js";
import { kase, run, view } from "./views.js";

/** Cases of `tests` on `targets`, one passing attempt each. */
function cases(pairs: [string, string][]) {
  return pairs.map(([testId, target]) =>
    kase({ testId, target, runs: [run(`cases/${testId}-${target}`, 1, "passed")] }),
  );
}

const render = (pairs: [string, string][]) =>
  renderComment(view({ cases: cases(pairs) }), {
    key: "default",
    maxChars: 65_536,
    updatedAt: new Date("2026-11-22T09:14:31Z"),
  });

describe("the comment's run line counts cases as they ran", () => {
  it("a full grid: tests × targets", () => {
    const md = render([
      ["a", "x"],
      ["a", "y"],
      ["b", "x"],
      ["b", "y"],
    ]);
    expect(md).toContain("2 tests × 2 targets × 1 attempt");
  });

  it("tests on only some targets: the cases, not a product that never ran", () => {
    // before: "4 tests × 5 targets" (20) for a run of 11 cases
    const targets = ["t1", "t2", "t3", "t4", "t5"];
    const pairs: [string, string][] = [
      ...targets.map((t): [string, string] => ["a", t]),
      ...targets.map((t): [string, string] => ["b", t]),
      ["c", "t1"],
    ];
    expect(pairs).toHaveLength(11);
    const md = render(pairs);
    expect(md).toContain("11 cases (3 tests on 5 targets) × 1 attempt");
    expect(md).not.toContain("× 5 targets");
  });
});
