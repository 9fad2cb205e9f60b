/**
 * report.html for thousands of cases stays small: above COMPACT_ABOVE cases, a case that needs no
 * review is one line linking its files in the bundle; cases to review keep their evidence inline.
 */
import { describe, expect, it } from "vitest";
import { COMPACT_ABOVE, COMPACT_ABOVE_ATTEMPTS, renderHtml } from "../../src/report/html.js";
import type { CaseView } from "../../src/report/view.js";
import { diffOf, evidence, kase, logOf, run, view } from "./views.js";

function suite(n: number, attempts = 3): CaseView[] {
  const cases: CaseView[] = [];
  for (let i = 0; i < n; i++) {
    const testId = `case-${i}`;
    const dir = `${testId}--a`;
    const failing = i % 100 === 7;
    const runs = Array.from({ length: attempts }, (_, k) => k + 1).map((a) => {
      const rdir = `${dir}/run-${a}`;
      const status = failing ? "failed" : "passed";
      return run(dir, a, status, {
        evidence: evidence({
          ...diffOf(rdir, "src/cart.ts", `-old ${i}\n+NEW-${i}-${a}\n${"+line\n".repeat(40)}`),
          ...logOf(rdir, `agent log ${i} ${a}\n`.repeat(30)),
        }),
      });
    });
    cases.push(kase({ testId, target: "a", runs }));
  }
  return cases;
}

describe("report.html at scale", () => {
  it("2,000 cases: passing cases are one line each, failing ones keep their diffs inline", () => {
    const html = renderHtml(view({ cases: suite(2000), gate: { verdict: "fail" } }));
    // ~200 bytes per passing case line, evidence only for the 20 failing cases.
    expect(html.length).toBeLessThan(2_000_000);
    expect(html).toContain("+NEW-7-1"); // a failing case's diff, inline
    expect(html).not.toContain("+NEW-8-1"); // a passing case's diff, only linked
    expect(html).toContain('<p class="case" id="case-8">');
    expect(html).toContain('<a href="case-8--a/run-1/diff.patch">diff</a>');
    expect(html).toContain('<a href="case-8--a/">files</a>');
  });

  it(`up to ${COMPACT_ABOVE} cases every case keeps its evidence`, () => {
    const html = renderHtml(view({ cases: suite(COMPACT_ABOVE), gate: { verdict: "fail" } }));
    expect(html).toContain("+NEW-8-1");
    expect(html).not.toContain('<p class="case"');
  });

  it(`a few cases of more than ${COMPACT_ABOVE_ATTEMPTS} attempts in all are compact too`, () => {
    const attempts = Math.ceil((COMPACT_ABOVE_ATTEMPTS + 1) / 10);
    const html = renderHtml(view({ cases: suite(10, attempts), gate: { verdict: "fail" } }));
    expect(html).toContain("+NEW-7-1"); // the failing case keeps its evidence inline
    expect(html).not.toContain("+NEW-8-1");
    expect(html).toContain('<p class="case" id="case-8">');
    const under = renderHtml(
      view({ cases: suite(10, Math.floor(COMPACT_ABOVE_ATTEMPTS / 10)), gate: { verdict: "fail" } }),
    );
    expect(under).toContain("+NEW-8-1");
  });
});
