/** CTRF JSON reports: the parser, and the `tests` scorer grading them like JUnit reports. */
import { describe, expect, it } from "vitest";
import { CtrfError, parseCtrf } from "../../src/scorers/ctrf.js";
import { testsScorer } from "../../src/scorers/tests.js";
import { scorerContext } from "./context.js";

/** A report as pytest-json-ctrf writes it (Harbor's verifiers use it): names are pytest node ids. */
function report(tests: Record<string, unknown>[], summary: Record<string, unknown> = {}): string {
  return JSON.stringify({
    reportFormat: "CTRF",
    specVersion: "0.0.0",
    results: {
      tool: { name: "pytest" },
      // Never trusted: the tests are.
      summary: {
        tests: 99,
        passed: 99,
        failed: 0,
        pending: 0,
        skipped: 0,
        other: 0,
        start: 0,
        stop: 1,
        ...summary,
      },
      tests,
    },
  });
}

describe("parseCtrf", () => {
  it.each([
    ["passed", "passed"],
    ["failed", "failed"],
    ["skipped", "skipped"],
    ["pending", "skipped"],
    ["other", "errored"],
  ])("status %s → %s", (status, outcome) => {
    const [t] = parseCtrf(report([{ name: "t", status, duration: 5 }]));
    expect(t!.outcome).toBe(outcome);
  });

  it("keeps the suite, file, first line of the message, duration in seconds and flaky passes", () => {
    const cases = parseCtrf(
      `\uFEFF${report([
        {
          name: "test_total",
          status: "failed",
          duration: 1500,
          suite: ["tests/test_cart.py", "TestCart"],
          filePath: "tests/test_cart.py",
          message: "\n  AssertionError: 1 != 0\nmore",
        },
        { name: "test_adds", status: "passed", duration: 2, flaky: true, retries: 2 },
        {
          name: "test_other",
          status: "failed",
          duration: 2,
          trace: "Traceback (most recent call last)\n...",
        },
      ])}`,
    );
    expect(cases[0]).toEqual({
      suite: "tests/test_cart.py > TestCart",
      classname: "TestCart",
      name: "test_total",
      file: "tests/test_cart.py",
      outcome: "failed",
      message: "AssertionError: 1 != 0",
      time: 1.5,
      flaky: false,
    });
    expect(cases[1]).toMatchObject({ outcome: "passed", flaky: true, message: null, suite: null });
    expect(cases[2]!.message).toBe("Traceback (most recent call last)");
  });

  it.each([
    ["", "the report is empty"],
    ["<testsuites/>", "not JSON"],
    ['{"results": {}}', 'no "results.tests" list'],
    ['{"tests": []}', 'no "results.tests" list'],
    ['{"results": {"tests": [{"name": "a"}]}}', 'results.tests[0] has no "name" and "status"'],
    ['{"results": {"tests": [{"name": "a", "status": "broken"}]}}', 'status "broken"'],
  ])("refuses %j", (text, message) => {
    expect(() => parseCtrf(text)).toThrow(CtrfError);
    expect(() => parseCtrf(text)).toThrow(message);
  });
});

describe("the tests scorer reads CTRF", () => {
  const ctrf = (outcome: "passed" | "failed") =>
    report([
      {
        name: "tests/test_cart.py::test_empty_total",
        status: outcome,
        duration: 3,
        message: "assert 1 == 0",
      },
      { name: "tests/test_cart.py::test_adds", status: "passed", duration: 3 },
    ]);

  it("detects a CTRF report and applies fail_to_pass / pass_to_pass", async () => {
    const ctx = await scorerContext({
      files: { "fixtures/good.json": ctrf("passed") },
      options: {
        type: "tests",
        run: "cp fixtures/good.json ctrf.json",
        report: "ctrf.json",
        fail_to_pass: ["tests/test_cart.py::test_empty_total"],
        pass_to_pass: ["tests/test_cart.py::test_adds"],
      },
    });
    const r = await testsScorer.run(ctx);
    expect(r).toMatchObject({ state: "complete", passed: true, score: 1 });
    expect(r.details).toMatchObject({ counts: { tests: 2, passed: 2 } });
  });

  it("fails a fail_to_pass test that fails, naming it, whatever the summary says", async () => {
    const ctx = await scorerContext({
      files: { "fixtures/bad.json": ctrf("failed") },
      options: {
        type: "tests",
        run: "cp fixtures/bad.json out.ctrf; exit 1",
        report: "out.ctrf",
        report_format: "ctrf",
        fail_to_pass: ["tests/test_cart.py::test_empty_total"],
      },
    });
    const r = await testsScorer.run(ctx);
    expect(r).toMatchObject({ state: "complete", passed: false, score: 0 });
    expect(r.reason).toContain("tests/test_cart.py::test_empty_total (failed: assert 1 == 0)");
  });

  it("report_format: junit refuses a CTRF report instead of guessing", async () => {
    const ctx = await scorerContext({
      files: { "fixtures/good.json": ctrf("passed") },
      options: {
        type: "tests",
        run: "cp fixtures/good.json r.json",
        report: "r.json",
        report_format: "junit",
      },
    });
    const r = await testsScorer.run(ctx);
    expect(r.state).toBe("error");
    expect(r.reason).toContain("r.json: the report is not well-formed XML");
  });

  it("a broken CTRF report is an error naming the file", async () => {
    const ctx = await scorerContext({
      files: { "README.md": "x\n" },
      options: { type: "tests", run: "echo '{\"results\": 1}' > r.json", report: "r.json" },
    });
    const r = await testsScorer.run(ctx);
    expect(r).toMatchObject({ state: "error" });
    expect(r.reason).toBe('r.json: not a CTRF report: it has no "results.tests" list');
  });
});
