/**
 * The PR comment (and, with a larger budget, the job summary). Pure: a ReportView in, markdown out.
 *
 * It answers in order: can I merge (the headline), what got worse (targets, gate reasons, the case
 * table), is it real or noise (attempts, success rates, base, flags), what did the agent do (the
 * details). It never exceeds `maxChars`: parts are left out least important first (diffs of passing
 * attempts, all diffs, log tails, passing cases, the details of failing cases, then the rows of
 * failing cases that are not regressions; see RANK) and the comment says what was left out and
 * where it is. The headline, the gate reasons and the rows of regressed, flaky and errored cases go
 * last, only when they alone would not fit.
 */
import { caseDetails, caseTable, passingTable, RANK } from "./comment-case.js";
import { examPieces } from "./comment-exam.js";
import {
  type Context,
  contextLine,
  contextOf,
  countsLine,
  driftLine,
  headline,
  nextStep,
  noBaseline,
  targetTable,
} from "./comment-head.js";
import { fitPieces, type Piece } from "./fit.js";
import { count, plural, policyText, shortSha, utcMinute } from "./format.js";
import * as md from "./markdown.js";
import { clip } from "./text.js";
import { isProposed, needsReview, type ReportView, reviewOrder } from "./view.js";

export interface CommentOptions {
  /** The comment key; the first line is commentMarker(key). */
  key: string;
  /** 65,536 for a PR comment, 1,048,576 for the job summary. At least 1,000. */
  maxChars: number;
  /** A limit in UTF-8 bytes as well (the job summary's 1 MiB is bytes). */
  maxBytes?: number;
  links?: { run?: string; runLabel?: string; artifact?: string; artifactName?: string };
  /** Why there is no baseline, shown when the run has no comparison. */
  baselineNote?: string;
  updatedAt?: Date;
  /** Markdown blocks of the action's own (who asked, quarantine, skipped suites, gate changes), already escaped. */
  sections?: readonly string[];
}

export const COMMENT_MAX_CHARS = 65_536;
export const JOB_SUMMARY_MAX = 1_048_576;
export const MIN_MAX_CHARS = 1_000;

/** The hidden first line that finds the comment again: `<!-- evalgate:comment key=KEY -->`. */
export function commentMarker(key: string): string {
  // The marker is an HTML comment: no `-->` and no `--` inside, and a bounded length.
  const safe = key
    .slice(0, 100)
    .replace(/[^A-Za-z0-9._:/-]/g, "_")
    .replace(/-{2,}/g, "-");
  return `<!-- evalgate:comment key=${safe} -->`;
}

function listPiece(title: string, items: readonly string[], keep: number, omits: string): Piece | null {
  if (items.length === 0) return null;
  return {
    open: `${title}\n`,
    children: items.map((r, i) => ({
      open: `- ${md.text(clip(r, 800))}\n`,
      ...(i >= keep ? { rank: RANK.lastResort, omits } : {}),
    })),
    close: "\n",
  };
}

function gatePieces(ctx: Context): Piece[] {
  const g = ctx.view.gate;
  // A cancelled run has no verdict (its headline says so): its reasons are what did not finish.
  const reasons = ctx.view.run.interrupted
    ? listPiece("**What did not finish**", g.reasons.slice(1), 20, "reasons")
    : g.verdict === "fail"
      ? listPiece("**Why the gate failed**", g.reasons, 20, "reasons")
      : listPiece("**What the gate checked**", g.reasons, 5, "reasons");
  if (reasons && g.verdict === "pass") reasons.rank = RANK.optional;
  const warnings = listPiece("**Warnings** (they did not fail the gate)", g.warnings, 10, "warnings");
  return [reasons, warnings].filter((p) => p !== null);
}

function extrasPieces(ctx: Context): Piece[] {
  const out: Piece[] = [];
  const removed = ctx.view.comparison?.removedCases ?? [];
  if (removed.length) {
    const names = removed
      .slice(0, 20)
      .map((r) => `${md.text(clip(`${r.suite}/${r.testId}`, 100))} on ${md.text(clip(r.target, 60))}`);
    out.push({
      open: `**Removed since the base** (${count(removed.length)}): ${names.join(", ")}${removed.length > 20 ? ` and ${removed.length - 20} more` : ""}\n\n`,
      rank: RANK.otherRow,
      omits: "removed",
    });
  }
  const problems = ctx.view.problems;
  if (problems.length) {
    out.push({
      open: `⚠️ ${plural(problems.length, "file")} of the run bundle could not be read: ${problems
        .slice(0, 5)
        .map((p) => md.text(clip(p, 200)))
        .join("; ")}${problems.length > 5 ? "; …" : ""}\n\n`,
      rank: RANK.otherRow,
      omits: "problems",
    });
  }
  return out;
}

const ISOLATION_GAP: Record<string, string> = {
  "pid-namespace": "the agent could write the run's files (the start tree, other attempts, the bundle)",
  subreaper:
    "the agent could write the run's files (the start tree, other attempts, the bundle) and read evalgate's environment",
  none: "the agent could write the run's files (the start tree, other attempts, the bundle), read evalgate's environment and leave processes running",
};

function joinAnd(parts: readonly string[]): string {
  return parts.length < 2 ? (parts[0] ?? "") : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}

/** Said plainly whenever an agent ran with less than bubblewrap's isolation (summary.json `isolation`). */
function isolationNote(view: ReportView): Piece | null {
  const iso = view.isolation;
  if (!iso?.level || iso.level === "bwrap") return null;
  // The bundle says which promises were not kept; an older bundle, by its level alone.
  const gap = iso.gaps?.length
    ? md.text(clip(`the agent could ${joinAnd(iso.gaps)}`, 700))
    : (ISOLATION_GAP[iso.level] ?? "");
  const why = iso.reason ? ` Why: ${md.text(clip(iso.reason, 300))}.` : "";
  return { open: `⚠️ **Isolation: ${md.text(clip(iso.level, 20))}** — ${gap}.${why}\n\n` };
}

const OMITTED_TEXT: [kind: string, phrase: (n: number) => string][] = [
  ["diffs", (n) => plural(n, "diff")],
  ["logs", (n) => plural(n, "agent log tail")],
  ["passing", (n) => plural(n, "passing case")],
  ["details", (n) => `the details of ${plural(n, "case")}`],
  ["rows", (n) => `${plural(n, "row")} of failing or improved cases`],
  ["removed", () => "the removed cases"],
  ["problems", () => "the list of unreadable files"],
  ["protectedRows", (n) => `${plural(n, "row")} of regressed, flaky or errored cases`],
  ["reasons", (n) => plural(n, "gate reason")],
  ["warnings", (n) => plural(n, "warning")],
  ["nextStep", () => "the next step"],
  ["targets", (n) => plural(n, "target row")],
  ["context", () => "the run line"],
  ["bot", (n) => plural(n, "note") + " of the evalgate bot"],
  ["exam", (n) => `${plural(n, "line")} of the exam's changes and proposed tests`],
  ["examSection", () => "the exam's changes and proposed tests"],
];

function whereItIs(options: CommentOptions): string {
  const l = options.links;
  if (l?.artifact) return `the artifact ${md.link(l.artifactName ?? "evalgate bundle", l.artifact)}`;
  if (l?.artifactName) return `the artifact ${md.code(l.artifactName)}`;
  return "the run bundle";
}

function omittedNote(omitted: Map<string, number>, options: CommentOptions): string {
  const parts = OMITTED_TEXT.filter(([k]) => omitted.get(k)).map(([k, phrase]) => phrase(omitted.get(k)!));
  if (parts.length === 0) return "";
  return `**Left out to stay under ${count(options.maxChars)} characters:** ${parts.join(", ")}. Everything is in \`report.html\` and the case folders of ${whereItIs(options)}.\n\n`;
}

function footer(ctx: Context): string {
  const v = ctx.view;
  const l = ctx.options.links ?? {};
  const parts: string[] = [];
  const head = shortSha(v.git?.sha);
  if (head) parts.push(`commit ${md.code(head)}`);
  const cmp = v.comparison;
  if (cmp) {
    const base = shortSha(cmp.baselineSha);
    const runs = cmp.baselineRuns ?? 1;
    parts.push(
      `baseline ${base ? md.code(base) : ""} run ${md.code(clip(cmp.baselineRunId, 60))}${runs > 1 ? ` (newest of ${runs} base runs pooled)` : ""}`.replace(
        "  ",
        " ",
      ),
    );
  } else parts.push("no baseline");
  // Whose exam judged the run: the base commit's, when it was not the checkout's own (docs/exam.md).
  if (v.exam) parts.push(`exam from base ${md.code(v.exam.sha.slice(0, 7))}`);
  if (l.run) parts.push(md.link(clip(l.runLabel ?? "workflow run", 80), l.run));
  if (l.artifact || l.artifactName)
    parts.push(
      `bundle and HTML report: ${l.artifact ? md.link(clip(l.artifactName ?? "artifact", 80), l.artifact) : `artifact ${md.code(clip(l.artifactName!, 80))}`}`,
    );
  const policies = [
    ...new Set(v.cases.map((c) => (c.policy ? policyText(c.policy) : null)).filter((p) => p !== null)),
  ];
  if (policies.length) parts.push(`policy: ${md.text(clip(policies.join("; "), 200))}`);
  parts.push(`evalgate ${md.text(clip(v.run.evalgateVersion, 30))}`);
  if (ctx.options.updatedAt) parts.push(`updated ${utcMinute(ctx.options.updatedAt)}`);
  return `<sub>${parts.join(" · ")}</sub>\n`;
}

export function renderComment(view: ReportView, options: CommentOptions): string {
  if (!(options.maxChars >= MIN_MAX_CHARS))
    throw new RangeError(`maxChars must be at least ${MIN_MAX_CHARS} (got ${options.maxChars})`);
  const ctx = contextOf(view, options);
  // Proposed cases (new in the PR, not gating) are listed in the exam section, not with the gated ones.
  const ordered = reviewOrder(view.cases.filter((c) => !isProposed(c)));
  const review = ordered.filter((c) => needsReview(c) || c.change?.change === "improved");
  const reviewSet = new Set(review);
  const passing = ordered.filter((c) => !reviewSet.has(c));
  const detailed = ordered.filter((c) => needsReview(c));

  const pieces: Piece[] = [
    { open: `${commentMarker(options.key)}\n${headline(view)}` },
    { open: countsLine(ctx) },
    isolationNote(view),
    { open: driftLine(ctx) },
    { open: contextLine(ctx), rank: RANK.lastResort, omits: "context" },
    noBaseline(ctx),
    ...(options.sections ?? []).map((open) => ({ open, rank: RANK.lastResort, omits: "bot" })),
    ...examPieces(view, ctx.multiSuite),
    targetTable(ctx),
    ...gatePieces(ctx),
    nextStep(ctx),
    caseTable(ctx, review),
    ...extrasPieces(ctx),
    ...detailed.map((c) => caseDetails(c, ctx.multiSuite, ctx.regressions)),
    passingTable(ctx, passing, reviewSet.size === 0),
  ].filter((p) => p !== null);
  const foot = footer(ctx);
  const fitted = fitPieces(
    pieces,
    { chars: options.maxChars, bytes: options.maxBytes },
    (omitted) => omittedNote(omitted, options) + foot,
  );
  if (fitted.fits) return fitted.body + omittedNote(fitted.omitted, options) + foot;
  return lastResort(view, options);
}

/** When even the headline and the note do not fit (a tiny budget): the verdict and a pointer. */
function lastResort(view: ReportView, options: CommentOptions): string {
  const text = `${commentMarker(options.key)}\n${headline(view)}The full report does not fit in ${count(options.maxChars)} characters: see \`report.html\` in ${whereItIs(options)}.\n`;
  const limit = Math.min(options.maxChars, options.maxBytes ?? Number.POSITIVE_INFINITY);
  if (Buffer.byteLength(text) <= limit) return text;
  return `${commentMarker(options.key)}\n## evalgate: gate ${view.gate.verdict === "pass" ? "passed" : "failed"}\n`;
}
