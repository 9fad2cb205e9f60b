/**
 * The one place the action gets its markdown: the PR comment, the job summary and the check run
 * summary are all rendered from the bundle here.
 *
 * Interim body builder: the full renderer (src/report/comment.ts, with per-case details, diffs and
 * escaping of agent output) is built separately; when it lands, `renderBody` and `commentMarker`
 * delegate to it and `writeBundleReports` to src/bundle's writeReports. Until then this writes a
 * short body that holds no agent-written text (only names from the eval files and the gate's
 * reasons, inside a fence).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { readBundle } from "../bundle/read.js";
import { renderCaseTable } from "../report/table.js";

export interface CommentOptions {
  key: string;
  maxChars: number;
  links?: { run?: string; runLabel?: string; artifact?: string; artifactName?: string };
  /** Why there is no baseline. */
  baselineNote?: string;
  updatedAt?: Date;
}

export function commentMarker(key: string): string {
  return `<!-- evalgate:comment key=${key} -->`;
}

/** A code fence longer than any backtick run in `text`. */
function fenced(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}text\n${text}\n${fence}`;
}

export async function renderBody(bundleDir: string, options: CommentOptions): Promise<string> {
  const { summary, rows } = await readBundle(bundleDir);
  const c = summary.counts;
  const passed = summary.gate.verdict === "pass";
  const head = `## ${passed ? "✅" : "❌"} evalgate — gate ${passed ? "passed" : "failed"}`;
  const counts = `${c.cases} cases · ${c.passed} passed · ${c.failed} failed · ${c.errored} errored · ${c.flaky} flaky`;
  const cmp = summary.comparison;
  const base = cmp
    ? `against baseline run ${cmp.baseline_run_id}${cmp.baseline_git_sha ? ` (\`${cmp.baseline_git_sha.slice(0, 7)}\`)` : ""}: ${cmp.regressed} regressed, ${cmp.improved} improved, ${cmp.new} new, ${cmp.removed} removed`
    : `no baseline${options.baselineNote ? `: ${options.baselineNote}` : ""}`;
  const reasons = summary.gate.reasons.map((r) => `- ${r.replace(/[<>@]/g, (ch) => `\\${ch}`)}`);
  const l = options.links ?? {};
  const footer = [
    summary.git?.sha ? `commit \`${summary.git.sha.slice(0, 7)}\`` : "",
    l.run ? `[${l.runLabel ?? "workflow run"}](${l.run})` : "",
    l.artifact ? `bundle: artifact [${l.artifactName ?? "evalgate"}](${l.artifact})` : "",
    options.updatedAt ? `updated ${options.updatedAt.toISOString().replace(/\.\d+Z$/, "Z")}` : "",
  ].filter(Boolean);
  const top = [commentMarker(options.key), head, "", `**${counts}** · ${base}`, "", ...reasons, ""];
  const bottom = ["", `<sub>${footer.join(" · ")}</sub>`, ""];
  let table = fenced(renderCaseTable(rows));
  const fixed = top.join("\n").length + bottom.join("\n").length;
  if (fixed + table.length > options.maxChars) {
    table = `_The case table is left out (too long for this space); see the bundle's report.html._`;
  }
  return [...top, table, ...bottom].join("\n");
}

/** Writes comment.md into the bundle (the body as posted). */
export async function writeBundleReports(bundleDir: string, options: CommentOptions): Promise<void> {
  await writeFile(path.join(bundleDir, "comment.md"), await renderBody(bundleDir, options));
}

/**
 * Renders within a byte budget (the job summary's limit is 1 MiB of UTF-8, the renderer counts
 * characters): renders again with a smaller character budget until the bytes fit.
 */
export async function renderWithinBytes(
  bundleDir: string,
  options: CommentOptions,
  maxBytes: number,
): Promise<string> {
  let maxChars = Math.min(options.maxChars, maxBytes);
  for (;;) {
    const body = await renderBody(bundleDir, { ...options, maxChars });
    const bytes = Buffer.byteLength(body, "utf8");
    if (bytes <= maxBytes || maxChars < 1000) return body;
    maxChars = Math.floor((maxChars * maxBytes) / bytes) - 64;
  }
}
