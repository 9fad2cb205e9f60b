import { describe, expect, it } from "vitest";
import { attemptsTimeline, historyChart, rateChart } from "../../src/report/svg.js";

describe("report.html figures", () => {
  it("draws base beside head with their 95 % intervals, told apart by shape and text, not colour", () => {
    const svg = rateChart(
      [{ label: "claude", head: { passed: 1, counted: 3 }, base: { passed: 3, counted: 3 } }],
      0.5,
    );
    expect(svg).toMatch(/^<svg class="chart" role="img" aria-label="[^"]*base 3\/3, head 1\/3"/);
    // Wilson 95 %: 3/3 → 44–100 %, 1/3 → 6–79 %.
    expect(svg).toContain("base 3/3 = 100 %, 95 % interval 44 %–100 %");
    expect(svg).toContain("head 1/3 = 33 %, 95 % interval 6 %–79 %");
    expect(svg).toContain('stroke-dasharray="4 3"'); // the base's dashed line
    expect(svg).toContain('fill="none" stroke="currentColor"'); // its hollow dot
    expect(svg).toContain("policy threshold 50 %");
    // No colour of its own and nothing fetched: it inherits the page's text colour.
    expect(svg).not.toMatch(/#[0-9a-f]{3,6}\b|rgb\(|url\(|href=/i);
    expect(rateChart([{ label: "x", head: { passed: 0, counted: 0 } }])).toBe("");
  });

  it("escapes labels", () => {
    expect(rateChart([{ label: '<b>"x"</b>', head: { passed: 1, counted: 1 } }])).toContain(
      "&lt;b&gt;&quot;x&quot;&lt;/b&gt;",
    );
  });

  it("draws the attempts timeline as shapes in order, with a legend", () => {
    const svg = attemptsTimeline([
      { attempt: 1, retry: 0, status: "passed", counted: true },
      { attempt: 2, retry: 0, status: "error", counted: false },
      { attempt: 2, retry: 1, status: "failed", counted: true },
    ]);
    expect(svg).toContain('aria-label="attempts in order: 1 passed, 2 error, 2.1 failed"');
    expect(svg.match(/<title>/g)).toHaveLength(3);
    expect(svg).toContain("<title>attempt 2: error (not counted)</title>");
    expect(svg).toContain("■ passed · ☒ failed · △ error or timeout");
    expect(svg).not.toMatch(/#[0-9a-f]{3,6}\b|url\(|href=/i);
  });
});

describe("the history chart", () => {
  it("plots each base run, oldest first, then this run, with a text alternative", () => {
    const svg = historyChart(
      [
        { label: "a1b2c3d", passed: 3, counted: 3 },
        { label: "b2c3d4e", passed: 2, counted: 3 },
      ],
      { label: "this run", passed: 0, counted: 5 },
      0.5,
    );
    expect(svg).toContain('<svg class="history" role="img"');
    expect(svg).toContain(
      "success rate over the base branch&#39;s runs, oldest first, then this run: a1b2c3d 3/3, b2c3d4e 2/3, this run 0/5".replace(
        "&#39;",
        "'",
      ),
    );
    expect(svg.match(/<circle /g)).toHaveLength(2);
    expect(svg.match(/<path d="M/g)).toHaveLength(1);
    expect(svg).toContain("<title>policy threshold 50 %</title>");
    expect(svg).toContain("<title>this run: 0/5 = 0 % (95 % interval 0 %–43 %)</title>");
  });

  it("draws nothing for fewer than two points, and escapes labels", () => {
    expect(historyChart([], { label: "this run", passed: 1, counted: 1 })).toBe("");
    expect(
      historyChart([{ label: "<x>", passed: 1, counted: 1 }], { label: "h", passed: 0, counted: 1 }),
    ).toContain("&lt;x&gt;");
  });
});
