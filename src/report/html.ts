/**
 * report.html: one self-contained page (inline CSS, no script, no request to anything; a
 * Content-Security-Policy forbids them in case anything slipped through) with every case, its
 * attempts, scorer results, diffs and log tails, and the gate's reasons. Pure. Every text is
 * escaped; evidence files are linked by their bundle-relative paths, so the page works where the
 * bundle is unpacked.
 */
import { agentNeverRan } from "../run/status.js";
import { caseIcon, caseLabel, STATUS_ICON, tryLabel } from "./comment-case.js";
import { regressionsOf } from "./comment-head.js";
import {
  comparableBaseTargets,
  count,
  duration,
  percent,
  plural,
  pointsDelta,
  policyText,
  shortSha,
  targetCells,
  tokens,
  totalTokens,
  usd,
} from "./format.js";
import { attemptsTimeline, historyChart, rateChart } from "./svg.js";
import { cleanText, tailLines } from "./text.js";
import {
  type AttemptTry,
  type CaseView,
  caseFlags,
  type Excerpt,
  needsReview,
  type ReportView,
  reviewOrder,
  type ScorerView,
} from "./view.js";

export function esc(s: string): string {
  return cleanText(s)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** A link to a bundle file by its relative path (each segment percent-encoded). */
function fileLink(rel: string, label = rel): string {
  const href = rel
    .split("/")
    .map((part) => (part ? encodeURIComponent(part) : ""))
    .join("/");
  return `<a href="${esc(href)}">${esc(label)}</a>`;
}

const CSS = `
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;--line:#d1d9e0;--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--code:#f6f8fa;--add:#dafbe1;--del:#ffebe9;--hunk:#ddf4ff}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--line:#3d444d;--pass:#3fb950;--fail:#f85149;--warn:#d29922;--code:#151b23;--add:#12261e;--del:#25171c;--hunk:#121d2f}}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;padding:1.5rem;max-width:1200px}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.2rem;border-bottom:1px solid var(--line);padding-bottom:.3rem;margin-top:2rem}
.pass{color:var(--pass)}.fail{color:var(--fail)}.warn{color:var(--warn)}.muted{color:var(--muted)}
table{border-collapse:collapse;margin:.5rem 0;font-size:13px}th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:var(--code)}td.n{text-align:right;white-space:nowrap}
code,pre{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--code);border-radius:4px}
code{padding:.1rem .3rem}pre{padding:.6rem;overflow:auto;max-height:40rem;white-space:pre}
pre span{display:block}.add{background:var(--add)}.del{background:var(--del)}.hunk{background:var(--hunk)}.meta{font-weight:600}
details{margin:.4rem 0}details.case{border:1px solid var(--line);border-radius:6px;padding:.3rem .8rem}
summary{cursor:pointer}dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:.5rem 0}dt{color:var(--muted)}dd{margin:0}
.attempt{border-top:1px dashed var(--line);margin-top:.6rem;padding-top:.4rem}ul{margin:.3rem 0}
`;

function diffHtml(text: string): string {
  return text
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => {
      const cls =
        /^(diff --git|index |--- |\+\+\+ |new file|deleted file|rename |similarity |old mode|new mode|Binary files)/.test(
          line,
        )
          ? "meta"
          : line.startsWith("@@")
            ? "hunk"
            : line.startsWith("+")
              ? "add"
              : line.startsWith("-")
                ? "del"
                : "";
      return `<span${cls ? ` class="${cls}"` : ""}>${esc(line) || " "}</span>`;
    })
    .join("");
}

function excerptBlock(title: string, x: Excerpt, kind: "diff" | "log", open: boolean): string {
  const body = kind === "log" ? tailLines(x.text, 200, 16_000).text : x.text;
  const cut = x.truncated
    ? ` <span class="muted">(${kind === "log" ? "the end" : "the start"} of ${count(x.totalBytes)} bytes)</span>`
    : "";
  return `<details${open ? " open" : ""}><summary>${esc(title)}${cut} · ${fileLink(x.path, "file")}</summary><pre>${kind === "diff" ? diffHtml(body) : esc(body)}</pre></details>`;
}

function scorerRows(scorers: ScorerView[]): string {
  const rows = scorers.map((s) => {
    const state =
      s.state === "error"
        ? `<span class="fail">error${s.timedOut ? " (timed out)" : ""}</span>`
        : s.passed
          ? `<span class="pass">passed</span>`
          : `<span class="fail">failed</span>`;
    const tests = s.failingTests.length
      ? `<ul>${s.failingTests.map((t) => `<li><code>${esc(t.name)}</code>${t.outcome !== "failed" ? ` (${esc(t.outcome)})` : ""}${t.message ? `: ${esc(t.message)}` : ""}</li>`).join("")}${s.failingTestsTotal > s.failingTests.length ? `<li>and ${count(s.failingTestsTotal - s.failingTests.length)} more</li>` : ""}</ul>`
      : "";
    const logTail = s.logTail?.text.trim()
      ? `<details><summary>log, the last lines</summary><pre>${esc(tailLines(s.logTail.text, 40, 4000).text)}</pre></details>`
      : "";
    return `<tr><td><code>${esc(s.name)}</code>${s.log ? ` ${fileLink(s.log, "log")}` : ""}</td><td>${esc(s.type)}</td><td class="n">${s.weight.toFixed(2)}${s.required ? " required" : ""}</td><td>${state}</td><td class="n">${s.score === null ? "—" : s.score.toFixed(2)}</td><td>${esc(s.reason)}${tests}${logTail}</td><td class="n">${duration(s.durationMs)}</td></tr>`;
  });
  return `<table><tr><th>scorer</th><th>type</th><th>weight</th><th>state</th><th>score</th><th>reason</th><th>time</th></tr>${rows.join("")}</table>`;
}

function attemptHtml(r: AttemptTry): string {
  const e = r.evidence;
  const facts = [
    `${STATUS_ICON[r.status]} ${esc(r.status)}${r.failureKind ? ` (${esc(r.failureKind)})` : ""}`,
    r.score !== null ? `score ${r.score.toFixed(2)}` : "",
    r.passRate !== null ? `pass rate ${percent(r.passRate)}` : "",
    duration(r.durationMs),
    totalTokens(e?.usage ?? null) !== null ? `${tokens(totalTokens(e!.usage))} tokens` : "",
    e?.usage?.costUsd != null ? usd(e.usage.costUsd) : "",
    r.counted ? "" : "not counted",
  ].filter(Boolean);
  const parts = [
    `<div class="attempt" id="${esc(r.dir)}"><b>${tryLabel(r)}</b> · ${facts.join(" · ")} · ${fileLink(`${r.dir}/result.json`, "result.json")}`,
  ];
  if (r.message) parts.push(`<p>${esc(r.message)}</p>`);
  if (e?.agent && (e.agent.exitCode !== 0 || e.agent.timedOut || e.agent.error)) {
    parts.push(
      `<p class="muted">agent: ${e.agent.timedOut ? "timed out" : e.agent.exitCode === null ? `signal ${esc(e.agent.signal ?? "?")}` : `exit ${e.agent.exitCode}`}${e.agent.error ? ` — ${esc(e.agent.error)}` : ""} after ${duration(e.agent.durationMs)}</p>`,
    );
  }
  if (e?.tampered.length) {
    parts.push(
      `<p class="fail">Tampered (restored before scoring): ${e.tampered.map((f) => `<code>${esc(f)}</code>`).join(", ")}</p>`,
    );
  }
  if (e?.scorers?.length) parts.push(scorerRows(e.scorers));
  if (e?.diffStat) {
    const s = e.diffStat;
    const title = s.files.length
      ? `Diff: +${s.additions} −${s.deletions}, ${plural(s.files.length, "file")}`
      : "Diff: no changes";
    // An empty diff.patch is "no changes" in words, never an empty box.
    if (e.diff?.text.trim()) parts.push(excerptBlock(title, e.diff, "diff", r.status !== "passed"));
    else if (s.files.length)
      parts.push(`<p>${esc(title)} · ${fileLink(`${r.dir}/diff.patch`, "diff.patch")}</p>`);
    else parts.push(`<p class="muted">${esc(title)}</p>`);
  }
  if (e?.logTail?.text.trim()) parts.push(excerptBlock("Agent log", e.logTail, "log", false));
  else if (!agentNeverRan(r.failureStage))
    parts.push(`<p class="muted">${fileLink(`${r.dir}/agent.log`, "agent.log")}</p>`);
  for (const p of e?.problems ?? []) parts.push(`<p class="warn">${esc(p)}</p>`);
  parts.push("</div>");
  return parts.join("\n");
}

function changeText(c: CaseView, counted: ReadonlySet<CaseView>): string {
  const ch = c.change;
  if (!ch) return "—";
  const word = ch.change === "regressed" && !counted.has(c) ? "flipped (not counted)" : ch.change;
  const base = ch.baseAttempts ? `base ${ch.baseAttempts.passed}/${ch.baseAttempts.counted}` : "";
  const delta = ch.successRateDelta !== null ? pointsDelta(ch.successRateDelta) : "";
  const p = ch.pValue !== null ? `p = ${ch.pValue.toFixed(3)}${ch.significant ? " (significant)" : ""}` : "";
  return [word, base, delta, p].filter(Boolean).join(" · ");
}

/**
 * Above this many cases, or this many attempts, a case that needs no review is one line linking its
 * files in the bundle (its evidence is read from there when wanted), so a report of thousands of
 * cases, or of a few cases repeated hundreds of times, stays small.
 */
export const COMPACT_ABOVE = 200;
export const COMPACT_ABOVE_ATTEMPTS = 1000;

/** Whether report.html shows the cases that need no review as one line each (see COMPACT_ABOVE). */
export function compactReport(cases: number, attempts: number): boolean {
  return cases > COMPACT_ABOVE || attempts > COMPACT_ABOVE_ATTEMPTS;
}

function compactCase(c: CaseView, i: number, multi: boolean): string {
  const a = c.attempts;
  const runs = c.runs
    .map(
      (r) =>
        `${tryLabel(r)} ${STATUS_ICON[r.status]} ${fileLink(`${r.dir}/diff.patch`, "diff")} ${fileLink(`${r.dir}/agent.log`, "log")}`,
    )
    .join(" · ");
  return `<p class="case" id="case-${i}">${caseIcon(c)} <b>${esc(caseLabel(c, multi))}</b> · ${esc(c.target)} · ${a.passed}/${a.counted} attempts passed · ${esc(c.reason)} · ${fileLink(`${c.resultDir}/`, "files")} · ${runs}</p>`;
}

function caseSection(
  c: CaseView,
  i: number,
  multi: boolean,
  counted: ReadonlySet<CaseView>,
  compact = false,
): string {
  if (compact && !needsReview(c)) return compactCase(c, i, multi);
  const a = c.attempts;
  const flags = caseFlags(c, counted);
  const stats = [
    ["eval file", `<code>${esc(c.evalPath)}</code>`],
    ["provider", `${esc(c.provider)}${c.model ? ` · ${esc(c.model)}` : ""}`],
    ["verdict", `${esc(c.verdict)} (${esc(c.classification)}) — ${esc(c.reason)}`],
    ["policy", c.policy ? `${esc(policyText(c.policy))}, on_error ${esc(c.policy.onError)}` : "—"],
    [
      "attempts",
      `${a.passed} passed, ${a.failed} failed, ${a.errored} errored${a.cancelled ? `, ${a.cancelled} cancelled` : ""}${a.retried ? `, ${a.retried} retried` : ""} (${a.counted} counted of ${a.planned} planned)`,
    ],
    [
      "success rate",
      `${percent(c.successRate)}${c.wilson95 ? ` (95 % interval ${percent(c.wilson95[0])}–${percent(c.wilson95[1])})` : ""}${c.evidence === "inconclusive" ? " · <b>inconclusive</b>: the attempts did not settle the verdict" : ""}<br>${rateChart(
        [
          {
            label: c.target,
            head: { passed: a.passed, counted: a.counted },
            base: c.change?.baseAttempts ?? null,
          },
        ],
        c.policy?.threshold ?? null,
      )}`,
    ],
    ["attempts timeline", attemptsTimeline(c.runs)],
    ...(c.history && c.history.length > 0
      ? ([
          [
            "base history",
            historyChart(
              [...c.history].reverse().map((h) => ({
                label: h.gitSha?.slice(0, 7) ?? h.runId,
                passed: h.passed,
                counted: h.counted,
              })),
              { label: "this run", passed: a.passed, counted: a.counted },
              c.policy?.threshold ?? null,
            ) || esc(`${c.history.length} base run: ${c.history[0]!.passed}/${c.history[0]!.counted}`),
          ],
        ] as [string, string][])
      : []),
    ["mean score", c.meanScore === null ? "—" : c.meanScore.toFixed(2)],
    ["mean pass rate", percent(c.meanPassRate)],
    ["vs base", esc(changeText(c, counted))],
    ["usage", c.usage ? `${tokens(totalTokens(c.usage))} tokens · ${usd(c.usage.costUsd)}` : "—"],
    ["files", fileLink(`${c.resultDir}/`)],
  ];
  const runs = c.runs
    .map((r) =>
      r.evidence
        ? attemptHtml(r)
        : `<div class="attempt"><b>${tryLabel(r)}</b> · ${STATUS_ICON[r.status]} ${esc(r.status)} · ${r.score === null ? "" : `score ${r.score.toFixed(2)} · `}${duration(r.durationMs)}${agentNeverRan(r.failureStage) ? "" : ` · ${fileLink(`${r.dir}/diff.patch`, "diff.patch")} · ${fileLink(`${r.dir}/agent.log`, "agent.log")}`}${r.message ? `<p>${esc(r.message)}</p>` : ""}</div>`,
    )
    .join("\n");
  return `<details class="case" id="case-${i}"${needsReview(c) ? " open" : ""}><summary>${caseIcon(c)} <b>${esc(caseLabel(c, multi))}</b> · ${esc(c.target)} · ${a.passed}/${a.counted} attempts passed${flags.length ? ` · ${esc(flags.join(", "))}` : ""}</summary>
<dl>${stats.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>
${runs}
</details>`;
}

/** What the pull request changes in its exam, and the cases it proposes (docs/exam.md). */
function examSection(view: ReportView): string {
  const exam = view.exam;
  if (!exam) return "";
  const items = [
    ...exam.files.map(
      (f) => `${f.evalPath}: ${f.change}${f.changes.length ? ` (${f.changes.join("; ")})` : ""}`,
    ),
    ...view.cases
      .filter((c) => c.exam && c.exam.status !== "proposed")
      .map(
        (c) =>
          `${c.suite}/${c.testId} on ${c.target}: ${c.exam!.status}${c.exam!.changes.length ? ` (${c.exam!.changes.join(", ")})` : ""}`,
      ),
    ...exam.quarantine.map((q) => `the quarantine file: ${q}`),
  ];
  const proposed = view.cases
    .filter((c) => c.exam?.status === "proposed")
    .map((c) => `${c.suite}/${c.testId} on ${c.target}: ${c.verdict}`);
  return `<h2>Exam</h2><p>Judged by the base commit <code>${esc(exam.sha.slice(0, 7))}</code>'s exam; what the pull request changes applies after merge.</p>${items.length ? `<ul>${items.map((r) => `<li>${esc(r)}</li>`).join("")}</ul>` : ""}${proposed.length ? `<p>Proposed by the pull request (not gating):</p><ul>${proposed.map((r) => `<li>${esc(r)}</li>`).join("")}</ul>` : ""}`;
}

function targetTable(view: ReportView): string {
  const base = comparableBaseTargets(view);
  const rows = view.targets.map((t) => {
    const b = base?.get(t.name);
    const c = targetCells(t, b);
    const num = (x: string) => `<td class="n">${esc(x)}</td>`;
    return `<tr><td>${esc(t.name)}${t.model ? ` <span class="muted">${esc(t.model)}</span>` : ""}${base && !b ? " · new" : ""}</td><td>${esc(t.provider)}</td>${num(count(t.cases))}${[c.passed, c.failed, c.flaky, c.errored, c.rate, c.cost, c.tokens].map(num).join("")}</tr>`;
  });
  return `<table><tr><th>target</th><th>provider</th><th>cases</th><th>passed</th><th>failed</th><th>flaky</th><th>errors</th><th>attempt success</th><th>cost</th><th>tokens</th></tr>${rows.join("")}</table>`;
}

/** Per-target attempt success rates with their 95 % intervals, base beside head. */
function targetChart(view: ReportView): string {
  const base = comparableBaseTargets(view);
  return rateChart(
    view.targets.map((t) => {
      const b = base?.get(t.name);
      return {
        label: t.name,
        head: { passed: t.attemptsPassed, counted: t.attempts },
        base: b ? { passed: b.attemptsPassed, counted: b.attempts } : null,
      };
    }),
  );
}

export function renderHtml(view: ReportView): string {
  const pass = view.gate.verdict === "pass";
  const c = view.counts;
  const multi = new Set(view.cases.map((x) => x.suite)).size > 1;
  const ordered = reviewOrder(view.cases);
  const index = new Map(view.cases.map((x, i) => [x, i]));
  const cmp = view.comparison;
  const counted = regressionsOf(view).counted;
  const compact = compactReport(
    view.cases.length,
    view.cases.reduce((n, x) => n + x.runs.length, 0),
  );
  const title = `evalgate: gate ${pass ? "passed" : "failed"} — ${view.suites.map((s) => s.name).join(", ")}`;
  const caseRows = ordered.map((x) => {
    const i = index.get(x)!;
    return `<tr><td>${caseIcon(x)} ${esc(x.verdict)}</td><td><a href="#case-${i}">${esc(caseLabel(x, multi))}</a></td><td>${esc(x.target)}</td><td class="n">${x.attempts.passed}/${x.attempts.counted}${x.attempts.errored ? ` +${x.attempts.errored} err` : ""}</td><td class="n">${percent(x.successRate)}</td><td>${esc(changeText(x, counted))}</td><td>${esc(caseFlags(x, counted).join(", "))}</td></tr>`;
  });
  const list = (items: string[]) => `<ul>${items.map((r) => `<li>${esc(r)}</li>`).join("")}</ul>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1 class="${pass ? "pass" : "fail"}">${view.run.interrupted ? `⏹️ Cancelled: ${esc(view.run.interrupted)}` : pass ? "✅ Gate passed" : "❌ Gate failed"}</h1>
<p><b>${plural(c.cases, "case")}</b> · ${count(c.passed)} passed · ${count(c.failed)} failed · ${count(c.flaky)} flaky · ${count(c.errored)} errored · ${plural(c.attempts, "attempt")} (${count(c.attemptsPassed)} passed)</p>
<p class="muted">${view.suites.map((s) => `<b>${esc(s.name)}</b> <code>${esc(s.evalPath)}</code>`).join(", ")} · run <code>${esc(view.run.id)}</code>${view.git?.sha ? ` · commit <code>${esc(shortSha(view.git.sha)!)}</code>` : ""}${cmp ? ` · baseline <code>${esc(cmp.baselineRunId)}</code>${cmp.baselineSha ? ` (<code>${esc(shortSha(cmp.baselineSha)!)}</code>)` : ""}: ${cmp.regressed} regressed, ${cmp.improved} improved, ${cmp.new} new, ${cmp.removed} removed` : " · no baseline"} · ${duration(view.run.durationMs)}${view.usage?.costUsd != null ? ` · ${usd(view.usage.costUsd)}` : ""}</p>
</header>
<h2>${view.run.interrupted ? "What did not finish" : pass ? "What the gate checked" : "Why the gate failed"}</h2>
${list(view.run.interrupted ? view.gate.reasons.slice(1) : view.gate.reasons)}
${view.gate.warnings.length ? `<h2>Warnings</h2>${list(view.gate.warnings)}` : ""}${examSection(view)}
<h2>Targets</h2>
${targetTable(view)}
${targetChart(view)}
<h2>Cases</h2>
<table><tr><th></th><th>test</th><th>target</th><th>attempts</th><th>success</th><th>vs base</th><th>flags</th></tr>${caseRows.join("")}</table>
${cmp?.removedCases.length ? `<h2>Removed since the base</h2>${list(cmp.removedCases.map((r) => `${r.suite}/${r.testId} on ${r.target} (was ${r.baseVerdict})`))}` : ""}
${view.problems.length ? `<h2>Unreadable files</h2>${list(view.problems)}` : ""}
<h2>Details</h2>
${ordered.map((x) => caseSection(x, index.get(x)!, multi, counted, compact)).join("\n")}
<footer><p class="muted">evalgate ${esc(view.run.evalgateVersion)} · run ${esc(view.run.id)} · ${esc(view.run.startedAt)} – ${esc(view.run.finishedAt)}</p></footer>
</body>
</html>
`;
}
