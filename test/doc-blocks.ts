/**
 * The README's and docs/ pages' fenced examples, read the way a reader copies them. A fence's info
 * string says what an example is: ```yaml eval (a whole eval file), ```yaml workflow, ```console
 * (commands with their output) and so on; test/e2e/docs.test.ts checks each kind with the real
 * program that reads it.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface Block {
  /** The page, from the repository's root: `README.md`, `docs/gate.md`. */
  page: string;
  /** The line of the opening fence (1-based). */
  line: number;
  /** The fence's language: `yaml`, `sh`, `text`, `console`, `json`, or "" for none. */
  lang: string;
  /** The first word after the language: what the example is (`eval`, `workflow`, ...), or "". */
  kind: string;
  /** `key=value` words after the kind. */
  attrs: Record<string, string>;
  /** Further plain words after the kind. */
  flags: string[];
  text: string;
}

/** README.md and every page of docs/ (not the design notes in docs/decisions/). */
export function pages(): string[] {
  const docs = readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs];
}

export function read(page: string): string {
  return readFileSync(path.join(ROOT, page), "utf8");
}

/** Every fenced block of a page. */
export function blocks(page: string, text = read(page)): Block[] {
  const out: Block[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l === "```");
    if (end < 0) throw new Error(`${page}:${i + 1}: a fence that is never closed`);
    const [kind = "", ...rest] = open[2]!.trim().split(/\s+/).filter(Boolean);
    const attrs: Record<string, string> = {};
    const flags: string[] = [];
    for (const w of rest) {
      const eq = w.indexOf("=");
      if (eq > 0) attrs[w.slice(0, eq)] = w.slice(eq + 1);
      else flags.push(w);
    }
    out.push({
      page,
      line: i + 1,
      lang: open[1]!,
      kind,
      attrs,
      flags,
      text: `${lines.slice(i + 1, end).join("\n")}\n`,
    });
    i = end;
  }
  return out;
}

/** Where a block is, for messages: `docs/gate.md:240`. */
export const where = (b: Block) => `${b.page}:${b.line}`;

/** The section of a page under `heading` (up to the next heading of the same level or above). */
export function section(text: string, heading: string): string {
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = heading.split(" ")[0]!;
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  return end < 0 ? rest : rest.slice(0, end);
}

/**
 * Whether every line an example shows is in the real output, in order. Lines are compared with
 * their runs of spaces collapsed; `...` stands for any lines, and a line's `…` or `/path/to/` for
 * the rest of it (a text cut short, a path that differs from machine to machine).
 */
export function showsOutput(expected: string, actual: string): { ok: boolean; missing?: string } {
  const norm = (l: string) => l.replace(/\s+/g, " ").trim();
  const real = actual.split("\n").map(norm);
  let at = 0;
  for (const raw of expected.split("\n")) {
    const want = norm(raw);
    if (want === "" || want === "...") continue;
    const cuts = [want.indexOf("…"), want.indexOf("/path/to/")].filter((c) => c >= 0);
    const cut = cuts.length > 0 ? Math.min(...cuts) : -1;
    const matches = (l: string) => (cut < 0 ? l === want : l.startsWith(want.slice(0, cut)));
    const found = real.findIndex((l, i) => i >= at && matches(l));
    if (found < 0) return { ok: false, missing: raw };
    at = found + 1;
  }
  return { ok: true };
}
