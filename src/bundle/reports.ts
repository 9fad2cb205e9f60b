/**
 * The bundle's report files (SPEC §4): comment.md (the PR comment), report.html and junit.xml,
 * written at the end of every run and merge. The action rewrites comment.md from the returned view
 * with links once it knows the workflow run and the artifact, so comment.md is the comment as posted.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { COMMENT_MAX_CHARS, type CommentOptions, renderComment } from "../report/comment.js";
import { COMPACT_ABOVE, renderHtml } from "../report/html.js";
import { renderJUnit } from "../report/junit.js";
import type { ReportView } from "../report/view.js";
import { loadReportView } from "./report-view.js";

export const REPORT_FILES = { comment: "comment.md", html: "report.html", junit: "junit.xml" } as const;

export interface WrittenReports {
  /** The view the files were rendered from (every case's evidence loaded): render more from it. */
  view: ReportView;
  /** comment.md's text. */
  comment: string;
  /** Absolute paths of the files written. */
  files: { comment: string; html: string; junit: string };
}

/**
 * Renders and writes comment.md, report.html and junit.xml into the bundle. `comment` defaults to
 * key "default" and 65,536 characters.
 */
export async function writeReports(
  bundleDir: string,
  comment: Partial<CommentOptions> = {},
): Promise<WrittenReports> {
  const dir = path.resolve(bundleDir);
  const view = await loadReportView(dir, { evidence: "all", passingDiffsUpTo: COMPACT_ABOVE });
  const text = renderComment(view, { key: "default", maxChars: COMMENT_MAX_CHARS, ...comment });
  const files = {
    comment: path.join(dir, REPORT_FILES.comment),
    html: path.join(dir, REPORT_FILES.html),
    junit: path.join(dir, REPORT_FILES.junit),
  };
  await writeFile(files.comment, text);
  await writeFile(files.html, renderHtml(view));
  await writeFile(files.junit, renderJUnit(view));
  return { view, comment: text, files };
}
