/**
 * The comment's exam section (report/comment-exam.ts, docs/exam.md): what a pull request changes in
 * the exam it was judged by and the tests it proposes, escaped like agent output, within the
 * comment's budget, and proposed cases kept out of the gated tables and counts.
 */
import { describe, expect, it } from "vitest";
import { COMMENT_MAX_CHARS, renderComment } from "../../src/report/comment.js";
import { verdictText } from "../../src/report/comment-head.js";
import type { CaseView, ExamView, ReportView } from "../../src/report/view.js";
import { checkComment } from "./markdown-check.js";
import { HOSTILE } from "./scenarios.js";
import { kase, run, view } from "./views.js";

const SHA = "0123456789abcdef0123456789abcdef01234567";

function exam(over: Partial<ExamView> = {}): ExamView {
  return { sha: SHA, ref: SHA, files: [], quarantine: [], proposed: 0, changed: 0, removed: 0, ...over };
}

function withExam(cases: CaseView[], e: ExamView, over: Partial<ReportView> = {}): ReportView {
  const v = view({ cases: cases.filter((c) => c.exam?.status !== "proposed") });
  return { ...v, cases, exam: e, ...over };
}

const failing = (testId: string, examOf?: CaseView["exam"]) =>
  kase({ testId, target: "agent", runs: [run(testId, 1, "failed")], ...(examOf ? { exam: examOf } : {}) });
const passing = (testId: string, examOf?: CaseView["exam"]) =>
  kase({ testId, target: "agent", runs: [run(testId, 1, "passed")], ...(examOf ? { exam: examOf } : {}) });

describe("the exam section of the comment", () => {
  it("names each change, the base commit, and the proposed tests apart from the gated ones", () => {
    const v = withExam(
      [
        failing("weakened", { status: "changed", changes: ["scorer unit", "verifiers"] }),
        failing("deleted", { status: "removed", changes: [] }),
        passing("kept"),
        failing("fresh", { status: "proposed", changes: [] }),
      ],
      exam({
        files: [
          {
            evalPath: "evals/checkout.eval.yaml",
            change: "changed",
            changes: ["gate min_case_pass_rate 1 → 0.5"],
          },
        ],
        quarantine: ["adds checkout-bugs/weakened"],
      }),
      {
        gate: {
          verdict: "fail",
          reasons: ["checkout-bugs/weakened on agent: 0 of 1 attempt passed"],
          warnings: [],
          budgetStops: [],
        },
      },
    );
    const body = renderComment(v, { key: "default", maxChars: COMMENT_MAX_CHARS });
    expect(body).toContain("judged by the base commit `0123456`'s tests, scorers, verifiers and gate");
    expect(body).toContain("- `evals/checkout.eval.yaml`: gate min\\_case\\_pass\\_rate 1 → 0.5\n");
    expect(body).toContain(
      "- `weakened`: changes scorer unit, verifiers · judged by the base's: agent: fail 0/1\n",
    );
    expect(body).toContain("- `deleted`: removed by this PR · ran all the same: agent: fail 0/1\n");
    expect(body).toContain("- the quarantine file: adds checkout-bugs/weakened\n");
    expect(body).toContain("**Proposed by this pull request** (1 test, not gating)");
    expect(body).toContain("- `fresh`: agent: fail 0/1\n");
    expect(body).toContain("exam from base `0123456`");
    // The proposed case is not a case to review, nor counted in the headline.
    const table = body.slice(body.indexOf("**Cases to review**"));
    expect(table).not.toMatch(/\| fresh \|/);
    expect(verdictText(v)).toBe("gate failed: 2 failing cases");
  });

  it("without changes or proposals there is no section, only the footer's base commit", () => {
    const body = renderComment(withExam([passing("kept")], exam()), {
      key: "default",
      maxChars: COMMENT_MAX_CHARS,
    });
    expect(body).not.toContain("changes its exam");
    expect(body).not.toContain("Proposed by");
    expect(body).toContain("exam from base `0123456`");
  });

  it("escapes test ids, paths and changes like agent output", () => {
    const hostile = `${HOSTILE} \`x\` | <b>y</b>`;
    const v = withExam(
      [
        failing(hostile, { status: "changed", changes: [`scorer ${HOSTILE}`] }),
        passing(`new ${HOSTILE}`, { status: "proposed", changes: [] }),
      ],
      exam({
        files: [{ evalPath: `evals/${HOSTILE}.eval.yaml`, change: "added", changes: [] }],
        quarantine: [`adds ${HOSTILE}`],
      }),
    );
    const body = renderComment(v, { key: "default", maxChars: COMMENT_MAX_CHARS });
    const facts = checkComment(body);
    expect(facts.foreign).toEqual([]);
    expect(facts.mentions).toEqual([]);
    expect(facts.detailsBalanced).toBe(true);
    expect(facts.openFence).toBeNull();
  });

  it("a PR that changes thousands of tests still gets a comment within the limit, saying what was left out", () => {
    const cases = Array.from({ length: 3000 }, (_, i) =>
      failing(`t${i}-${"x".repeat(80)}`, {
        status: i % 3 === 0 ? "proposed" : "changed",
        changes: ["scorer unit", "seed", "verifiers", "instruction"],
      }),
    );
    const v = withExam(cases, exam({ quarantine: Array.from({ length: 50 }, (_, i) => `adds s/t${i}`) }), {
      gate: { verdict: "fail", reasons: ["many failed"], warnings: [], budgetStops: [] },
    });
    const body = renderComment(v, { key: "default", maxChars: COMMENT_MAX_CHARS });
    expect(body.length).toBeLessThanOrEqual(COMMENT_MAX_CHARS);
    expect(body).toContain("lines of the exam's changes and proposed tests");
    expect(body).toContain("**This pull request changes its exam**");
    expect(checkComment(body).detailsBalanced).toBe(true);
  });
});
