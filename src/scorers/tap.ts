/**
 * TAP (the Test Anything Protocol, testanything.org: tape, node --test's tap reporter, mocha's tap
 * reporter, pytest-tap, Perl's prove) → the same per-test results as a JUnit report, and the first
 * failing assertions of a test command's output, with their expected and actual values. Pure: text
 * in, results out.
 *
 * Each test point (`ok` / `not ok`) is a test. A point whose subtests came just before it (TAP 14's
 * indented subtests, as node --test writes them) only sums them up and is not counted again. Its
 * suite is the path of the subtests around it (`# Subtest: name`), or tape's `# name` comment that
 * heads a group of assertions.
 */
import { parse as parseYaml } from "yaml";
import type { TestCaseResult, TestOutcome } from "./test-case.js";

export class TapError extends Error {
  override name = "TapError";
}

/** One test point with the YAML diagnostics that follow it. */
export interface TapPoint {
  ok: boolean;
  number: number | null;
  description: string;
  directive: "skip" | "todo" | null;
  /** The point's line as printed, trimmed (`not ok 2 - empty total`). */
  line: string;
  indent: number;
  /** Subtest names or tape's group comment around the point, outermost first. */
  path: string[];
  diagnostics: Record<string, unknown> | null;
  /** Subtests came before it: it only sums them up. */
  parent: boolean;
}

export interface TapDocument {
  points: TapPoint[];
  /** The plan's count (`1..N`) at the outermost level, when there is one. */
  planned: number | null;
  bailOut: string | null;
}

const POINT = /^(not ok|ok)\b(?:\s+(\d+))?(?:\s*-)?(?:\s+(.*))?$/;
const PLAN = /^1\.\.(\d+)\b/;
const MESSAGE_CAP = 300;
const VALUE_CAP = 80;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** `desc # SKIP why` → the description and its directive (a `\#` is not one). */
function splitDirective(rest: string): { description: string; directive: TapPoint["directive"] } {
  const m = /^(.*?)(?<!\\)#\s*(skip|todo)\b.*$/i.exec(rest);
  if (!m) return { description: rest.trim(), directive: null };
  return { description: m[1]!.trim(), directive: m[2]!.toLowerCase() as "skip" | "todo" };
}

/** The YAML block starting at `lines[at]` (`---` … `...`): its value and the line after it. */
function yamlBlock(lines: readonly string[], at: number, pointIndent: number) {
  const open = lines[at];
  if (open === undefined || open.trim() !== "---" || indentOf(open) <= pointIndent) return null;
  const indent = indentOf(open);
  const body: string[] = [];
  for (let i = at + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "..." && indentOf(line) === indent) {
      let value: unknown = null;
      try {
        value = parseYaml(body.map((l) => l.slice(Math.min(indent, indentOf(l)))).join("\n"));
      } catch {
        value = null;
      }
      const diagnostics =
        value && typeof value === "object" && !Array.isArray(value)
          ? (value as Record<string, unknown>)
          : null;
      return { diagnostics, next: i + 1 };
    }
    body.push(line);
  }
  return null;
}

/** An exception's headline (`AssertionError [ERR_ASSERTION]: …`, `TypeError: …`). */
const EXCEPTION = /^[A-Z]\w*(Error|Exception)\b( \[\w+\])?:\s/;

/**
 * Indented lines after a failing point that are not YAML (mocha's tap reporter prints the error's
 * message, then the error with its stack): the message, up to the stack or a repeated headline.
 */
function plainDiagnostics(lines: readonly string[], at: number, pointIndent: number) {
  const message: string[] = [];
  let i = at;
  let done = false;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    if (indentOf(line) <= pointIndent) break;
    const text = line.trim();
    if (done) continue;
    if (text.startsWith("at ") || (message.length > 0 && EXCEPTION.test(text))) done = true;
    else message.push(text);
  }
  return { message: message.join(" "), next: i };
}

/** Reads every test point of a TAP stream; lines that are not TAP are passed over. */
export function readTap(text: string): TapDocument {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const points: TapPoint[] = [];
  let planned: number | null = null;
  let bailOut: string | null = null;
  // Subtest names by indent, and tape's group comment by indent.
  const subtests = new Map<number, string>();
  const groups = new Map<number, string>();
  let i = 0;
  while (i < lines.length) {
    const raw = lines[i]!;
    const indent = indentOf(raw);
    const line = raw.trim();
    i++;
    if (line.startsWith("Bail out!")) {
      bailOut ??= line.slice("Bail out!".length).trim() || "bailed out";
      continue;
    }
    const plan = PLAN.exec(line);
    if (plan && indent === 0) {
      planned ??= Number(plan[1]);
      continue;
    }
    if (line.startsWith("#")) {
      const sub = /^#\s*Subtest:\s*(.*)$/.exec(line);
      for (const d of [...subtests.keys(), ...groups.keys()]) {
        if (d > indent || (sub && d === indent)) {
          subtests.delete(d);
          groups.delete(d);
        }
      }
      if (sub) subtests.set(indent, sub[1]!.trim());
      else if (
        !/^#\s*((tests|pass|fail|skip|skipped|todo|cancelled|duration_ms|suites)\s+\d|ok\s*$)/i.test(line)
      )
        groups.set(indent, line.replace(/^#\s*/, ""));
      continue;
    }
    const m = POINT.exec(line);
    if (!m) continue;
    const { description, directive } = splitDirective(m[3] ?? "");
    const path = [...subtests.entries()]
      .filter(([d]) => d < indent)
      .sort(([a], [b]) => a - b)
      .map(([, name]) => name);
    const group = groups.get(indent);
    if (group !== undefined) path.push(group);
    const previous = points.at(-1);
    const block = yamlBlock(lines, i, indent);
    let diagnostics = block?.diagnostics ?? null;
    if (block) i = block.next;
    else {
      const plain = plainDiagnostics(lines, i, indent);
      i = plain.next;
      if (plain.message) diagnostics = { message: plain.message };
    }
    points.push({
      ok: m[1] === "ok",
      number: m[2] === undefined ? null : Number(m[2]),
      description,
      directive,
      line,
      indent,
      path,
      diagnostics,
      parent: previous !== undefined && previous.indent > indent,
    });
    // The subtest this point closes is over.
    for (const d of [...subtests.keys()]) if (d >= indent) subtests.delete(d);
  }
  return { points, planned, bailOut };
}

function capText(text: string, cap: number): string {
  const chars = [...text];
  return chars.length > cap ? `${chars.slice(0, cap - 1).join("")}…` : text;
}

/** A diagnostic value in one short line: scalars as they are, structures as compact JSON. */
function valueText(v: unknown): string {
  let text: string;
  if (typeof v === "string") text = v.includes("\n") ? JSON.stringify(v) : v.trim();
  else if (v === null || typeof v !== "object") text = String(v);
  else {
    try {
      text = JSON.stringify(v);
    } catch {
      text = String(v);
    }
  }
  return capText(text, VALUE_CAP);
}

/** `expected 0, actual NaN` from a point's diagnostics, or "" when it has no such pair. */
export function expectedActualOf(d: Record<string, unknown> | null): string {
  if (!d || !("expected" in d) || !("actual" in d)) return "";
  return `expected ${valueText(d.expected)}, actual ${valueText(d.actual)}`;
}

/** What a failing point's diagnostics say went wrong: node's `error` (with its type), else nothing. */
function errorText(d: Record<string, unknown> | null): string {
  if (!d) return "";
  const error = typeof d.error === "string" ? d.error : typeof d.message === "string" ? d.message : "";
  const text = error
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ");
  const type = typeof d.name === "string" ? d.name : "";
  if (text && type && type !== "AssertionError" && /Error$/.test(type) && !text.startsWith(type))
    return `${type}: ${text}`;
  return text;
}

function outcomeOf(p: TapPoint): TestOutcome {
  if (p.directive === "skip") return "skipped";
  // A failing TODO is expected to fail (TAP): it is not a failure of the suite.
  if (p.directive === "todo") return p.ok ? "passed" : "skipped";
  return p.ok ? "passed" : "failed";
}

/** The points that are tests of their own (not sums of subtests). */
function leaves(doc: TapDocument): TapPoint[] {
  return doc.points.filter((p) => !p.parent);
}

/** Reads a TAP report. Throws TapError when it has no test point and no plan. */
export function parseTap(text: string): TestCaseResult[] {
  const doc = readTap(text);
  if (doc.points.length === 0 && doc.planned === null && doc.bailOut === null) {
    throw new TapError("not a TAP report: it has no test point (`ok` / `not ok`) and no plan (`1..N`)");
  }
  const out: TestCaseResult[] = leaves(doc).map((p) => {
    const outcome = outcomeOf(p);
    const why = [errorText(p.diagnostics), expectedActualOf(p.diagnostics)].filter(Boolean).join(" ");
    const ms = p.diagnostics?.duration_ms;
    return {
      suite: p.path.length > 0 ? p.path.join(" > ") : null,
      classname: p.path.at(-1) ?? null,
      name: p.description || (p.number === null ? "(unnamed)" : `#${p.number}`),
      file: null,
      outcome,
      message: outcome === "passed" ? null : capText(why || p.description || p.line, MESSAGE_CAP),
      time: typeof ms === "number" && Number.isFinite(ms) ? ms / 1000 : null,
      flaky: false,
    };
  });
  // A run that stopped early is never a pass: what it did not run stands as one errored test.
  const ran = doc.points.filter((p) => p.indent === 0).length;
  if (doc.bailOut !== null || (doc.planned !== null && ran < doc.planned)) {
    out.push({
      suite: null,
      classname: null,
      name: "(the rest of the plan)",
      file: null,
      outcome: "errored",
      message:
        doc.bailOut !== null
          ? `Bail out! ${doc.bailOut}`
          : `the plan announced ${doc.planned} tests, ${ran} ran: the run stopped early`,
      time: null,
      flaky: false,
    });
  }
  return out;
}

/** True when the text looks like TAP rather than XML or JSON (for report_format detection). */
export function looksLikeTap(text: string): boolean {
  const head = text.replace(/^\uFEFF/, "").trimStart();
  return /^(TAP version \d+|1\.\.\d+|(not )?ok\b|# Subtest:)/.test(head);
}

/**
 * The first `n` failing assertions of a test command's TAP output, each with what its diagnostics
 * say and their expected and actual values: "not ok 2 - empty total / NaN !== 0 (expected 0,
 * actual NaN)". Empty when the output has no failing TAP point.
 */
export function tapFailures(text: string, n = 2): string[] {
  return leaves(readTap(text))
    .filter((p) => outcomeOf(p) === "failed")
    .slice(0, n)
    .map((p) => {
      const error = errorText(p.diagnostics);
      const values = expectedActualOf(p.diagnostics);
      const head = capText(error ? `${p.line} / ${error}` : p.line, 200);
      return values ? `${head} (${values})` : head;
    });
}
