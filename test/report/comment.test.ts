import { describe, expect, it } from "vitest";
import { checkTitle } from "../../src/github/check.js";
import { commentMarker, renderComment } from "../../src/report/comment.js";
import { regressionsOf } from "../../src/report/comment-head.js";
import { renderHtml } from "../../src/report/html.js";
import { renderCaseTable } from "../../src/report/table.js";
import { checkComment, outsideFences } from "./markdown-check.js";
import { failingRun, HOSTILE, hostileRun, noBaselineRun, passingRun } from "./scenarios.js";

const links = {
  run: "https://github.com/acme/shop/actions/runs/1234",
  runLabel: "run #1234",
  artifact: "https://github.com/acme/shop/actions/runs/1234/artifacts/99",
  artifactName: "evalgate-1234",
};
const updatedAt = new Date("2026-11-22T09:14:31Z");

describe("the PR comment", () => {
  it("a failing run against a baseline: regressions, a flaky and an errored case, deltas", async () => {
    const md = renderComment(failingRun(), { key: "default", maxChars: 65_536, links, updatedAt });
    await expect(md).toMatchFileSnapshot("__snapshots__/comment-failing.md");
    expect(md.split("\n")[0]).toBe("<!-- evalgate:comment key=default -->");
    expect(md).toContain("## ❌ evalgate — gate failed: 2 regressions, 1 errored case");
    // Deltas against the base's per-target numbers: claude passed 3 of 4 cases there (2 flaky).
    expect(md).toContain(
      "| claude (sonnet) | 2 (−1) | 2 (+1) | 2 | 0 | 50 % (−25 pp) | \\$0.66 (+\\$0.19) · 229 k (+20 k) |",
    );
    // Tokens too: house-agent used 96 k against the base's 151 k.
    expect(md).toMatch(/^\| house-agent \|.* · 96 k \(−55 k\) \|$/m);
    expect(md).toContain(
      "**9 cases** · 6 passed (−2) · 2 failed (+1) · 2 flaky · 1 errored (+1) — changes vs base `b1c2d3e`",
    );
    expect(md).toContain("**Why the gate failed**");
    expect(md).toMatch(
      /\| ❌ fail \| empty-cart-total \| claude \| 1\/3 · 33 % \| 3\/3 · \*\*regressed\*\* · −67 pp \| flaky, tampered, regressed \|/,
    );
    expect(md).toContain("| ❗ error | setup-crash | house-agent | 0/0 (2 errors) |");
    expect(md).toContain("<details><summary>❌ <b>empty-cart-total</b> · claude");
    expect(md).toContain("    - `cart > empty total`: expected 0, got NaN");
    expect(md).toContain("  - **tampered**: `test/cart.test.ts` (restored before scoring)");
    expect(md).toContain("<details><summary>✅ 4 more cases passed on every attempt</summary>");
    expect(md).toContain("[run #1234](https://github.com/acme/shop/actions/runs/1234)");
    expect(md).not.toContain("Left out");
    const facts = checkComment(md);
    expect(facts.openFence).toBeNull();
    expect(facts.detailsBalanced).toBe(true);
    expect(facts.foreign).toEqual([]);
  });

  it("a passing run is short: the headline, the targets and a collapsed list", async () => {
    const md = renderComment(passingRun(), { key: "default", maxChars: 65_536, updatedAt });
    await expect(md).toMatchFileSnapshot("__snapshots__/comment-passing.md");
    expect(md).toContain("## ✅ evalgate — gate passed");
    expect(md).toContain("<details><summary>✅ all 3 cases passed on every attempt</summary>");
    expect(md).not.toContain("| test | target | attempts | success |");
    expect(md.length).toBeLessThan(2000);
  });

  it("under --target, compares the cost with the same targets of the base, not all of them", () => {
    const v = failingRun();
    v.run.filters.targets = ["claude"];
    v.cases = v.cases.filter((c) => c.target === "claude");
    v.targets = v.targets.filter((t) => t.name === "claude");
    v.usage = v.targets[0]!.usage;
    const md = renderComment(v, { key: "default", maxChars: 65_536, updatedAt });
    // claude cost $0.66 here and $0.47 in the base; the base's house-agent ($0.59) is not in this run.
    expect(md).toContain("\\$0.66 (+\\$0.19 vs base)");
    expect(md).toContain("filtered: `--target claude`");
  });

  it("says why there is no baseline", async () => {
    const md = renderComment(noBaselineRun(), {
      key: "nightly",
      maxChars: 65_536,
      baselineNote: "the base branch has no successful run with an evalgate artifact",
      updatedAt,
    });
    await expect(md).toMatchFileSnapshot("__snapshots__/comment-no-baseline.md");
    expect(md.split("\n")[0]).toBe("<!-- evalgate:comment key=nightly -->");
    expect(md).toContain(
      "_No baseline: the base branch has no successful run with an evalgate artifact. Changes against the base branch are not shown._",
    );
    expect(md).not.toContain("| base | change |");
    const plain = renderComment(noBaselineRun(), { key: "k", maxChars: 65_536 });
    expect(plain).toContain("_No baseline: this run was not compared with a baseline");
  });

  it("renders what an agent printed harmlessly: no HTML, no pings, fences intact", async () => {
    const md = renderComment(hostileRun(), { key: "default", maxChars: 65_536, updatedAt });
    await expect(md).toMatchFileSnapshot("__snapshots__/comment-hostile.md");
    // No raw HTML outside code (inside a fence GitHub shows it as text).
    const prose = outsideFences(md).join("\n");
    expect(prose).not.toMatch(/<img/i);
    expect(prose).not.toMatch(/<script/i);
    expect(prose).not.toMatch(/@octocat/);
    const facts = checkComment(md);
    expect(facts.foreign).toEqual([]);
    expect(facts.mentions).toEqual([]);
    expect(facts.issueRefs).toEqual([]);
    expect(facts.hrefs.filter((h) => h.startsWith("javascript"))).toEqual([]);
    expect(facts.openFence).toBeNull();
    expect(facts.detailsBalanced).toBe(true);
    // The text is still there to read: escaped, not removed.
    expect(facts.text).toContain("@\u200Doctocat <img src=x onerror=alert(1)>");
    // The diff's ``` and ```` lines sit inside a longer fence, so they never close it.
    expect(md).toContain("`````diff\n");
    expect(md).toContain(`+${HOSTILE}\n`);
    // The log tail lost its terminal colours, its bidi override and its NUL.
    expect(md).toContain("red evil\n");
    expect(md).not.toMatch(/[\u001b\u202e\u0000]/);
  });

  it("does not let an agent's bare URLs or GH-123 references autolink", () => {
    const view = hostileRun();
    const planted = "see https://evil.example/x, HTTP://evil.example, www.evil.example and GH-123 or gh-7";
    view.cases[0]!.runs[0]!.message = planted;
    view.cases[0]!.runs[0]!.evidence!.scorers![0]!.reason = planted;
    const md = renderComment(view, { key: "default", maxChars: 65_536, updatedAt });
    const facts = checkComment(md);
    expect(facts.hrefs.filter((h) => h.includes("evil"))).toEqual([]);
    // What GitHub itself autolinks, looked for in the rendered text outside code.
    expect(facts.text).not.toMatch(/\b[a-z][a-z0-9+.-]*:\/\//i);
    expect(facts.text).not.toMatch(/\bwww\./i);
    expect(facts.text).not.toMatch(/\bGH-\d/i);
    // Still readable: only zero-width joiners were added.
    expect(facts.text.replaceAll("\u200D", "")).toContain(planted);
  });

  it("shows no $0.00 (±$0.00) or 0 (±0) for a target whose attempts reported no usage", () => {
    const view = passingRun();
    const none = {
      inputTokens: 0,
      outputTokens: 0,
      cachedTokens: 0,
      costUsd: 0,
      attempts: 9,
      attemptsWithoutUsage: 9,
    };
    view.targets[0]!.usage = { ...none };
    view.comparison!.targets![0]!.usage = { ...none };
    const md = renderComment(view, { key: "k", maxChars: 65_536 });
    const row = md.split("\n").find((l) => l.startsWith("| claude |"))!;
    expect(row).toBe("| claude | 3 | 0 | 0 | 0 | 100 % (±0 pp) | — |");
    expect(md).not.toContain("±\\$0.00");
    // A target that did report usage keeps its figures and deltas.
    const shown = renderComment(passingRun(), { key: "k", maxChars: 65_536 });
    expect(shown).toContain("| claude | 3 | 0 | 0 | 0 | 100 % (±0 pp) | \\$0.36 (±\\$0.00) · 72 k (±0) |");
  });

  it("gives the review table a heading and at most six columns, so it fits a comment's width", () => {
    const md = renderComment(failingRun(), { key: "k", maxChars: 65_536 });
    const lines = md.split("\n");
    const head = lines.findIndex((l) => l.startsWith("| verdict |"));
    expect(lines.slice(head - 2, head + 1)).toEqual([
      "**Cases to review**",
      "",
      "| verdict | test | target | attempts | baseline | flags |",
    ]);
    for (const l of lines.filter((x) => x.startsWith("|---")))
      expect(l.split("|").length - 2).toBeLessThanOrEqual(7);
  });

  it("builds the marker from the key and keeps it a valid HTML comment", () => {
    expect(commentMarker("default")).toBe("<!-- evalgate:comment key=default -->");
    expect(commentMarker("my-suite/claude")).toBe("<!-- evalgate:comment key=my-suite/claude -->");
    expect(commentMarker("a --> b")).toBe("<!-- evalgate:comment key=a_-__b -->");
    expect(commentMarker("x".repeat(500)).length).toBeLessThan(140);
  });

  it("refuses a budget too small for any comment", () => {
    expect(() => renderComment(passingRun(), { key: "k", maxChars: 200 })).toThrow(RangeError);
  });
});

describe("the isolation line", () => {
  it("says plainly when agents ran with less than bubblewrap, and why; nothing under bubblewrap", () => {
    const weak = renderComment(
      {
        ...passingRun(),
        isolation: { level: "none", reason: "bubblewrap cannot run here: bwrap is not installed" },
      },
      { key: "default", maxChars: 65_536 },
    );
    const lines = weak.split("\n");
    // Right under the counts, before anything that may be left out for size.
    const at = lines.findIndex((l) => l.startsWith("⚠️ **Isolation: none**"));
    expect(at).toBeGreaterThan(0);
    expect(lines[at]).toContain("leave processes running");
    expect(lines[at]).toContain("Why: bubblewrap cannot run here: bwrap is not installed.");
    expect(lines[at - 2]).toMatch(/^\*\*\d+ cases?\*\*/);
    checkComment(weak);
    const small = renderComment(
      { ...passingRun(), isolation: { level: "subreaper", reason: "x" } },
      { key: "default", maxChars: 1_000 },
    );
    expect(small).toContain("**Isolation: subreaper**");
    for (const level of ["bwrap", null]) {
      const md = renderComment(
        { ...passingRun(), isolation: { level, reason: null } },
        { key: "k", maxChars: 65_536 },
      );
      expect(md).not.toContain("Isolation");
    }
  });
});

describe("the headline's regression count is the gate's (evidence: significant)", () => {
  const significant = (v: ReturnType<typeof failingRun>) => {
    for (const s of v.suites) s.regressionEvidence = "significant";
    return v;
  };
  const head = (v: ReturnType<typeof failingRun>) =>
    renderComment(v, { key: "k", maxChars: 65_536 }).split("\n")[1]!;

  it("counts no unconfirmed flip as a regression: both are possible regressions", () => {
    // 3/3 → 1/3 (p = 0.2) and 3/3 → 0/3 (p = 0.05): neither survives Holm's correction.
    const v = significant(failingRun());
    expect(head(v)).toBe("## ❌ evalgate — gate failed: 1 errored case, 2 possible regressions");
    expect(checkTitle(v).startsWith("gate failed: 1 errored case, 2 possible regressions · ")).toBe(true);
  });

  it("counts a drop significant after Holm's correction, and reports the other as possible", () => {
    const v = significant(failingRun());
    const refund = v.cases.find((c) => c.testId === "refund-rounding")!;
    refund.change = { ...refund.change!, pValue: 0.001, significant: true };
    expect(head(v)).toBe("## ❌ evalgate — gate failed: 1 regression, 1 errored case, 1 possible regression");
  });

  it("a significant drop of a case flaky on both sides is a regression (before: known flaky, not counted)", () => {
    const v = significant(failingRun());
    const cart = v.cases.find((c) => c.testId === "empty-cart-total")!;
    cart.change = { ...cart.change!, pValue: 0.001, baseFlaky: true };
    expect(cart.flaky).toBe(true);
    expect(head(v)).toBe("## ❌ evalgate — gate failed: 1 regression, 1 errored case, 1 possible regression");
  });

  it("a flip of a case flaky on both sides that is not significant is neither (known flaky)", () => {
    const v = significant(failingRun());
    const cart = v.cases.find((c) => c.testId === "empty-cart-total")!;
    cart.change = { ...cart.change!, pValue: 0.2, baseFlaky: true };
    expect(head(v)).toBe("## ❌ evalgate — gate failed: 1 errored case, 1 possible regression");
  });

  it("a passing gate names its possible regressions among the warnings", () => {
    const v = significant(failingRun());
    v.cases = v.cases.filter((c) => c.testId !== "setup-crash");
    v.counts.errored = 0;
    v.gate = { ...v.gate, verdict: "pass", warnings: ["a", "b", "c"] };
    expect(head(v)).toBe("## ✅ evalgate — gate passed with 3 warnings (2 possible regressions)");
  });

  it("bundles written before the evidence rule count every flip, as their gate did", () => {
    expect(head(failingRun())).toBe("## ❌ evalgate — gate failed: 2 regressions, 1 errored case");
  });

  it("gate.regressions: warn counts none as a regression; unconfirmed flips stay possible ones", () => {
    const v = significant(failingRun());
    for (const s of v.suites) s.regressions = "warn";
    expect(head(v)).toBe("## ❌ evalgate — gate failed: 1 errored case, 2 possible regressions");
  });
});

describe("saying it the way a reviewer needs it (issue 27)", () => {
  const significant = (v: ReturnType<typeof failingRun>) => {
    for (const s of v.suites) s.regressionEvidence = "significant";
    return v;
  };
  const render = (v: ReturnType<typeof failingRun>) => renderComment(v, { key: "k", maxChars: 65_536 });

  it("a flip the gate does not count is not called regressed in bold (before: **regressed** for every flip)", () => {
    const v = significant(failingRun());
    const body = render(v);
    expect(body).not.toContain("**regressed**");
    expect(body).toContain("flipped (not counted)");
    // Nor in the flags column, the case's details, the HTML report or the terminal table (before:
    // the flags and the other renderers said "regressed" for every flip).
    expect(body).not.toMatch(/\| [^|\n]*\bregressed\b[^|\n]*\|\s*$/m);
    expect(body).not.toMatch(/<summary>[^\n]*· regressed/);
    expect(renderHtml(v)).not.toMatch(/>regressed|regressed</);
    const table = renderCaseTable(v.cases, regressionsOf(v).counted);
    expect(table).not.toMatch(/\bregressed\b/);
    expect(table).toContain("flipped (not counted)");
    // A counted one still is.
    const refund = v.cases.find((c) => c.testId === "refund-rounding")!;
    refund.change = { ...refund.change!, pValue: 0.001, significant: true };
    expect((render(v).match(/\*\*regressed\*\*/g) ?? []).length).toBe(1);
  });

  it("an inconclusive case gets the command that would settle it, before the case table (before: none)", () => {
    const v = significant(failingRun());
    const cart = v.cases.find((c) => c.testId === "empty-cart-total")!;
    cart.evidence = "inconclusive";
    cart.settleAttempts = 12;
    const body = render(v);
    expect(body).toContain(
      `**Next step**: 1 case did not get enough attempts to tell noise from a real change. To settle it, comment \`/evalgate run --repeat 12 --test empty-cart-total --target ${cart.target}\`.`,
    );
    expect(body.indexOf("**Next step**")).toBeLessThan(body.indexOf("**Cases to review**"));
    expect(render(significant(failingRun()))).not.toContain("**Next step**");
  });
});
