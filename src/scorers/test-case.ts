/**
 * One test's result, as every report reader gives it (junit.ts, ctrf.ts, tap.ts), and how results
 * are counted and named. Apart from junit.ts so that the tests scorer's own module does not load
 * the XML parser: the readers are loaded on a tests scorer's first grading (docs/decisions/0237).
 */
export type TestOutcome = "passed" | "failed" | "errored" | "skipped";

export interface TestCaseResult {
  /** The innermost `<testsuite>` around the testcase, when it has a name. */
  suite: string | null;
  classname: string | null;
  name: string | null;
  file: string | null;
  outcome: TestOutcome;
  /** What the failure, error or skip says (its `message`, else the first line of its text). */
  message: string | null;
  /** Seconds, when the report gives a number. */
  time: number | null;
  /** Surefire reran it and it passed on a retry (`flakyFailure` / `flakyError`). */
  flaky: boolean;
}

export interface OutcomeCounts {
  tests: number;
  passed: number;
  failed: number;
  errored: number;
  skipped: number;
}

export function countOutcomes(cases: readonly TestCaseResult[]): OutcomeCounts {
  const c: OutcomeCounts = { tests: cases.length, passed: 0, failed: 0, errored: 0, skipped: 0 };
  for (const t of cases) c[t.outcome]++;
  return c;
}

/** How a testcase is shown: `classname > name`, or whichever of the two it has. */
export function displayName(t: Pick<TestCaseResult, "classname" | "name" | "suite">): string {
  const name = t.name ?? "(unnamed)";
  const owner = t.classname ?? t.suite;
  return owner && owner !== name ? `${owner} > ${name}` : name;
}
