/**
 * TAP as real test runners print it (tape, node --test's tap reporter, mocha's tap reporter): the
 * `command` scorer's reason names the first failing assertion with its expected and actual values,
 * and the `tests` scorer grades a TAP report like a JUnit one.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { commandScorer } from "../../src/scorers/command.js";
import { failureExcerpt } from "../../src/scorers/process.js";
import { parseTap, readTap, TapError } from "../../src/scorers/tap.js";
import { testsScorer } from "../../src/scorers/tests.js";
import { tempDir, writeFiles } from "../helpers.js";
import { scorerContext } from "./context.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const TAPE = path.join(ROOT, "node_modules/tape/bin/tape");
const MOCHA = path.join(ROOT, "node_modules/mocha/bin/mocha.js");

/** What a command printed (stdout and stderr), whatever its exit status. */
function output(argv: string[], cwd: string): string {
  try {
    return execFileSync(argv[0]!, argv.slice(1), {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    const e = error as { stdout: string; stderr: string };
    return `${e.stdout}${e.stderr}`;
  }
}

const TAPE_SUITE = `const test = require(${JSON.stringify(path.join(ROOT, "node_modules/tape"))});
test("cart", (t) => {
  t.equal(1 + 1, 2, "adds");
  t.equal(Number.NaN, 0, "empty total is 0");
  t.deepEqual({ a: [1, 2] }, { a: [1, 3] });
  t.end();
});
test("todo", (t) => { t.equal(1, 2, "later", { todo: true }); t.end(); });
test("skipped", { skip: true }, (t) => t.end());
`;

const NODE_SUITE = `const test = require("node:test");
const assert = require("node:assert");
test("empty total", () => assert.strictEqual(Number.NaN, 0));
test("cart", async (t) => {
  await t.test("adds", () => assert.strictEqual(2, 2));
  await t.test("boom", () => { const x = undefined; return x.y; });
});
test("fine", () => {});
`;

describe("TAP from real runners", () => {
  const dir = tempDir();
  writeFiles(dir, { "tape.test.js": TAPE_SUITE, "node.test.js": NODE_SUITE });

  it("tape: the reason is the failing assertion with its values, not `expected |-, actual |-`", () => {
    const out = output([process.execPath, TAPE, "tape.test.js"], dir);
    // before: "not ok 2 empty total is 0 / Error: empty total is 0 (expected 0, actual   NaN)", and a
    // first failure with multi-line values read "(expected |-, actual |-)".
    expect(failureExcerpt(out)).toBe(
      "not ok 2 empty total is 0 (expected 0, actual NaN) / not ok 3 should be deeply equivalent (expected { a: [ 1, 3 ] }, actual { a: [ 1, 2 ] })",
    );
    const cases = parseTap(out);
    expect(cases.map((c) => [c.suite, c.name, c.outcome])).toEqual([
      ["cart", "adds", "passed"],
      ["cart", "empty total is 0", "failed"],
      ["cart", "should be deeply equivalent", "failed"],
      ["todo", "later", "skipped"],
    ]);
    expect(cases[1]!.message).toBe("expected 0, actual NaN");
  });

  it("tape: a test that throws is named by its exception, not the last stack lines", () => {
    writeFiles(dir, {
      "throws.test.js": `const test = require(${JSON.stringify(path.join(ROOT, "node_modules/tape"))});
test("boom", (t) => { const x = undefined; x.y; t.end(); });
`,
    });
    const out = output([process.execPath, TAPE, "throws.test.js"], dir);
    // before: "at process.processImmediate (node:internal/timers:…) / Node.js v20…"
    expect(failureExcerpt(out)).toContain("TypeError: Cannot read properties of undefined (reading 'y')");
    expect(failureExcerpt(out)).not.toContain("Node.js v");
  });

  it("node --test (tap reporter): subtests sum up into their parent, which is not counted again", () => {
    const out = output([process.execPath, "--test", "--test-reporter=tap", "node.test.js"], dir);
    const cases = parseTap(out);
    expect(cases.map((c) => [c.suite, c.name, c.outcome])).toEqual([
      [null, "empty total", "failed"],
      ["cart", "adds", "passed"],
      ["cart", "boom", "failed"],
      [null, "fine", "passed"],
    ]);
    expect(cases[0]!.message).toBe("Expected values to be strictly equal: NaN !== 0 expected 0, actual NaN");
    expect(cases[2]!.message).toBe("TypeError: Cannot read properties of undefined (reading 'y')");
    expect(failureExcerpt(out)).toBe(
      "not ok 1 - empty total / Expected values to be strictly equal: NaN !== 0 (expected 0, actual NaN) / not ok 2 - boom / TypeError: Cannot read properties of undefined (reading 'y')",
    );
  });

  it("mocha --reporter tap", () => {
    writeFiles(dir, {
      "mocha.test.js": `const assert = require("node:assert");
describe("cart", () => {
  it("adds", () => assert.strictEqual(2, 2));
  it("empty total", () => assert.strictEqual(Number.NaN, 0));
});
`,
    });
    const out = output([process.execPath, MOCHA, "--reporter", "tap", "mocha.test.js"], dir);
    const cases = parseTap(out);
    expect(cases.map((c) => [c.name, c.outcome])).toEqual([
      ["cart adds", "passed"],
      ["cart empty total", "failed"],
    ]);
    expect(failureExcerpt(out)).toMatch(/^not ok 2 cart empty total/);
    expect(failureExcerpt(out)).toContain("NaN !== 0");
  });
});

describe("TAP edge cases", () => {
  it("a run that bails out or stops before its plan is never a pass", () => {
    expect(parseTap("TAP version 13\n1..3\nok 1 - a\n").at(-1)).toMatchObject({
      outcome: "errored",
      message: "the plan announced 3 tests, 1 ran: the run stopped early",
    });
    expect(parseTap("1..2\nok 1 - a\nBail out! database down\n").at(-1)).toMatchObject({
      outcome: "errored",
      message: "Bail out! database down",
    });
  });

  it("a skip directive, an escaped hash and a point without a description", () => {
    const cases = parseTap("1..3\nok 1 - counts \\# of items\nok 2 # SKIP no network\nnot ok 3\n");
    expect(cases.map((c) => [c.name, c.outcome])).toEqual([
      ["counts \\# of items", "passed"],
      ["#2", "skipped"],
      ["#3", "failed"],
    ]);
  });

  it("text that is not TAP is refused, and a broken YAML block is passed over", () => {
    expect(() => parseTap("hello\nworld\n")).toThrow(TapError);
    const doc = readTap("not ok 1 - x\n  ---\n  expected: [unclosed\n  ...\n");
    expect(doc.points).toHaveLength(1);
    expect(doc.points[0]!.diagnostics).toBeNull();
  });
});

describe("the scorers on TAP", () => {
  const FILES = { "src/cart.js": "module.exports = 1;\n" };

  it("the command scorer's reason for a failing tape suite", async () => {
    const r = await commandScorer.run(
      await scorerContext({
        files: { ...FILES, "t.test.js": TAPE_SUITE },
        options: { type: "command", run: `${process.execPath} ${TAPE} t.test.js` },
      }),
    );
    expect(r).toMatchObject({
      state: "complete",
      passed: false,
      reason: expect.stringContaining("exit 1: not ok 2 empty total is 0 (expected 0, actual NaN)"),
    });
  });

  it("the tests scorer grades a TAP report, detected or declared, with fail_to_pass names", async () => {
    const run = `${process.execPath} ${TAPE} t.test.js > report.tap`;
    for (const format of [undefined, "tap"]) {
      const r = await testsScorer.run(
        await scorerContext({
          files: { ...FILES, "t.test.js": TAPE_SUITE },
          options: {
            type: "tests",
            run,
            report: "report.tap",
            ...(format ? { report_format: format } : {}),
            fail_to_pass: ["cart > empty total is 0"],
            pass_to_pass: ["cart > adds"],
          },
        }),
      );
      expect(r).toMatchObject({ state: "complete", passed: false });
      expect(r.state === "complete" && r.reason).toContain(
        "cart > empty total is 0 (failed: expected 0, actual NaN)",
      );
    }
  });
});
