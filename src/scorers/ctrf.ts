/**
 * CTRF JSON reports (ctrf.io: `{ "results": { "tool", "summary", "tests": [...] } }`) → the same
 * per-test results as a JUnit report, so the `tests` scorer grades both alike. Pure: text in,
 * results out. As with JUnit, only the tests themselves are trusted, never `summary`.
 */
import type { TestCaseResult, TestOutcome } from "./test-case.js";

/** A report that cannot be read: not JSON, or not CTRF. */
export class CtrfError extends Error {
  override name = "CtrfError";
}

const MESSAGE_CAP = 300;

/** CTRF's statuses: passed, failed, skipped, pending (not run: a skip) and other (unknown: never a pass). */
const OUTCOMES: Record<string, TestOutcome> = {
  passed: "passed",
  failed: "failed",
  skipped: "skipped",
  pending: "skipped",
  other: "errored",
};

function cap(text: string): string {
  const line =
    text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find(Boolean) ?? "";
  const chars = [...line];
  return chars.length > MESSAGE_CAP ? `${chars.slice(0, MESSAGE_CAP - 1).join("")}…` : line;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** True when the text looks like a CTRF report rather than XML: what `report_format` detection asks. */
export function looksLikeCtrf(text: string): boolean {
  return text
    .replace(/^\uFEFF/, "")
    .trimStart()
    .startsWith("{");
}

/** Reads a CTRF JSON report. Throws CtrfError when it is not JSON or not CTRF. */
export function parseCtrf(json: string): TestCaseResult[] {
  const text = json.replace(/^\uFEFF/, "");
  if (!text.trim()) throw new CtrfError("the report is empty");
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new CtrfError(`the report is not JSON (${(error as Error).message})`);
  }
  const results = isObject(doc) ? doc.results : undefined;
  if (!isObject(results) || !Array.isArray(results.tests)) {
    throw new CtrfError('not a CTRF report: it has no "results.tests" list');
  }
  return results.tests.map((t, i) => {
    if (!isObject(t) || typeof t.name !== "string" || typeof t.status !== "string") {
      throw new CtrfError(`not a CTRF report: results.tests[${i}] has no "name" and "status"`);
    }
    const outcome = OUTCOMES[t.status];
    if (!outcome) {
      throw new CtrfError(
        `results.tests[${i}] ("${t.name}") has status "${t.status}"; CTRF's are passed, failed, skipped, pending, other`,
      );
    }
    const suite = Array.isArray(t.suite) ? t.suite.filter((s): s is string => typeof s === "string") : [];
    const message =
      outcome === "passed"
        ? null
        : typeof t.message === "string" && t.message.trim()
          ? cap(t.message)
          : typeof t.trace === "string" && t.trace.trim()
            ? cap(t.trace)
            : null;
    const ms = typeof t.duration === "number" && Number.isFinite(t.duration) ? t.duration : null;
    return {
      suite: suite.length > 0 ? suite.join(" > ") : null,
      classname: suite.length > 0 ? suite[suite.length - 1]! : null,
      name: t.name,
      file: typeof t.filePath === "string" && t.filePath ? t.filePath : null,
      outcome,
      message,
      time: ms === null ? null : ms / 1000,
      flaky: outcome === "passed" && t.flaky === true,
    };
  });
}
