/**
 * A command scorer that runs a test runner: `validate` points its author to the tests scorer, with
 * the runner's own report flags, once per eval file and runner (issue 29: nothing pointed a tape or
 * mocha user to it).
 */
import { describe, expect, it } from "vitest";
import { testRunnerTip } from "../../src/config/plan/runner-tips.js";
import { runCli, tempDir, writeFiles } from "../helpers.js";

describe("testRunnerTip", () => {
  it.each([
    ["npx tape test/*.js", "tape"],
    ["node_modules/.bin/tape t.js", "tape"],
    ["npx mocha", "mocha"],
    ["node node_modules/mocha/bin/mocha.js test", "mocha"],
    ["node --test", "node --test"],
    ["node --experimental-strip-types --test test/", "node --test"],
    ["npx vitest run", "vitest"],
    ["npx jest --ci", "jest"],
    ["python -m pytest -q", "pytest"],
    ["pytest tests/", "pytest"],
  ])("%s → %s", (run, runner) => {
    expect(testRunnerTip({ shell: run })?.runner).toBe(runner);
  });

  it.each([
    ["npm test"],
    ["make check"],
    ["./scripts/tapeworm.sh"],
    ["grep -q mochaccino x"],
  ])("%s: no tip", (run) => {
    expect(testRunnerTip({ shell: run })).toBeUndefined();
  });

  it("reads an argv too", () => {
    expect(testRunnerTip({ argv: ["npx", "mocha", "test"] })?.tests).toContain("--reporter xunit");
  });
});

describe("evalgate validate", () => {
  it("tips once per file and runner", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "app/x.js": "1\n",
      "e.eval.yaml": `targets: [{ name: n, provider: noop }]
workspace: { seed: { path: app } }
tests:
  - id: a
    instruction: x
    scorers: [{ name: unit, type: command, run: "npx tape test/*.js" }]
  - id: b
    instruction: x
    scorers: [{ name: unit, type: command, run: "npx tape test/b.js" }]
`,
    });
    const r = runCli(["validate"], dir);
    expect(r.code).toBe(0);
    const tips = `${r.stdout}${r.stderr}`.split("\n").filter((l) => l.includes("tip:"));
    expect(tips).toHaveLength(1);
    expect(tips[0]).toContain("e.eval.yaml:6: this command scorer runs tape");
    expect(tips[0]).toContain('type: tests, run: "npx tape test/*.js > report.tap", report: report.tap');
  });
});
