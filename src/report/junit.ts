/**
 * junit.xml: one `<testcase>` per identity for test-report tools. classname is the eval file (the
 * identity's first part), name is `test_id [target]`; a failing verdict is a `<failure>`, an error
 * verdict an `<error>` (never `<skipped>`: that is for a case a pull request proposes, which does
 * not gate), with the verdict's reason as the message and each
 * attempt's outcome in the body. Pure. Valid XML 1.0 whatever an agent printed: text is escaped
 * and characters XML forbids are removed.
 */
import { cleanText } from "./text.js";
import { type AttemptTry, type CaseView, isProposed, type ReportView } from "./view.js";

/** Characters XML 1.0 allows (cleanText already removed controls and lone surrogates). */
const NOT_XML = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlText(s: string): string {
  return cleanText(s).replace(NOT_XML, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function xmlAttr(s: string): string {
  return xmlText(s).replace(/"/g, "&quot;").replace(/\n/g, "&#10;").replace(/\t/g, "&#9;");
}

const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);

function attemptLine(r: AttemptTry): string {
  const parts = [`attempt ${r.attempt}${r.retry ? ` retry ${r.retry}` : ""}: ${r.status}`];
  if (r.failureKind) parts.push(`(${r.failureKind})`);
  if (r.score !== null) parts.push(`score ${r.score.toFixed(2)}`);
  const lines = [parts.join(" ")];
  if (r.message) lines.push(`  ${r.message}`);
  for (const s of r.evidence?.scorers ?? []) {
    if (s.state === "complete" && s.passed) continue;
    // The attempt's message often is the failing scorer's reason already: say it once.
    if (!r.message?.includes(`${s.name}: ${s.reason}`)) {
      lines.push(`  ${s.name}${s.state === "error" ? " (error)" : ""}: ${s.reason}`);
    }
    for (const t of s.failingTests.slice(0, 20))
      lines.push(`    ${t.name}${t.message ? `: ${t.message}` : ""}`);
  }
  if (r.evidence?.tampered.length) lines.push(`  tampered: ${r.evidence.tampered.join(", ")}`);
  lines.push(`  evidence: ${r.dir}/`);
  return lines.join("\n");
}

function caseTime(c: CaseView): number {
  return c.runs.reduce((a, r) => a + (r.durationMs ?? 0), 0);
}

function testcase(c: CaseView): string {
  const name = `${c.testId} [${c.target}]`;
  const body = c.runs.map(attemptLine).join("\n");
  const props = [
    ["verdict", c.verdict],
    ["classification", c.classification],
    ["flaky", String(c.flaky)],
    ["attempts", `${c.attempts.passed}/${c.attempts.counted}`],
    ["change", c.change?.change ?? ""],
    ["exam", c.exam?.status ?? ""],
    ["exam_changes", c.exam?.changes.join(", ") ?? ""],
    ["result_dir", c.resultDir],
  ]
    .filter(([, v]) => v !== "")
    .map(([k, v]) => `<property name="${k}" value="${xmlAttr(v!)}"/>`)
    .join("");
  let result = "";
  const regressed = c.change?.change === "regressed" ? " (regressed)" : "";
  if (isProposed(c)) {
    // Proposed by a pull request (docs/exam.md): it ran, and does not gate until it is merged.
    result = `<skipped message="${xmlAttr(`proposed by the pull request, not gating: ${c.verdict} (${c.reason})`)}"/>`;
  } else if (c.verdict === "fail") {
    result = `<failure message="${xmlAttr(c.reason + regressed)}" type="${xmlAttr(c.classification)}">${xmlText(body)}</failure>`;
  } else if (c.verdict === "error") {
    result = `<error message="${xmlAttr(c.reason)}" type="${xmlAttr(c.classification)}">${xmlText(body)}</error>`;
  }
  // A failing or errored case says it all in its <failure>/<error>: the body once, not again here.
  const out =
    c.verdict === "pass" || isProposed(c)
      ? `<system-out>${xmlText(`${c.reason}${c.flaky ? " (flaky)" : ""}\n${body}`)}</system-out>`
      : "";
  return `    <testcase classname="${xmlAttr(c.evalPath)}" name="${xmlAttr(name)}" time="${seconds(caseTime(c))}"><properties>${props}</properties>${result}${out}</testcase>\n`;
}

export function renderJUnit(view: ReportView): string {
  const bySuite = new Map<string, CaseView[]>();
  for (const c of view.cases) {
    const key = `${c.evalPath}\u0000${c.suite}`;
    const list = bySuite.get(key);
    if (list) list.push(c);
    else bySuite.set(key, [c]);
  }
  const suites = [...bySuite.values()].map((cases) => {
    const first = cases[0]!;
    const gated = cases.filter((c) => !isProposed(c));
    const failures = gated.filter((c) => c.verdict === "fail").length;
    const errors = gated.filter((c) => c.verdict === "error").length;
    const time = cases.reduce((a, c) => a + caseTime(c), 0);
    return `  <testsuite name="${xmlAttr(first.suite)}" file="${xmlAttr(first.evalPath)}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="${cases.length - gated.length}" time="${seconds(time)}" timestamp="${xmlAttr(view.run.startedAt)}">\n${cases.map(testcase).join("")}  </testsuite>\n`;
  });
  const c = view.counts;
  const proposed = view.cases.filter(isProposed).length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="evalgate" tests="${c.cases + proposed}" failures="${c.failed}" errors="${c.errored}" skipped="${proposed}" time="${seconds(view.run.durationMs)}">\n${suites.join("")}</testsuites>\n`;
}
