/**
 * Untrusted text (what agents, scorers and test names wrote) made displayable, before any
 * format-specific escaping: terminal escape sequences removed, control characters, bidirectional
 * overrides, noncharacters and lone surrogates dropped (XML 1.0 forbids most of them and they can
 * make a reviewer read something other than what is there), line ends made `\n`.
 */

/** CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ST`) and two-character escape sequences. */
const ANSI = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])/g;
const UNSAFE =
  /[\x00-\x08\x0B-\x1F\x7F-\x9F\u202A-\u202E\u2066-\u2069\uFEFF\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Keeps tabs and newlines; removes what no report should carry. */
export function cleanText(s: string): string {
  return s.replace(/\r\n?/g, "\n").replace(ANSI, "").replace(UNSAFE, "");
}

/** One line: whitespace runs (newlines included) become one space. */
export function oneLine(s: string): string {
  return cleanText(s).replace(/\s+/g, " ").trim();
}

/** At most `max` characters (code points), with an ellipsis when cut. */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const points = [...s];
  return points.length <= max ? s : `${points.slice(0, Math.max(1, max - 1)).join("")}…`;
}

export interface Lines {
  text: string;
  /** Lines of the input left out. */
  omitted: number;
}

/** The first lines of `text` within `maxLines` and `maxChars`. */
export function headLines(text: string, maxLines: number, maxChars: number): Lines {
  // Walks the lines it keeps, then only counts the rest: a 64 KiB diff shown in 40 lines is not
  // split into thousands of strings.
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  const kept: string[] = [];
  let size = 0;
  let at = 0;
  for (;;) {
    const nl = body.indexOf("\n", at);
    const line = body.slice(at, nl === -1 ? body.length : nl);
    if (kept.length >= maxLines || size + line.length + 1 > maxChars) break;
    kept.push(line);
    size += line.length + 1;
    if (nl === -1) return { text: kept.join("\n"), omitted: 0 };
    at = nl + 1;
  }
  let total = 1;
  for (let i = body.indexOf("\n"); i !== -1; i = body.indexOf("\n", i + 1)) total++;
  if (kept.length === 0) {
    const end = body.indexOf("\n");
    kept.push(clip(end === -1 ? body : body.slice(0, end), maxChars));
  }
  return { text: kept.join("\n"), omitted: total - kept.length };
}

/** The last lines of `text` within `maxLines` and `maxChars` (trailing blank lines dropped). */
export function tailLines(text: string, maxLines: number, maxChars: number): Lines {
  const lines = text.replace(/\s+$/, "").split("\n");
  const kept: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (kept.length >= maxLines || size + line.length + 1 > maxChars) break;
    kept.unshift(line);
    size += line.length + 1;
  }
  if (kept.length === 0 && lines.length > 0) kept.push(clip(lines.at(-1)!, maxChars));
  return { text: kept.join("\n"), omitted: lines.length - kept.length };
}
