import { describe, expect, it } from "vitest";
import type { TestCaseResult } from "../../src/scorers/junit.js";
import { findListed, judgeTests, testsScorer } from "../../src/scorers/tests.js";
import { scorerContext } from "./context.js";

function tc(
  classname: string | null,
  name: string,
  outcome: TestCaseResult["outcome"] = "passed",
  extra: Partial<TestCaseResult> = {},
): TestCaseResult {
  return {
    suite: null,
    classname,
    name,
    file: null,
    outcome,
    message: null,
    time: null,
    flaky: false,
    ...extra,
  };
}

describe("which testcases a listed name means", () => {
  const cases = [
    tc("tests.test_cart", "test_empty_total", "failed", { message: "ZeroDivisionError" }),
    tc("tests.test_cart.TestCart", "test_adds"),
    tc("test/cart.test.js", "cart > empty total", "skipped"),
    tc("github.com/acme/shop/cart", "TestTotal/empty"),
    tc("io.acme.CartTest", "testTotal"),
  ];
  it.each([
    ["test_empty_total", "failed"],
    ["tests.test_cart.test_empty_total", "failed"],
    ["tests.test_cart::test_empty_total", "failed"],
    ["tests/test_cart.py::test_empty_total", "failed"],
    ["tests/test_cart.py::TestCart::test_adds", "passed"],
    ["cart > empty total", "skipped"],
    ["test/cart.test.js > cart > empty total", "skipped"],
    ["TestTotal/empty", "passed"],
    ["github.com/acme/shop/cart.TestTotal/empty", "passed"],
    ["io.acme.CartTest#testTotal", "passed"],
    ["io.acme.CartTest.testTotal", "passed"],
    ["test_empty", "missing"],
    ["cart > empty", "missing"],
  ])("%s → %s", (name, outcome) => {
    expect(findListed(name, cases).outcome).toBe(outcome);
  });

  it("takes the worst outcome of duplicates, with its message", () => {
    const dup = [
      tc("t", "x"),
      tc("t", "x", "errored", { message: "teardown failed" }),
      tc("t", "x", "skipped"),
    ];
    expect(findListed("x", dup)).toEqual({
      test: "x",
      outcome: "errored",
      matched: 3,
      message: "teardown failed",
    });
  });
});

describe("judgeTests", () => {
  const base = [tc("c", "fixed"), tc("c", "kept"), tc("c", "other", "failed", { message: "boom" })];

  it("passes when every fail_to_pass test passes and no pass_to_pass test fails, ignoring other tests", () => {
    const v = judgeTests(base, { failToPass: ["fixed"], passToPass: ["kept"] });
    expect(v.passed).toBe(true);
    expect(v.reason).toBe("fail_to_pass 1/1 passed, pass_to_pass 1/1 passed (3 tests: 2 passed, 1 failed)");
  });

  it.each([
    ["skipped", "fail_to_pass not passing: fixed (skipped)"],
    ["failed", "fail_to_pass not passing: fixed (failed: nope)"],
    ["errored", "fail_to_pass not passing: fixed (errored: nope)"],
  ] as const)("fails when the fail_to_pass test is %s", (outcome, reason) => {
    const cases = [
      tc("c", "fixed", outcome, { message: outcome === "skipped" ? null : "nope" }),
      tc("c", "kept"),
    ];
    const v = judgeTests(cases, { failToPass: ["fixed"], passToPass: ["kept"] });
    expect(v.passed).toBe(false);
    expect(v.reason).toBe(reason);
  });

  it("fails when the fail_to_pass test was deleted", () => {
    const v = judgeTests([tc("c", "kept")], { failToPass: ["fixed"], passToPass: ["kept"] });
    expect(v.passed).toBe(false);
    expect(v.reason).toBe("fail_to_pass not passing: fixed (not in the report)");
    expect(v.failToPass[0]).toMatchObject({ outcome: "missing", matched: 0 });
  });

  it("fails when a pass_to_pass test fails or goes missing, and tolerates a skipped one", () => {
    const broken = judgeTests([tc("c", "fixed"), tc("c", "kept", "failed")], {
      passToPass: ["kept", "gone"],
    });
    expect(broken.passed).toBe(false);
    expect(broken.reason).toBe("pass_to_pass broken: kept (failed), gone (not in the report)");
    const skipped = judgeTests([tc("c", "fixed"), tc("c", "kept", "skipped")], { passToPass: ["kept"] });
    expect(skipped.passed).toBe(true);
    expect(skipped.reason).toMatch(/^pass_to_pass 0\/1 passed \(1 skipped\)/);
  });

  it("without lists, needs every test to pass and names the failing ones", () => {
    const v = judgeTests(base, {});
    expect(v.passed).toBe(false);
    expect(v.reason).toBe("1 of 3 tests failed: c > other (boom)");
    const many = judgeTests(
      Array.from({ length: 5 }, (_, i) => tc("c", `t${i}`, "failed")),
      {},
    );
    expect(many.reason).toBe("5 of 5 tests failed: c > t0, c > t1, c > t2 and 2 more");
    expect(judgeTests([tc("c", "a"), tc("c", "b", "skipped")], {}).passed).toBe(true);
  });

  it("without lists, fails a suite whose every test was skipped", () => {
    const v = judgeTests([tc("c", "a", "skipped")], {});
    expect(v).toMatchObject({ passed: false, reason: "no test passed: all 1 were skipped" });
  });
});

const REPORT = (cases: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites><testsuite name="s">${cases}</testsuite></testsuites>\n`;
const PASSING = REPORT(
  '<testcase classname="cart" name="empty total"/><testcase classname="cart" name="adds"/>',
);
const FAILING = REPORT(
  '<testcase classname="cart" name="empty total"><failure message="expected 0, got NaN"/></testcase><testcase classname="cart" name="adds"/>',
);

/** A project whose "test command" copies a report from a file of the workspace and exits. */
function project(reports: Record<string, string>): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [name, xml] of Object.entries(reports)) files[`fixtures/${name}`] = xml;
  return files;
}

describe("the tests scorer", () => {
  it("passes on a passing report and records per-test outcomes", async () => {
    const ctx = await scorerContext({
      files: project({ "pass.xml": PASSING }),
      options: {
        type: "tests",
        run: "cp fixtures/pass.xml junit.xml",
        report: "junit.xml",
        fail_to_pass: ["cart > empty total"],
      },
    });
    const r = await testsScorer.run(ctx);
    expect(r).toMatchObject({ state: "complete", score: 1, passed: true });
    expect(r.details).toMatchObject({
      exit_code: 0,
      reports: ["junit.xml"],
      counts: { tests: 2, passed: 2, failed: 0, errored: 0, skipped: 0 },
      fail_to_pass: [{ test: "cart > empty total", outcome: "passed", matched: 1 }],
      failing: [],
    });
    expect((r.details!.tests as unknown[]).length).toBe(2);
  });

  it("fails and names the failing test", async () => {
    const ctx = await scorerContext({
      files: project({ "fail.xml": FAILING }),
      options: { type: "tests", run: "cp fixtures/fail.xml junit.xml; exit 1", report: "junit.xml" },
    });
    const r = await testsScorer.run(ctx);
    expect(r).toMatchObject({
      state: "complete",
      score: 0,
      passed: false,
      reason: "1 of 2 tests failed: cart > empty total (expected 0, got NaN)",
    });
    expect(r.details!.failing).toEqual([
      { test: "cart > empty total", outcome: "failed", message: "expected 0, got NaN" },
    ]);
  });

  it("is an error when the command writes no report, even if a stale one was in the workspace", async () => {
    const ctx = await scorerContext({
      files: { "junit.xml": PASSING },
      options: { type: "tests", run: "echo 'could not collect tests'", report: "junit.xml" },
    });
    const r = await testsScorer.run(ctx);
    expect(r.state).toBe("error");
    expect(r.reason).toMatch(
      /^the command \(exit 0\) wrote no report at junit\.xml: could not collect tests/,
    );
  });

  it("is an error when the report has no tests", async () => {
    const ctx = await scorerContext({
      files: project({ "empty.xml": '<testsuites tests="0"></testsuites>' }),
      options: { type: "tests", run: "cp fixtures/empty.xml junit.xml", report: "junit.xml" },
    });
    const r = await testsScorer.run(ctx);
    expect(r).toMatchObject({ state: "error" });
    expect(r.reason).toMatch(/the report has no tests/);
  });

  it("is an error when the command failed but the report shows no failing test", async () => {
    const ctx = await scorerContext({
      files: project({ "pass.xml": PASSING }),
      options: {
        type: "tests",
        run: "cp fixtures/pass.xml junit.xml; echo segfault >&2; exit 139",
        report: "junit.xml",
      },
    });
    const r = await testsScorer.run(ctx);
    expect(r.state).toBe("error");
    expect(r.reason).toMatch(/exited 139 but its report shows no failing test.*segfault/);
  });

  it("is an error when the report is not well-formed, naming the file", async () => {
    const ctx = await scorerContext({
      files: project({ "cut.xml": PASSING.slice(0, 80) }),
      options: { type: "tests", run: "cp fixtures/cut.xml junit.xml", report: "junit.xml" },
    });
    const r = await testsScorer.run(ctx);
    expect(r.state).toBe("error");
    expect(r.reason).toMatch(/^junit\.xml: the report is not well-formed XML/);
  });

  it("merges every report a glob matches, relative to cwd", async () => {
    const ctx = await scorerContext({
      files: project({
        "a.xml": REPORT('<testcase classname="a" name="one"/>'),
        "b.xml": REPORT('<testcase classname="b" name="two"><skipped/></testcase>'),
      }),
      options: {
        type: "tests",
        cwd: "pkg",
        run: "mkdir -p reports && cp ../fixtures/a.xml ../fixtures/b.xml reports/",
        report: "reports/*.xml",
        fail_to_pass: ["a.one"],
        pass_to_pass: ["b > two"],
      },
      change: { "pkg/.keep": "" },
    });
    const r = await testsScorer.run(ctx);
    expect(r).toMatchObject({ state: "complete", passed: true });
    expect(r.details!.reports).toEqual(["pkg/reports/a.xml", "pkg/reports/b.xml"]);
  });

  it("is an error when the command times out", async () => {
    const ctx = await scorerContext({
      files: project({ "pass.xml": PASSING }),
      options: { type: "tests", run: "sleep 30", report: "junit.xml" },
      timeoutMs: 500,
    });
    const r = await testsScorer.run(ctx);
    expect(r).toMatchObject({ state: "error", timedOut: true });
  });

  it("reports option mistakes before anything runs", () => {
    const problems = testsScorer.check!(
      {
        type: "tests",
        run: "x",
        report: "../out/junit.xml",
        fail_to_pass: ["a", "a"],
        pass_to_pass: ["a"],
      },
      "/",
    );
    expect(problems.map((p) => [p.at, p.message])).toEqual([
      [["report"], 'report "../out/junit.xml" is outside the workspace'],
      [["fail_to_pass", 1], '"a" is listed twice'],
      [["pass_to_pass"], '"a" is both fail_to_pass and pass_to_pass'],
    ]);
  });
});
