/**
 * A `command` scorer that runs a test runner grades by exit status only: its reason is an excerpt of
 * the output, and fail_to_pass / pass_to_pass cannot be used. Where the runner can write a report
 * the `tests` scorer reads (JUnit XML, CTRF or TAP), `validate` says how, once per runner and file.
 */
import type { Command } from "../../sandbox/commands.js";

interface Runner {
  name: string;
  /** Matches the command line (a shell line, or an argv joined with spaces). */
  test: RegExp;
  /** The `tests` scorer's keys that grade the same run by its report. */
  tests: string;
}

const RUNNERS: readonly Runner[] = [
  {
    name: "tape",
    test: /(^|[\s/])tape(\s|$)/,
    tests: 'run: "npx tape test/*.js > report.tap", report: report.tap',
  },
  {
    name: "mocha",
    test: /(^|[\s/])mocha(\.js)?(\s|$)/,
    tests: 'run: "npx mocha --reporter xunit --reporter-option output=junit.xml", report: junit.xml',
  },
  {
    name: "node --test",
    test: /(^|[\s/])node\s+(.*\s)?--test(\s|$)/,
    tests:
      'run: "node --test --test-reporter=junit --test-reporter-destination=junit.xml", report: junit.xml',
  },
  {
    name: "vitest",
    test: /(^|[\s/])vitest(\s|$)/,
    tests: 'run: "npx vitest run --reporter=junit --outputFile=junit.xml", report: junit.xml',
  },
  {
    name: "jest",
    test: /(^|[\s/])jest(\s|$)/,
    tests:
      'run: "npx jest --ci --reporters=default --reporters=jest-junit", report: junit.xml (with the jest-junit package)',
  },
  {
    name: "pytest",
    test: /(^|[\s/])(py\.test|pytest)(\s|$)/,
    tests: 'run: "python -m pytest --junitxml=junit.xml", report: junit.xml',
  },
];

/** The test runner a scorer command runs and the `tests` scorer that would read its report. */
export function testRunnerTip(command: Command): { runner: string; tests: string } | undefined {
  const line = "argv" in command ? command.argv.join(" ") : command.shell;
  const runner = RUNNERS.find((r) => r.test.test(line));
  return runner ? { runner: runner.name, tests: runner.tests } : undefined;
}
