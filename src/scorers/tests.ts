/**
 * `tests`: runs a test command and grades the JUnit XML or CTRF JSON report it writes, with SWE-bench style
 * fail-to-pass / pass-to-pass lists. The report is the evidence; when it is missing, empty, or
 * contradicts the exit status, the scorer is an error, never a pass or a 0. Where the report is:
 * tests-report.ts.
 */
import path from "node:path";
import picomatch from "picomatch";
import type { ScorerInput } from "../config/schema/scorers.js";
import { REPORT_PLACEHOLDERS, toCommand, usesPlaceholder } from "../sandbox/commands.js";
import type { ProcessOutcome } from "../sandbox/process.js";
import { lastLines, notRun, runScorerCommand } from "./process.js";
import {
  countOutcomes,
  displayName,
  type OutcomeCounts,
  type TestCaseResult,
  type TestOutcome,
} from "./test-case.js";
import type { Scorer, ScorerContext, ScorerProblem, ScorerResult } from "./types.js";

type TestsOptions = Extract<ScorerInput, { type: "tests" }>;

/** A listed test's fate: the worst outcome of the testcases it names, or `missing`. */
export type ListedOutcome = TestOutcome | "missing";

export interface ListedTest {
  test: string;
  outcome: ListedOutcome;
  /** How many testcases of the report the name matched (duplicates all count). */
  matched: number;
  message: string | null;
}

export interface TestsVerdict {
  passed: boolean;
  reason: string;
  counts: OutcomeCounts;
  failToPass: ListedTest[];
  passToPass: ListedTest[];
}

const _REPORT_CAP_BYTES = 64 * 1024 * 1024;
/** Per-test outcomes kept in grading.json; a suite of thousands keeps its failures and counts. */
const RECORDED_TESTS = 1000;
const SEPARATORS = [".", "::", " > ", " ", "/", "#"];

/**
 * The names a testcase answers to: its name alone, or qualified by its classname (or suite, or
 * file) with any usual separator, as `pytest`, vitest, Jest, Go and Surefire users write them.
 */
export function namesOf(t: TestCaseResult): Set<string> {
  const out = new Set<string>();
  if (t.name === null) return out;
  out.add(t.name);
  for (const owner of [t.classname, t.suite, t.file]) {
    if (!owner) continue;
    for (const sep of SEPARATORS) out.add(`${owner}${sep}${t.name}`);
  }
  return out;
}

/** `tests/test_cart.py::TestCart::test_total` → `tests.test_cart.TestCart.test_total` (pytest's classname.name). */
function pytestNodeIdAsDotted(id: string): string | undefined {
  if (!id.includes("::")) return undefined;
  const [file, ...rest] = id.split("::");
  return [file!.replace(/\.py$/, "").replaceAll("/", "."), ...rest].join(".");
}

function worst(outcomes: TestOutcome[]): TestOutcome {
  for (const o of ["failed", "errored", "skipped"] as const) if (outcomes.includes(o)) return o;
  return "passed";
}

export function findListed(listed: string, cases: readonly TestCaseResult[]): ListedTest {
  const want = listed.trim();
  const dotted = pytestNodeIdAsDotted(want);
  const hits = cases.filter((t) => {
    const names = namesOf(t);
    return names.has(want) || (dotted !== undefined && names.has(dotted));
  });
  if (hits.length === 0) return { test: listed, outcome: "missing", matched: 0, message: null };
  const outcome = worst(hits.map((h) => h.outcome));
  const message = hits.find((h) => h.outcome === outcome)?.message ?? null;
  return { test: listed, outcome, matched: hits.length, message };
}

function describe(t: ListedTest): string {
  const what = t.outcome === "missing" ? "not in the report" : t.outcome;
  return `${t.test} (${what}${t.message ? `: ${t.message}` : ""})`;
}

function listText(items: string[], n = 3): string {
  return items.length <= n
    ? items.join(", ")
    : `${items.slice(0, n).join(", ")} and ${items.length - n} more`;
}

function countsText(c: OutcomeCounts): string {
  const parts = [`${c.passed} passed`];
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.errored) parts.push(`${c.errored} errored`);
  if (c.skipped) parts.push(`${c.skipped} skipped`);
  return `${c.tests} test${c.tests === 1 ? "" : "s"}: ${parts.join(", ")}`;
}

/**
 * The verdict on a report that has tests. With lists, every fail_to_pass test must pass (skipped or
 * missing does not) and no pass_to_pass test may fail or go missing; tests outside the lists do not
 * count. Without lists, no test may fail or error, and at least one must pass.
 */
export function judgeTests(
  cases: readonly TestCaseResult[],
  lists: { failToPass?: readonly string[]; passToPass?: readonly string[] },
): TestsVerdict {
  const counts = countOutcomes(cases);
  const failToPass = (lists.failToPass ?? []).map((n) => findListed(n, cases));
  const passToPass = (lists.passToPass ?? []).map((n) => findListed(n, cases));
  if (failToPass.length === 0 && passToPass.length === 0) {
    const failing = cases.filter((t) => t.outcome === "failed" || t.outcome === "errored");
    if (failing.length > 0) {
      const names = failing.map((t) => `${displayName(t)}${t.message ? ` (${t.message})` : ""}`);
      return {
        passed: false,
        reason: `${failing.length} of ${counts.tests} tests failed: ${listText(names)}`,
        counts,
        failToPass,
        passToPass,
      };
    }
    if (counts.passed === 0) {
      return {
        passed: false,
        reason: `no test passed: all ${counts.tests} were skipped`,
        counts,
        failToPass,
        passToPass,
      };
    }
    return {
      passed: true,
      reason: `all tests passed (${countsText(counts)})`,
      counts,
      failToPass,
      passToPass,
    };
  }
  const f2pBad = failToPass.filter((t) => t.outcome !== "passed");
  const p2pBad = passToPass.filter((t) => t.outcome !== "passed" && t.outcome !== "skipped");
  const problems: string[] = [];
  if (f2pBad.length) problems.push(`fail_to_pass not passing: ${listText(f2pBad.map(describe))}`);
  if (p2pBad.length) problems.push(`pass_to_pass broken: ${listText(p2pBad.map(describe))}`);
  if (problems.length > 0) {
    return { passed: false, reason: problems.join("; "), counts, failToPass, passToPass };
  }
  const parts: string[] = [];
  if (failToPass.length) parts.push(`fail_to_pass ${failToPass.length}/${failToPass.length} passed`);
  if (passToPass.length) {
    const skipped = passToPass.filter((t) => t.outcome === "skipped").length;
    parts.push(
      `pass_to_pass ${passToPass.length - skipped}/${passToPass.length} passed${skipped ? ` (${skipped} skipped)` : ""}`,
    );
  }
  return {
    passed: true,
    reason: `${parts.join(", ")} (${countsText(counts)})`,
    counts,
    failToPass,
    passToPass,
  };
}

function wireListed(t: ListedTest) {
  return { test: t.test, outcome: t.outcome, matched: t.matched, message: t.message };
}

export const testsScorer: Scorer = {
  check(options: ScorerInput): ScorerProblem[] {
    const o = options as TestsOptions;
    const problems: ScorerProblem[] = [];
    const usesPlace = REPORT_PLACEHOLDERS.some((p) => usesPlaceholder(toCommand(o.run), p));
    if (o.report === undefined) {
      // Nothing to check: the command writes {REPORT_FILE} (or $EVALGATE_REPORT_FILE).
    } else if (usesPlace) {
      problems.push({
        at: ["report"],
        message: "the command writes {REPORT_FILE} or {REPORT_DIR}, so report: names nothing it writes",
        hint: "remove report: (the report is read from {REPORT_FILE})",
      });
    } else if (path.isAbsolute(o.report) || o.report.split(/[\\/]/).includes("..")) {
      problems.push({
        at: ["report"],
        message: `report "${o.report}" is outside the workspace`,
        hint: "give a path relative to the workspace (or to cwd), e.g. junit.xml or reports/*.xml",
      });
    } else if (picomatch.scan(o.report).isGlob) {
      try {
        picomatch.makeRe(o.report, { dot: true, strictBrackets: true });
      } catch (e) {
        problems.push({ at: ["report"], message: `bad glob "${o.report}": ${(e as Error).message}` });
      }
    }
    for (const key of ["fail_to_pass", "pass_to_pass"] as const) {
      const seen = new Set<string>();
      (o[key] ?? []).forEach((name, i) => {
        if (seen.has(name.trim())) {
          problems.push({ at: [key, i], message: `"${name}" is listed twice` });
        }
        seen.add(name.trim());
      });
    }
    const both = [...new Set(o.fail_to_pass ?? [])].filter((n) => (o.pass_to_pass ?? []).includes(n));
    if (both.length > 0) {
      problems.push({
        at: ["pass_to_pass"],
        message: `${listText(both.map((b) => `"${b}"`))} ${both.length > 1 ? "are" : "is"} both fail_to_pass and pass_to_pass`,
        hint: "a test belongs to one list",
      });
    }
    return problems;
  },

  async run(ctx: ScorerContext): Promise<ScorerResult> {
    const o = ctx.spec.options as TestsOptions;
    // Loaded on the first grading: the report parsers (fast-xml-parser and its dependencies, about
    // 140 kB of the bundle) are not evaluated by `validate` and the other commands that run no
    // scorer (docs/decisions/0237).
    const { freshPlace, readReports, workspacePlace } = await import("./tests-report.js");
    const place = o.report === undefined ? await freshPlace(ctx, o) : await workspacePlace(ctx, o, o.report);
    try {
      const outcome = await runScorerCommand(ctx, o, false, place.extra);
      const broken = notRun(outcome, ctx.spec.timeoutMs);
      if (broken) return broken;
      const read = await readReports(place, o.report_format);
      if ("state" in read) return read;
      return judge(o, outcome, read.cases, read.read);
    } finally {
      await place.done();
    }
  },
};

function judge(
  o: TestsOptions,
  outcome: ProcessOutcome,
  cases: TestCaseResult[],
  read: string[],
): ScorerResult {
  const exitCode = outcome.exitCode;
  const baseDetails = { exit_code: exitCode, reports: read };
  if (read.length === 0) {
    return {
      state: "error",
      reason: `the command (exit ${exitCode}) wrote no report at ${o.report ?? "{REPORT_FILE}"}: ${lastLines(outcome.tail) || "no output"}`,
      details: baseDetails,
    };
  }
  if (cases.length === 0) {
    return {
      state: "error",
      reason: `the report has no tests (${read.join(", ")}; exit ${exitCode}): the suite did not really run${outcome.tail.trim() ? `: ${lastLines(outcome.tail, 2)}` : ""}`,
      details: { ...baseDetails, counts: countOutcomes(cases) },
    };
  }
  const counts = countOutcomes(cases);
  if (exitCode !== 0 && counts.failed + counts.errored === 0) {
    return {
      state: "error",
      reason: `the command exited ${exitCode} but its report shows no failing test, so it cannot be trusted: ${lastLines(outcome.tail) || "no output"}`,
      details: { ...baseDetails, counts },
    };
  }
  const verdict = judgeTests(cases, { failToPass: o.fail_to_pass, passToPass: o.pass_to_pass });
  const failing = cases.filter((t) => t.outcome === "failed" || t.outcome === "errored");
  return {
    state: "complete",
    score: verdict.passed ? 1 : 0,
    passed: verdict.passed,
    reason: verdict.reason,
    details: {
      ...baseDetails,
      counts,
      fail_to_pass: verdict.failToPass.map(wireListed),
      pass_to_pass: verdict.passToPass.map(wireListed),
      failing: failing
        .slice(0, 100)
        .map((t) => ({ test: displayName(t), outcome: t.outcome, message: t.message })),
      tests: cases.slice(0, RECORDED_TESTS).map((t) => ({
        suite: t.suite,
        classname: t.classname,
        name: t.name,
        outcome: t.outcome,
        message: t.message,
        time: t.time,
        flaky: t.flaky,
      })),
      tests_truncated: cases.length > RECORDED_TESTS,
    },
  };
}
