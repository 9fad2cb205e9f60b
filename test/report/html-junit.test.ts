import { XMLParser, XMLValidator } from "fast-xml-parser";
import { parse } from "parse5";
import { describe, expect, it } from "vitest";
import { renderComment } from "../../src/report/comment.js";
import { renderHtml } from "../../src/report/html.js";
import { renderJUnit } from "../../src/report/junit.js";
import { parseJUnit } from "../../src/scorers/junit.js";
import { htmlElements } from "./markdown-check.js";
import { failingRun, HOSTILE, hostileRun } from "./scenarios.js";
import { evidence, kase, run, scorer, view } from "./views.js";

/** Text XML 1.0 forbids, and text that breaks naive XML writers. */
const WICKED = `a\u0001b\u0008c\u000Bd\uFFFEe\uD800f]]>g<h & "i" 'j' --> \u{1F600} \r\nnext`;

function wickedRun() {
  const dir = "wicked--bot";
  return view({
    cases: [
      kase({
        testId: `wicked "${WICKED}"`,
        target: "bot <1>",
        runs: [
          run(dir, 1, "failed", {
            message: WICKED,
            evidence: evidence({
              scorers: [
                scorer({
                  name: "unit",
                  type: "tests",
                  passed: false,
                  score: 0,
                  reason: WICKED,
                  failingTests: [{ name: WICKED, outcome: "failed", message: WICKED }],
                  failingTestsTotal: 1,
                }),
              ],
            }),
          }),
        ],
      }),
      kase({
        testId: "crash",
        target: "bot <1>",
        runs: [run("crash--bot", 1, "error", { message: WICKED })],
      }),
      kase({ testId: "fine", target: "bot <1>", runs: [run("fine--bot", 1, "passed")] }),
    ],
    gate: { verdict: "fail", reasons: [WICKED] },
  });
}

describe("report.html", () => {
  it("renders a failing run as one page (snapshot)", async () => {
    await expect(renderHtml(failingRun())).toMatchFileSnapshot("__snapshots__/report-failing.html");
  });

  it("shows each target's numbers with their changes against the base, as the comment does", () => {
    const cells = (html: string, target: string) => {
      const row = [...html.matchAll(/<tr>(.*?)<\/tr>/g)]
        .map((m) => m[1]!)
        .find((r) => r.startsWith(`<td>${target}`));
      return [...(row ?? "").matchAll(/<td class="n">(.*?)<\/td>/g)].map((m) => m[1]);
    };
    // The same figures as the comment's row for claude: passed, failed, flaky, errors, rate, cost, tokens.
    expect(cells(renderHtml(failingRun()), "claude")).toEqual([
      "4",
      "2 (−1)",
      "2 (+1)",
      "2",
      "0",
      "50 % (−25 pp)",
      "$0.66 (+$0.19)",
      "229 k (+20 k)",
    ]);
    const alone = failingRun();
    alone.comparison = null;
    expect(cells(renderHtml(alone), "claude")).toEqual(["4", "2", "2", "2", "0", "50 %", "$0.66", "229 k"]);
    // A run of some tests only ran fewer cases than the base by choice: no changes, as in the comment.
    for (const narrow of [{ tests: ["empty-*"] }, { tags: ["smoke"] }]) {
      const filtered = failingRun();
      Object.assign(filtered.run.filters, narrow);
      expect(cells(renderHtml(filtered), "claude")).toEqual([
        "4",
        "2",
        "2",
        "2",
        "0",
        "50 %",
        "$0.66",
        "229 k",
      ]);
      expect(renderComment(filtered, { key: "default", maxChars: 65_536 })).not.toContain("vs base");
    }
  });

  it("shows hostile text as text: no element, attribute or URL an agent wrote", () => {
    const html = renderHtml(hostileRun());
    const els = htmlElements(parse(html));
    expect(els.map((e) => e.tagName).filter((t) => ["img", "script", "iframe"].includes(t))).toEqual([]);
    for (const e of els) for (const a of e.attrs) expect(a.name.startsWith("on")).toBe(false);
    expect(html).toContain(HOSTILE.replace("<", "&lt;").replace(">", "&gt;"));
    expect(html).toContain("&lt;/details&gt;");
    expect(html).not.toMatch(/[\u0000\u001b\u202e]/);
  });
});

describe("junit.xml", () => {
  it("is valid XML whatever the agent printed, and readers see one testcase per case", () => {
    const xml = renderJUnit(wickedRun());
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).not.toMatch(/[\u0001\u0008\u000B\uFFFE]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    const cases = parseJUnit(xml);
    expect(cases.map((c) => c.outcome)).toEqual(["failed", "errored", "passed"]);
    expect(cases.slice(1).map((c) => c.name)).toEqual(["crash [bot <1>]", "fine [bot <1>]"]);
    expect(cases[0]!.name).toContain(']]>g<h & "i"');
    expect(cases[0]!.classname).toBe("evals/checkout.eval.yaml");
    // Element text survives: the emoji and the escaped characters read back as written.
    const doc = new XMLParser({ ignoreAttributes: false }).parse(xml);
    const failure = doc.testsuites.testsuite.testcase[0].failure;
    expect(failure["#text"]).toContain(`]]>g<h & "i" 'j' --> \u{1F600}`);
  });

  it("counts failures and errors on the suites, and never uses skipped", () => {
    const xml = renderJUnit(failingRun());
    expect(xml).toContain('<testsuites name="evalgate" tests="9" failures="2" errors="1" skipped="0"');
    expect(xml).not.toContain("<skipped");
    const cases = parseJUnit(xml);
    expect(cases).toHaveLength(9);
    const byName = new Map(cases.map((c) => [c.name, c]));
    expect(byName.get("empty-cart-total [claude]")).toMatchObject({
      outcome: "failed",
      message: "1 of 3 attempts passed, policy needs all (regressed)",
    });
    expect(byName.get("setup-crash [house-agent]")!.outcome).toBe("errored");
    expect(byName.get("coupon-stacking [claude]")!.outcome).toBe("passed");
  });

  it("states a failure reason once, not again under the scorer that gave it", () => {
    const view = failingRun();
    const run = view.cases.find((c) => c.verdict === "fail")!.runs.find((r) => r.evidence?.scorers?.length)!;
    const s = run.evidence!.scorers![0]!;
    s.passed = false;
    s.state = "complete";
    s.reason = "exit 1: boom";
    run.message = `the agent changed nothing; ${s.name}: exit 1: boom`;
    const xml = renderJUnit(view);
    // Once: not under the scorer, and not again in a <system-out> of the (flaky) failing case.
    expect(xml.split(`${s.name}: exit 1: boom`)).toHaveLength(2);
    // A reason the message does not carry is still listed.
    s.reason = "exit 2: other";
    expect(renderJUnit(view)).toContain(`  ${s.name}: exit 2: other`);
  });
});

describe("report.html", () => {
  it("shows an empty diff as the words 'no changes', never an empty box", () => {
    const view = failingRun();
    const run = view.cases.find((c) => c.verdict === "fail")!.runs[0]!;
    run.evidence!.diffStat = { files: [], additions: 0, deletions: 0 };
    run.evidence!.diff = { path: `${run.dir}/diff.patch`, text: "", truncated: false, totalBytes: 0 };
    const html = renderHtml(view);
    expect(html).toContain('<p class="muted">Diff: no changes</p>');
    expect(html).not.toMatch(/<summary>Diff: no changes[^<]*(<[^>]*>[^<]*)*<\/summary><pre><\/pre>/);
    expect(html).not.toContain("<pre></pre>");
  });
});
