/** The plain-text table of cases printed at the end of a run (and a merge). Pure. */
import { shardFinished } from "./format.js";
import type { CaseView, ReportView } from "./view.js";

const VERDICT: Record<CaseView["verdict"], string> = { pass: "✓ pass", fail: "✗ fail", error: "! error" };

function pad(s: string, n: number): string {
  const len = [...s].length;
  return len >= n ? s : s + " ".repeat(n - len);
}

/** A flip the gate does not count (`counted`, when known) is not called "regressed": it may be noise. */
function changeText(r: CaseView, counted?: ReadonlySet<CaseView>): string {
  const c = r.change;
  if (!c) return "";
  if (c.change === "new") return "new";
  const base = c.baseAttempts ? ` (base ${c.baseAttempts.passed}/${c.baseAttempts.counted})` : "";
  const word = c.change === "regressed" && counted && !counted.has(r) ? "flipped (not counted)" : c.change;
  return `${word}${base}${c.significant ? " *" : ""}`;
}

/** How the case stands to an exam read from another commit (docs/exam.md). */
function examText(r: CaseView): string {
  const e = r.exam;
  if (!e) return "";
  if (e.status === "proposed") return "proposed, not gating";
  if (e.status === "removed") return "removed here, ran from the exam";
  return `changed here: ${e.changes.join(", ")}`;
}

export function renderCaseTable(rows: readonly CaseView[], counted?: ReadonlySet<CaseView>): string {
  const withChange = rows.some((r) => r.change);
  const withExam = rows.some((r) => r.exam);
  const header = [
    "verdict",
    "test",
    "target",
    "attempts",
    "success",
    "class",
    ...(withChange ? ["vs base"] : []),
    ...(withExam ? ["exam"] : []),
  ];
  const body = rows.map((r) => [
    // A verdict the table does not know (a damaged record) is not a pass, and never a crash.
    VERDICT[r.verdict] ?? `! ${String(r.verdict)}`,
    `${r.suite}/${r.testId}`,
    r.target,
    r.attempts
      ? `${r.attempts.passed}/${r.attempts.counted}${r.attempts.errored ? ` (+${r.attempts.errored} err)` : ""}`
      : "—",
    typeof r.successRate === "number" ? `${Math.round(r.successRate * 100)} %` : "—",
    `${r.classification}${r.flaky && r.classification !== "flaky" ? " (flaky)" : ""}${r.admission?.state === "reported" ? " · not gating" : ""}`,
    ...(withChange ? [changeText(r, counted)] : []),
    ...(withExam ? [examText(r)] : []),
  ]);
  const widths = header.map((h, i) => Math.max([...h].length, ...body.map((b) => [...String(b[i])].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => pad(String(c), widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(header), ...body.map(line)].join("\n");
}

export function renderRunFooter(
  summary: Pick<ReportView, "counts" | "run" | "gate" | "comparison">,
  bundleDir: string,
): string {
  const c = summary.counts;
  const shard = summary.run.shard;
  if (shard) return `${shardFinished(shard, c)}\nbundle: ${bundleDir}`;
  const head =
    summary.gate.verdict === "pass"
      ? `✓ gate passed: ${c.passed} of ${c.cases} cases passed`
      : `✗ gate failed: ${c.passed} of ${c.cases} cases passed`;
  const extra = [
    c.failed ? `${c.failed} failed` : "",
    c.errored ? `${c.errored} errored` : "",
    c.flaky ? `${c.flaky} flaky` : "",
  ]
    .filter(Boolean)
    .join(", ");
  const lines = [`${head}${extra ? ` (${extra})` : ""}`];
  for (const r of summary.gate.reasons) lines.push(`  - ${r}`);
  for (const w of summary.gate.warnings ?? []) lines.push(`  ! ${w}`);
  const cmp = summary.comparison;
  if (cmp) {
    lines.push(
      `baseline ${cmp.baselineRunId}${(cmp.baselineRuns ?? 1) > 1 ? ` (newest of ${cmp.baselineRuns} runs pooled)` : ""}: ${cmp.regressed} regressed, ${cmp.improved} improved, ${cmp.new} new, ${cmp.removed} removed, ${cmp.unchanged} unchanged`,
    );
  }
  lines.push(`bundle: ${bundleDir}`);
  return lines.join("\n");
}
