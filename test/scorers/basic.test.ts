/**
 * The `command`, `script`, `file` and `diff` scorers on real workspaces with real processes: what
 * passes, what fails, and what is an error (a scorer that cannot run is never a 0).
 */
import { describe, expect, it } from "vitest";
import { commandScorer } from "../../src/scorers/command.js";
import { diffScorer } from "../../src/scorers/diff.js";
import { fileScorer } from "../../src/scorers/file.js";
import { scriptScorer } from "../../src/scorers/script.js";
import { scorerContext } from "./context.js";

const FILES = { "src/cart.js": "export const total = 1;\n", "test/cart.test.js": "ok\n" };

describe("the command scorer", () => {
  it.each([
    ["exit 0", "test -f src/cart.js", { state: "complete", score: 1, passed: true, reason: "exit 0" }],
    ["exit 1", "echo 'not ok 1 - empty total'; exit 1", { state: "complete", score: 0, passed: false }],
  ])("%s", async (_name, run, expected) => {
    const r = await commandScorer.run(
      await scorerContext({ files: FILES, options: { type: "command", run } }),
    );
    expect(r).toMatchObject(expected);
    if (r.state === "complete" && !r.passed) expect(r.reason).toBe("exit 1: not ok 1 - empty total");
  });

  it.each([
    [
      "tap",
      "not ok 1 - empty total / Expected values to be strictly equal: NaN !== 0 (expected 0, actual NaN)",
    ],
    ["spec", "✖ empty total", "Expected values to be strictly equal: NaN !== 0 (expected 0, actual NaN)"],
  ])("keeps an assertion's expected and actual values in the reason (node --test, %s reporter)", async (reporter, ...parts) => {
    const files = {
      ...FILES,
      "test/total.test.js":
        'const test = require("node:test");\nconst assert = require("node:assert");\ntest("empty total", () => assert.strictEqual(Number.NaN, 0));\n',
    };
    const r = await commandScorer.run(
      await scorerContext({
        files,
        options: { type: "command", run: `node --test --test-reporter=${reporter} test/total.test.js` },
      }),
    );
    expect(r).toMatchObject({ state: "complete", passed: false });
    for (const part of parts) expect(r.state === "complete" && r.reason).toContain(part);
  });

  it("is an error when the program cannot start", async () => {
    const ctx = await scorerContext({ files: FILES, options: { type: "command", run: ["./no-such-check"] } });
    expect(await commandScorer.run(ctx)).toMatchObject({ state: "error" });
  });

  it("is an error when it runs out of time", async () => {
    const ctx = await scorerContext({
      files: FILES,
      options: { type: "command", run: "sleep 30" },
      timeoutMs: 500,
    });
    expect(await commandScorer.run(ctx)).toMatchObject({ state: "error", timedOut: true });
  });
});

describe("the script scorer", () => {
  it.each([
    ["a score line", "echo checking; echo score=0.7", { state: "complete", score: 0.7, passed: false }],
    ["a score at pass_at", "echo score=0.7", { state: "complete", score: 0.7, passed: true }, 0.7],
    [
      "a JSON verdict whose pass decides",
      `echo '{"score": 0.4, "pass": true, "reason": "good enough"}'`,
      { state: "complete", score: 0.4, passed: true, reason: "good enough" },
    ],
  ])("reads %s", async (_name, run, expected, passAt?: number) => {
    const options = { type: "script", run, ...(passAt === undefined ? {} : { pass_at: passAt }) };
    expect(await scriptScorer.run(await scorerContext({ files: FILES, options }))).toMatchObject(expected);
  });

  it.each([
    ["exits non-zero, even with a score", "echo score=1; exit 3", /^exited with 3/],
    ["prints no score", "echo all good", /printed no score/],
    ["prints a score outside [0, 1]", "echo score=2", /outside \[0, 1\]/],
  ])("is an error when it %s", async (_name, run, reason) => {
    const r = await scriptScorer.run(await scorerContext({ files: FILES, options: { type: "script", run } }));
    expect(r.state).toBe("error");
    expect(r.reason).toMatch(reason);
    expect("score" in r).toBe(false);
  });
});

describe("the file scorer", () => {
  const change = { "src/cart.js": "export const total = (items) => items.reduce((a, b) => a + b, 0);\n" };
  it.each([
    ["exists", { path: "src/cart.js" }, true],
    ["a missing file", { path: "src/none.js" }, false],
    ["exists: false on a missing file", { path: "src/none.js", exists: false }, true],
    ["exists: false on a file that exists", { path: "src/cart.js", exists: false }, false],
    ["contains", { path: "src/cart.js", contains: "reduce(" }, true],
    ["does not contain", { path: "src/cart.js", contains: "NaN" }, false],
    ["matches", { path: "src/cart.js", matches: "reduce\\(.*, 0\\)" }, true],
    ["does not match", { path: "src/cart.js", matches: "^import" }, false],
    ["a folder", { path: "src" }, false],
  ])("%s", async (_name, options, passed) => {
    const r = await fileScorer.run(
      await scorerContext({ files: FILES, change, options: { type: "file", ...options } }),
    );
    expect(r).toMatchObject({ state: "complete", passed, score: passed ? 1 : 0 });
  });
});

describe("the diff scorer", () => {
  const edit = { "src/cart.js": "export const total = 2;\nexport const more = 3;\n" };
  it.each([
    ["a change inside allow", edit, { allow: ["src/**"] }, true, "1 file, +2 −1"],
    [
      "a change outside allow",
      { ...edit, "README.md": "x\n" },
      { allow: ["src/**"] },
      false,
      /outside the allowed globs: README\.md/,
    ],
    [
      "a denied file",
      { "test/cart.test.js": "gamed\n" },
      { deny: ["test/**"] },
      false,
      /changed denied file test\/cart\.test\.js/,
    ],
    [
      "a deleted denied file",
      { "test/cart.test.js": null },
      { deny: ["test/**"] },
      false,
      /denied file test\/cart\.test\.js/,
    ],
    [
      "too many files",
      { ...edit, "src/b.js": "b\n" },
      { max_files: 1 },
      false,
      /2 files changed, at most 1 allowed/,
    ],
    ["too many lines", edit, { max_lines: 2 }, false, /3 lines changed, at most 2 allowed/],
    ["no change with require_change", {}, { require_change: true }, false, /the agent changed no file/],
    ["no change without require_change", {}, { max_files: 3 }, true, "0 files, +0 −0"],
  ] as const)("%s", async (_name, change, options, passed, reason) => {
    const r = await diffScorer.run(
      await scorerContext({ files: FILES, change: { ...change }, options: { type: "diff", ...options } }),
    );
    expect(r).toMatchObject({ state: "complete", passed, score: passed ? 1 : 0 });
    if (typeof reason === "string") expect(r.reason).toBe(reason);
    else expect(r.reason).toMatch(reason);
  });
});
