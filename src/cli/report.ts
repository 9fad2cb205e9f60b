/**
 * `evalgate report`: one bundle rendered as the PR comment (markdown), report.html, junit.xml, or
 * its summary.json with its rows (json).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { bundleErrorAsUsage } from "../bundle/read.js";
import { EXIT, UsageError } from "../errors.js";
import { loadReportView } from "../pipeline/report-view.js";
import { COMMENT_MAX_CHARS, renderComment } from "../report/comment.js";
import { renderHtml } from "../report/html.js";
import { renderJUnit } from "../report/junit.js";
import { type CommandIO, readBundleArg } from "./io.js";

export interface ReportFlags {
  format: "markdown" | "html" | "junit" | "json";
  out?: string;
}

async function render(bundlePath: string, format: ReportFlags["format"], cwd: string): Promise<string> {
  if (format === "json") {
    const bundle = await readBundleArg(bundlePath, cwd);
    return `${JSON.stringify({ summary: bundle.summary, rows: bundle.rows }, null, 2)}\n`;
  }
  const dir = path.resolve(cwd, bundlePath);
  const view = await bundleErrorAsUsage(
    loadReportView(dir, { evidence: format === "html" ? "all" : "problems" }),
    // Name the folder as the user typed it.
    (reason) => reason.replaceAll(dir, bundlePath),
  );
  if (format === "html") return renderHtml(view);
  if (format === "junit") return renderJUnit(view);
  return renderComment(view, { key: "default", maxChars: COMMENT_MAX_CHARS });
}

export async function reportCommand(bundlePath: string, o: ReportFlags, io: CommandIO): Promise<number> {
  const text = await render(bundlePath, o.format, io.cwd);
  if (!o.out) {
    io.stdout.write(text);
    return EXIT.pass;
  }
  await writeFile(path.resolve(io.cwd, o.out), text).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`--out ${o.out}: cannot write the file (${error.code ?? error.message})`);
  });
  return EXIT.pass;
}
