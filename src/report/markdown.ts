/**
 * GitHub-flavoured markdown that shows untrusted text as text. Outside code: no raw HTML (`<`, `>`,
 * `&` become entities), no markdown syntax or math (punctuation is backslash-escaped), no `@mention`
 * pings, no `#123` / `GH-123` cross-references and no autolinked bare URLs (a zero-width joiner
 * breaks each), and table cells
 * keep their `|` and stay on one line. Code spans and fences are longer than any backtick run
 * inside them, so nothing an agent prints can close them.
 */
import { cleanText, oneLine } from "./text.js";

const ZWJ = "\u200D";

/**
 * `@name`, `#123`, `GH-123` and bare URLs (`https://…`, `www.…`) made inert: GitHub links none of
 * them when a zero-width joiner breaks the sign or the scheme, and the text still reads the same.
 */
function inertRefs(s: string): string {
  return s
    .replace(/@/g, `@${ZWJ}`)
    .replace(/#(?=\d)/g, `#${ZWJ}`)
    .replace(/\b(GH)-(?=\d)/gi, `$1${ZWJ}-`)
    .replace(/\b([a-z][a-z0-9+.-]*)(?=:\/\/)/gi, `$1${ZWJ}`)
    .replace(/\b(www)\./gi, `$1${ZWJ}.`);
}

/** Inline text outside code, on one line (also safe in a table cell). */
export function text(s: string): string {
  const escaped = oneLine(s)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    // `$` too: GitHub renders `$…$` as math.
    .replace(/[\\`*_[\]~|$]/g, (c) => `\\${c}`)
    // Block syntax counts at the start of a line, followed by a space: a heading, list item or numbered item.
    .replace(/^(#{1,6}|[+-])(?=\s|$)/, "\\$1")
    .replace(/^(\d{1,9})([.)])(?=\s|$)/, "$1\\$2");
  return inertRefs(escaped);
}

/** Text inside a raw HTML element such as `<summary>` (markdown is not parsed there). */
export function html(s: string): string {
  return inertRefs(
    oneLine(s)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;"),
  );
}

function longestBacktickRun(s: string): number {
  let longest = 0;
  for (const m of s.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/** An inline code span on one line. In a table cell, `|` is escaped (GFM unescapes it there). */
export function code(s: string, inTable = false): string {
  let t = oneLine(s);
  if (!t) return "—";
  if (inTable) t = t.replace(/\|/g, "\\|");
  const ticks = "`".repeat(longestBacktickRun(t) + 1);
  const pad = /^[` ]|[` ]$/.test(t) ? " " : "";
  return `${ticks}${pad}${t}${pad}${ticks}`;
}

/**
 * `s` without its trailing newlines. Not `replace(/\n*$/, …)`: an unanchored `\n*$` is tried at
 * every position of the text, which made fences the slowest part of a 2,000-case comment.
 */
function withoutTrailingNewlines(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 10) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** A fenced code block, longer than any backtick run inside; ends with a newline. */
export function fence(body: string, info = ""): string {
  const t = `${withoutTrailingNewlines(cleanText(body))}\n`;
  const ticks = "`".repeat(Math.max(3, longestBacktickRun(t) + 1));
  return `${ticks}${info}\n${t}${ticks}\n`;
}

/** A link to an http(s) URL, or the label alone for anything else. */
export function link(label: string, url: string | undefined): string {
  if (!url || url.length > 2048 || !/^https?:\/\/[^\s]+$/i.test(url)) return text(label);
  const safe = url.replace(/[()<>"'`\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  // Inside a link GitHub makes no issue reference, so `#1234` may stay as written.
  return `[${text(label).replaceAll(`#${ZWJ}`, "#")}](${safe})`;
}

/** A table row from cells that are already markdown. */
export function row(cells: readonly string[]): string {
  return `| ${cells.join(" | ")} |\n`;
}

export function tableHead(headers: readonly string[]): string {
  return `${row(headers)}|${headers.map(() => "---").join("|")}|\n`;
}
