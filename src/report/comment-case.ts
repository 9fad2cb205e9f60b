/**
 * The cases in the PR comment: the table of cases to review, the collapsed table of passing cases,
 * and the collapsible details of each case to review: each attempt with its status, score,
 * duration and usage, the failing scorers and tests, tampered files, then the agent's diffs and the
 * tails of its logs. Identical diffs or logs of several attempts are shown once.
 */
import type { Context } from "./comment-head.js";
import type { Piece } from "./fit.js";
import { count, duration, percent, plural, pointsDelta, tokens, totalTokens, usd } from "./format.js";
import * as md from "./markdown.js";
import { clip, headLines, tailLines } from "./text.js";
import {
  type AttemptTry,
  type CaseView,
  caseFlags,
  type Excerpt,
  isProtected,
  type ScorerView,
} from "./view.js";

/**
 * Ranks: what the budget drops first. Diffs, logs and the list of passing cases go before anything
 * about a failing case; the details of failing cases (later ones first, so regressions keep theirs
 * longest) before any row of the case table; the rows of regressed, flaky and errored cases and the
 * gate's reasons only when nothing else is left.
 */
export const RANK = {
  passingDiff: 1,
  diff: 2,
  log: 3,
  passingRow: 4,
  otherDetails: 5,
  protectedDetails: 6,
  otherRow: 7,
  lastResort: 9,
  optional: 10,
} as const;

const DIFF_LINES = 200;
const DIFF_CHARS = 20_000;
const LOG_LINES = 30;
const LOG_CHARS = 4_000;
const TESTS_SHOWN = 10;
const REASON_CHARS = 500;

export const STATUS_ICON: Record<AttemptTry["status"], string> = {
  passed: "✅",
  failed: "❌",
  timeout: "⏱️",
  error: "❗",
};

export function caseIcon(c: CaseView): string {
  if (c.verdict === "error") return "❗";
  if (c.verdict === "fail") return "❌";
  return c.flaky ? "⚠️" : "✅";
}

/** "attempt 2" or "attempt 2, retry 1": how reports name one try. */
export function tryLabel(r: AttemptTry): string {
  return r.retry > 0 ? `attempt ${r.attempt}, retry ${r.retry}` : `attempt ${r.attempt}`;
}

function attemptLine(r: AttemptTry, superseded: boolean): string {
  const e = r.evidence;
  const parts = [
    `${STATUS_ICON[r.status]} ${r.status}${r.failureKind && r.failureKind !== "quality" ? ` (${r.failureKind})` : ""}`,
  ];
  if (r.score !== null) parts.push(`score ${r.score.toFixed(2)}`);
  if (r.durationMs !== null) parts.push(duration(r.durationMs));
  const t = totalTokens(e?.usage ?? null);
  if (t !== null) parts.push(`${tokens(t)} tokens`);
  if (e?.usage?.costUsd != null) parts.push(md.text(usd(e.usage.costUsd)));
  if (e?.diffStat && e.diffStat.files.length === 0) parts.push("no changes");
  if (superseded) parts.push("retried");
  return `- **${tryLabel(r)}** ${parts.join(" · ")}\n`;
}

function scorerNotes(s: ScorerView): Piece[] {
  const name = `${md.code(s.name)}${s.required ? " (required)" : ""}`;
  const head =
    s.state === "error"
      ? `  - ${name} could not run${s.timedOut ? " (timed out)" : ""}: ${md.text(clip(s.reason, REASON_CHARS))}\n`
      : `  - ${name}: ${md.text(clip(s.reason, REASON_CHARS))}\n`;
  const tests = s.failingTests.slice(0, TESTS_SHOWN).map((t) => ({
    open: `    - ${md.code(clip(t.name, 200))}${t.outcome !== "failed" ? ` (${md.text(t.outcome)})` : ""}${t.message ? `: ${md.text(clip(t.message, 300))}` : ""}\n`,
  }));
  const more = Math.max(s.failingTestsTotal, s.failingTests.length) - tests.length;
  if (more > 0) tests.push({ open: `    - and ${plural(more, "more failing test")}\n` });
  return [{ open: head, children: tests }];
}

/** Sub-items of an attempt: why it did not pass. */
function attemptNotes(r: AttemptTry): Piece[] {
  if (r.status === "passed") return [];
  const e = r.evidence;
  const notes: Piece[] = [];
  const bad = (e?.scorers ?? []).filter((s) => s.state === "error" || s.passed === false);
  // An error's message says what broke (the agent crashed, setup failed) before what the scorers
  // found in what it left; a quality failure's message only repeats the scorers. A tampered
  // attempt's message names the files listed below.
  const agentTrouble = r.status === "error" || r.status === "timeout";
  if (r.message && !e?.tampered.length && (agentTrouble || bad.length === 0)) {
    notes.push({ open: `  - ${md.text(clip(r.message, REASON_CHARS))}\n` });
  }
  for (const s of bad) notes.push(...scorerNotes(s));
  if (e?.tampered.length) {
    notes.push({
      open: `  - **tampered**: ${e.tampered
        .slice(0, 10)
        .map((f) => md.code(f))
        .join(
          ", ",
        )}${e.tampered.length > 10 ? ` and ${e.tampered.length - 10} more` : ""} (restored before scoring)\n`,
    });
  }
  for (const p of e?.problems ?? []) {
    notes.push({ open: `  - ${md.text(clip(p, 300))}\n` });
  }
  return notes;
}

function attemptsText(rs: AttemptTry[]): string {
  if (rs.length === 1) return tryLabel(rs[0]!);
  const labels = rs.map((r) => `${r.attempt}${r.retry ? ` (retry ${r.retry})` : ""}`);
  return `attempts ${labels.slice(0, -1).join(", ")} and ${labels.at(-1)} (identical)`;
}

/** Groups tries whose excerpt text is the same, in first-seen order. */
function sameText(
  runs: AttemptTry[],
  pick: (r: AttemptTry) => Excerpt | null,
): { runs: AttemptTry[]; excerpt: Excerpt }[] {
  const groups = new Map<string, { runs: AttemptTry[]; excerpt: Excerpt }>();
  for (const r of runs) {
    const x = pick(r);
    if (!x || !x.text.trim()) continue;
    const g = groups.get(x.text);
    if (g) g.runs.push(r);
    else groups.set(x.text, { runs: [r], excerpt: x });
  }
  return [...groups.values()];
}

function cutNote(x: Excerpt, omittedLines: number, what: string): string {
  if (!x.truncated && omittedLines === 0) return "";
  const size = x.totalBytes >= 1024 ? `${Math.round(x.totalBytes / 1024)} KiB` : `${x.totalBytes} bytes`;
  return `_${what} cut; the whole file (${size}) is ${md.code(x.path)} in the run bundle._\n\n`;
}

function diffPieces(c: CaseView): Piece[] {
  return sameText(c.runs, (r) => r.evidence?.diff ?? null).map(({ runs, excerpt }) => {
    const stat = runs[0]!.evidence?.diffStat;
    const statText = stat
      ? ` (+${stat.additions} −${stat.deletions}, ${plural(stat.files.length, "file")})`
      : "";
    const shown = headLines(excerpt.text, DIFF_LINES, DIFF_CHARS);
    return {
      open: `Diff of ${attemptsText(runs)}${statText}:\n\n${md.fence(shown.text, "diff")}\n${cutNote(excerpt, shown.omitted, "Diff")}`,
      rank: runs.every((r) => r.status === "passed") ? RANK.passingDiff : RANK.diff,
      omits: "diffs",
    };
  });
}

function logPieces(c: CaseView): Piece[] {
  const failing = c.runs.filter((r) => r.status !== "passed");
  return sameText(failing, (r) => r.evidence?.logTail ?? null).map(({ runs, excerpt }) => {
    const shown = tailLines(excerpt.text, LOG_LINES, LOG_CHARS);
    const cut = excerpt.truncated || shown.omitted > 0;
    return {
      open: `Agent log of ${attemptsText(runs)}${cut ? ", the last lines" : ""}:\n\n${md.fence(shown.text, "text")}\n${cut ? `_The whole log is ${md.code(excerpt.path)} in the run bundle._\n\n` : ""}`,
      rank: RANK.log,
      omits: "logs",
    };
  });
}

/** The last lines of each failing scorer's log (same text in several attempts: shown once). */
function scorerLogPieces(c: CaseView): Piece[] {
  const failing = c.runs.filter((r) => r.status !== "passed");
  const names = [
    ...new Set(
      failing.flatMap((r) => (r.evidence?.scorers ?? []).filter((s) => s.logTail).map((s) => s.name)),
    ),
  ];
  return names.flatMap((name) =>
    sameText(failing, (r) => r.evidence?.scorers?.find((s) => s.name === name)?.logTail ?? null).map(
      ({ runs, excerpt }) => {
        const shown = tailLines(excerpt.text, LOG_LINES, LOG_CHARS);
        const cut = excerpt.truncated || shown.omitted > 0;
        return {
          open: `Log of scorer ${md.code(clip(name, 60))} in ${attemptsText(runs)}${cut ? ", the last lines" : ""}:\n\n${md.fence(shown.text, "text")}\n${cut ? `_The whole log is ${md.code(excerpt.path)} in the run bundle._\n\n` : ""}`,
          rank: RANK.log,
          omits: "logs",
        };
      },
    ),
  );
}

export function caseLabel(c: CaseView, multiSuite: boolean): string {
  return multiSuite ? `${c.suite}/${c.testId}` : c.testId;
}

/** The `<details>` block of a case that is not a stable pass. */
export function caseDetails(c: CaseView, multiSuite: boolean, counted?: ReadonlySet<CaseView>): Piece {
  const a = c.attempts;
  const summary = [
    `${caseIcon(c)} <b>${md.html(clip(caseLabel(c, multiSuite), 120))}</b>`,
    md.html(clip(c.target, 60)),
    `${a.passed}/${a.counted} attempts passed${a.errored ? `, ${plural(a.errored, "error")}` : ""}`,
    ...caseFlags(c, counted).map((f) => md.html(f)),
  ].join(" · ");
  const lastRetry = new Map<number, number>();
  for (const r of c.runs) lastRetry.set(r.attempt, Math.max(lastRetry.get(r.attempt) ?? 0, r.retry));
  const attempts: Piece = {
    open: `${md.text(clip(c.reason, REASON_CHARS))}\n\n`,
    children: c.runs.map((r) => ({
      open: attemptLine(r, r.retry < (lastRetry.get(r.attempt) ?? 0)),
      children: attemptNotes(r),
    })),
    close: "\n",
  };
  return {
    open: `<details><summary>${summary}</summary>\n\n`,
    children: [attempts, ...diffPieces(c), ...scorerLogPieces(c), ...logPieces(c)],
    close: "</details>\n\n",
    rank: isProtected(c) ? RANK.protectedDetails : RANK.otherDetails,
    omits: "details",
  };
}

/**
 * A flip is **regressed** only when the gate counts it; one it does not count (not significant,
 * known flaky) may be noise and says so plainly.
 */
function changeCell(c: CaseView, counted: ReadonlySet<CaseView>): string {
  const ch = c.change;
  if (!ch) return "—";
  const pp =
    ch.successRateDelta !== null && Math.round(ch.successRateDelta * 100) !== 0
      ? pointsDelta(ch.successRateDelta)
      : "";
  const sig = ch.significant && ch.pValue !== null ? ` (p = ${ch.pValue.toFixed(3)})` : "";
  const word =
    ch.change === "regressed"
      ? counted.has(c)
        ? "**regressed**"
        : "flipped (not counted)"
      : ch.change === "unchanged"
        ? ""
        : ch.change;
  return [word, pp].filter(Boolean).join(" · ") + sig || "—";
}

function baseCell(c: CaseView): string {
  const b = c.change?.baseAttempts;
  if (b) return `${b.passed}/${b.counted}`;
  return c.change?.change === "new" ? "new" : "—";
}

function attemptsCell(c: CaseView): string {
  const a = c.attempts;
  const extra = [
    a.errored ? plural(a.errored, "error") : "",
    a.cancelled ? `${count(a.cancelled)} cancelled` : "",
  ].filter(Boolean);
  return `${a.passed}/${a.counted}${extra.length ? ` (${extra.join(", ")})` : ""}`;
}

const VERDICT_WORD = (c: CaseView) =>
  c.verdict === "pass" ? (c.flaky ? "flaky" : "pass") : c.verdict === "fail" ? "fail" : "error";

/** "3/3 · **regressed** · −67 pp": the baseline's attempts and the change, one column. */
function vsBaseCell(c: CaseView, counted: ReadonlySet<CaseView>): string {
  const change = changeCell(c, counted);
  return [baseCell(c), change === "—" ? "" : change].filter(Boolean).join(" · ");
}

/**
 * The cases to review, under a heading. Six columns (attempts with their success rate, the base
 * with the change) and clipped names keep it inside the width of a GitHub comment.
 */
export function caseTable(ctx: Context, cases: CaseView[]): Piece | null {
  if (cases.length === 0) return null;
  const withBase = ctx.view.comparison !== null;
  const head = ["verdict", "test", "target", "attempts", ...(withBase ? ["baseline"] : []), "flags"];
  return {
    open: `**Cases to review**\n\n${md.tableHead(head)}`,
    children: cases.map((c) => ({
      open: md.row([
        `${caseIcon(c)} ${VERDICT_WORD(c)}`,
        md.text(clip(caseLabel(c, ctx.multiSuite), 60)),
        md.text(clip(c.target, 40)),
        `${attemptsCell(c)}${c.successRate === null ? "" : ` · ${percent(c.successRate)}`}`,
        ...(withBase ? [vsBaseCell(c, ctx.regressions)] : []),
        caseFlags(c, ctx.regressions).join(", "),
      ]),
      rank: isProtected(c) ? RANK.lastResort : RANK.otherRow,
      omits: isProtected(c) ? "protectedRows" : "rows",
    })),
    close: "\n",
  };
}

export function passingTable(ctx: Context, cases: CaseView[], allPassed: boolean): Piece | null {
  if (cases.length === 0) return null;
  const withBase = ctx.view.comparison !== null;
  const title = allPassed
    ? `✅ all ${plural(cases.length, "case")} passed on every attempt`
    : `✅ ${plural(cases.length, "more case")} passed on every attempt`;
  const head = ["test", "target", "attempts", ...(withBase ? ["baseline"] : [])];
  return {
    open: `<details><summary>${title}</summary>\n\n${md.tableHead(head)}`,
    children: cases.map((c) => ({
      open: md.row([
        md.text(clip(caseLabel(c, ctx.multiSuite), 60)),
        md.text(clip(c.target, 40)),
        attemptsCell(c),
        ...(withBase ? [vsBaseCell(c, ctx.regressions)] : []),
      ]),
      rank: RANK.passingRow,
      omits: "passing",
    })),
    close: "\n</details>\n\n",
    dropWhenEmpty: true,
    alt: `${title} (the list is in report.html).\n\n`,
  };
}
