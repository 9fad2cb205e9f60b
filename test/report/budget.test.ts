import { writeFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderComment } from "../../src/report/comment.js";
import type { AttemptTry, CaseView, ChangeView, ReportView } from "../../src/report/view.js";
import { checkComment, detailsBalanced, openFence } from "./markdown-check.js";
import { diffOf, evidence, kase, logOf, run, scorer, targetsOf, view } from "./views.js";

const regressed: ChangeView = {
  change: "regressed",
  baseVerdict: "pass",
  baseAttempts: { counted: 3, passed: 3 },
  successRateDelta: -1,
  pValue: 0.05,
  significant: false,
};
const same: ChangeView = { ...regressed, change: "unchanged", successRateDelta: 0, pValue: 1 };

function bigDiff(lines: number, seed: number): string {
  return (
    Array.from(
      { length: lines },
      (_, i) => `+  const value${seed}_${i} = compute(${i}); // \`${"`".repeat(i % 5)}\``,
    ).join("\n") + "\n"
  );
}

function failingRuns(dir: string, statuses: AttemptTry["status"][], seed: number): AttemptTry[] {
  return statuses.map((status, i) =>
    run(dir, i + 1, status, {
      message: status === "passed" ? null : `unit: exit 1: case ${seed} attempt ${i + 1} failed`,
      evidence: evidence({
        ...diffOf(`${dir}/run-${i + 1}`, `src/file${seed}.ts`, bigDiff(120, seed * 10 + i)),
        ...logOf(
          `${dir}/run-${i + 1}`,
          Array.from({ length: 60 }, (_, j) => `log line ${j} of ${seed}`).join("\n"),
        ),
        scorers:
          status === "passed"
            ? [scorer({ name: "unit" })]
            : [
                scorer({
                  name: "unit",
                  type: "tests",
                  passed: false,
                  score: 0,
                  reason: `3 of 40 tests failed in case ${seed}`,
                  failingTests: [1, 2, 3].map((t) => ({
                    name: `suite ${seed} > test ${t}`,
                    outcome: "failed",
                    message: "expected 1, got 2",
                  })),
                  failingTestsTotal: 3,
                }),
              ],
      }),
    }),
  );
}

/** 2,000 cases: 20 regressions, 30 flaky passes, 10 errored, 140 unchanged failures, the rest passing. */
function bigSuite(): { view: ReportView; regressions: CaseView[]; flaky: CaseView[]; errored: CaseView[] } {
  const cases: CaseView[] = [];
  const regressions: CaseView[] = [];
  const flaky: CaseView[] = [];
  const errored: CaseView[] = [];
  for (let i = 0; i < 2000; i++) {
    const testId = `case-${String(i).padStart(4, "0")}`;
    const target = i % 2 ? "claude" : "codex";
    const dir = `${testId}--${target}`;
    let c: CaseView;
    if (i % 100 === 7) {
      c = kase({
        testId,
        target,
        runs: failingRuns(dir, ["failed", "passed", "failed"], i),
        change: regressed,
      });
      regressions.push(c);
    } else if (i % 100 === 13 || i % 100 === 63 || i % 100 === 88) {
      c = kase({
        testId,
        target,
        verdict: "pass",
        runs: failingRuns(dir, ["passed", "failed", "passed"], i),
        change: same,
      });
      flaky.push(c);
    } else if (i % 200 === 42) {
      c = kase({ testId, target, runs: failingRuns(dir, ["error", "error", "error"], i), change: same });
      errored.push(c);
    } else if (i % 100 < 7) {
      c = kase({
        testId,
        target,
        runs: failingRuns(dir, ["failed", "failed", "failed"], i),
        change: { ...same, baseVerdict: "fail" },
      });
    } else {
      c = kase({ testId, target, runs: [1, 2, 3].map((a) => run(dir, a, "passed")), change: same });
    }
    cases.push(c);
  }
  const v = view({
    cases,
    gate: {
      verdict: "fail",
      reasons: [
        ...errored.map((c) => `suite/${c.testId} on ${c.target}: 3 of 3 attempts errored (agent_exit)`),
        ...regressions.map(
          (c) => `suite/${c.testId} on ${c.target}: regressed: 1 of 3 attempts passed (base 3 of 3)`,
        ),
      ],
    },
    comparison: {
      baselineRunId: "base-run",
      baselineSha: "b".repeat(40),
      regressed: regressions.length,
      improved: 0,
      unchanged: 2000 - regressions.length,
      new: 0,
      removed: 0,
      significant: 0,
      removedCases: [],
      targets: targetsOf(cases),
    },
  });
  return { view: v, regressions, flaky, errored };
}

/** The case table's rows: `| icon word | test | target | …`. */
function tableRows(md: string): string[] {
  return md.split("\n").filter((l) => /^\| (❌|❗|⚠️|✅) /.test(l));
}

describe("the comment's size budget", () => {
  const big = bigSuite();

  it("keeps a 2,000-case suite under 65,536 characters, every regression, flaky and errored case named", () => {
    const md = renderComment(big.view, {
      key: "default",
      maxChars: 65_536,
      links: { artifact: "https://github.com/o/r/actions/runs/1/artifacts/2", artifactName: "evalgate-1" },
    });
    expect(md.length).toBeLessThanOrEqual(65_536);
    if (process.env.EVALGATE_DUMP) writeFileSync(process.env.EVALGATE_DUMP, md);
    const rows = tableRows(md);
    for (const c of [...big.regressions, ...big.flaky, ...big.errored]) {
      expect(
        rows.some((r) => r.includes(`| ${c.testId} | ${c.target} |`)),
        c.testId,
      ).toBe(true);
    }
    expect(rows.filter((r) => r.includes("**regressed**"))).toHaveLength(big.regressions.length);
    for (const reason of big.view.gate.reasons) expect(md).toContain(reason.replaceAll("_", "\\_"));
    expect(md).toMatch(
      /\*\*Left out to stay under 65,536 characters:\*\* .*\d+ diffs.*\d+ passing cases.*Everything is in `report\.html` and the case folders of the artifact \[evalgate-1\]\(https:\/\/github\.com\/o\/r\/actions\/runs\/1\/artifacts\/2\)\./,
    );
    // The passing cases are still counted where the list was.
    expect(md).toMatch(/✅ 1,7\d\d more cases passed on every attempt/);
    expect(openFence(md)).toBeNull();
    expect(detailsBalanced(md)).toBe(true);
  });

  it("drops least important parts first: with room, passing diffs go before failing ones", () => {
    const full = renderComment(big.view, { key: "k", maxChars: 10_000_000 });
    expect(full).not.toContain("Left out");
    // A budget just below the full size drops only diffs of passing attempts.
    const tight = renderComment(big.view, { key: "k", maxChars: full.length - 1 });
    expect(tight.length).toBeLessThan(full.length);
    expect(tight).toMatch(/\*\*Left out to stay under [\d,]+ characters:\*\* 1 diff\. /);
    expect(tight).toContain("<details><summary>✅ 1,");
    // The job summary's budget is in bytes as well: emoji and dashes count three or four.
    const bytes = renderComment(big.view, { key: "k", maxChars: 1_048_576, maxBytes: 200_000 });
    expect(Buffer.byteLength(bytes)).toBeLessThanOrEqual(200_000);
  });

  it("never exceeds the budget and keeps fences and <details> balanced (property)", () => {
    const nasty = fc.constantFrom(
      "```",
      "````",
      "<details>",
      "</details>",
      "@octocat",
      "|",
      "\n",
      "<img src=x>",
      "$",
      "#12",
      "\u202e",
      "`",
    );
    const textArb = fc
      .array(fc.oneof(fc.string({ maxLength: 40 }), nasty), { maxLength: 30 })
      .map((p) => p.join(""));
    const runArb = fc.record({
      status: fc.constantFrom<AttemptTry["status"]>("passed", "failed", "error", "timeout"),
      message: textArb,
      diff: fc.array(textArb, { maxLength: 200 }).map((l) => l.join("\n")),
      log: fc.array(textArb, { maxLength: 100 }).map((l) => l.join("\n")),
      reason: textArb,
    });
    const caseArb = fc.record({
      testId: textArb,
      target: fc.constantFrom("claude", "codex", "evil | @x"),
      runs: fc.array(runArb, { minLength: 1, maxLength: 4 }),
      regressed: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(caseArb, { maxLength: 40 }),
        fc.integer({ min: 1000, max: 40_000 }),
        fc.boolean(),
        (specs, maxChars, passGate) => {
          const cases = specs.map((s, i) => {
            const dir = `c${i}`;
            const runs = s.runs.map((r, j) =>
              run(dir, j + 1, r.status, {
                message: r.message,
                evidence: evidence({
                  ...diffOf(`${dir}/run-${j + 1}`, "f.txt", r.diff),
                  ...logOf(`${dir}/run-${j + 1}`, r.log),
                  scorers: [scorer({ name: "s", passed: r.status === "passed", reason: r.reason })],
                }),
              }),
            );
            return kase({
              testId: s.testId || `t${i}`,
              target: s.target,
              runs,
              change: s.regressed ? regressed : same,
            });
          });
          const v = view({
            cases,
            gate: {
              verdict: passGate ? "pass" : "fail",
              reasons: cases.map((c) => `${c.testId}: ${c.reason}`),
            },
          });
          const md = renderComment(v, { key: "default", maxChars });
          expect(md.length).toBeLessThanOrEqual(maxChars);
          expect(md.startsWith("<!-- evalgate:comment key=default -->\n")).toBe(true);
          const facts = checkComment(md);
          expect(facts.openFence).toBeNull();
          expect(facts.detailsBalanced).toBe(true);
          expect(facts.foreign).toEqual([]);
          expect(facts.mentions).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});
