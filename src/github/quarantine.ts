/**
 * `.evalgate/quarantine.yaml`: known-flaky or known-broken cases that still run and are reported,
 * but do not count in the gate until their entry expires. Every entry names an owner and an expiry
 * at most 90 days ahead, so a quarantine is a dated promise to fix, not a place cases go to be
 * forgotten. On a pull request the file is read from the base commit (github/trusted.ts): a PR
 * cannot quarantine the case it breaks.
 */
import picomatch from "picomatch";
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { rowKey } from "../bundle/read.js";
import type { WireIndexRow } from "../bundle/wire.js";
import { validate } from "../config/validate.js";
import type { YamlSource } from "../config/yaml.js";
import { ConfigError, ProblemList } from "../errors.js";

export const DEFAULT_QUARANTINE_FILE = ".evalgate/quarantine.yaml";
/** The longest a quarantine may last from the day it is read. */
export const MAX_QUARANTINE_DAYS = 90;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

const entrySchema = z.strictObject({
  case: z
    .string()
    .min(1)
    .describe("<suite>/<test-id glob>: the suite is the eval file's name, e.g. checkout-bugs/empty-cart-*"),
  target: z.string().min(1).optional().describe("A glob of target names (default: every target)"),
  reason: z.string().min(1).describe("Why the case is quarantined"),
  owner: z.string().min(1).describe("Who lifts it (a @handle or a team)"),
  expires: z
    .string()
    .regex(DATE, "expected a date YYYY-MM-DD")
    .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)), "not a real date")
    .describe(`The last day the entry applies (YYYY-MM-DD, at most ${MAX_QUARANTINE_DAYS} days ahead)`),
});
const fileSchema = z.array(entrySchema);

export type QuarantineInput = z.infer<typeof entrySchema>;

export interface QuarantineEntry extends QuarantineInput {
  /** 1-based line of the entry in the file. */
  line: number | undefined;
  /** The entry has passed its expiry: it no longer applies. */
  expired: boolean;
  matches(row: Pick<WireIndexRow, "suite" | "test_id" | "target">): boolean;
}

export interface Quarantine {
  file: string;
  entries: QuarantineEntry[];
}

/** YYYY-MM-DD of `d` in UTC. */
export function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function addDays(day: string, n: number): string {
  return isoDay(new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000));
}

/**
 * Parses and checks the quarantine file's text. `display` names it in messages (the path, and the
 * commit it came from). Throws a ConfigError naming file, line, key and the fix.
 */
export function parseQuarantine(text: string, display: string, today: Date = new Date()): Quarantine {
  const problems = new ProblemList();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new ConfigError({
      file: display,
      line: e.linePos?.[0]?.line,
      message: `malformed YAML: ${e.message.split("\n")[0]}`,
      hint: "check indentation and quoting",
    });
  }
  const value = doc.toJS() ?? [];
  const src: YamlSource = { path: display, display, doc, lines, value };
  const parsed = validate(fileSchema, src, problems);
  if (!parsed) {
    if (!Array.isArray(value))
      problems.add({
        file: display,
        line: 1,
        message: "the quarantine file is a list of entries",
        hint: "- { case: suite/test-id, reason: ..., owner: '@you', expires: YYYY-MM-DD }",
      });
    throw new ConfigError(problems.items);
  }
  const day = isoDay(today);
  const latest = addDays(day, MAX_QUARANTINE_DAYS);
  const lineOf = (i: number, key?: string): number | undefined => {
    const node = doc.getIn(key ? [i, key] : [i], true) as { range?: [number, number] } | undefined;
    return node?.range ? lines.linePos(node.range[0]).line : undefined;
  };
  const entries = parsed.map((e, i): QuarantineEntry => {
    if (e.expires > latest) {
      problems.add({
        file: display,
        line: lineOf(i, "expires"),
        key: `[${i}].expires`,
        message: `${e.expires} is more than ${MAX_QUARANTINE_DAYS} days ahead: a quarantine is temporary`,
        hint: `set expires: ${latest} or earlier, and renew it if the case is still not fixed then`,
      });
    }
    if (!e.case.includes("/")) {
      problems.add({
        file: display,
        line: lineOf(i, "case"),
        key: `[${i}].case`,
        message: `"${e.case}" names no suite`,
        hint: "write <suite>/<test-id glob>, e.g. checkout-bugs/empty-cart-* (the suite is the eval file's name)",
      });
    }
    const isCase = picomatch(e.case, { dot: true });
    const isTarget = e.target ? picomatch(e.target, { dot: true }) : () => true;
    return {
      ...e,
      line: lineOf(i),
      expired: e.expires < day,
      matches: (row) => isCase(`${row.suite}/${row.test_id}`) && isTarget(row.target),
    };
  });
  problems.throwIfAny();
  return { file: display, entries };
}

/** A quarantined case of this run: the entry that covers it, and whether it has become stable. */
export interface QuarantinedCase {
  row: WireIndexRow;
  entry: QuarantineEntry;
  /** Passed on every attempt here and in the baseline: the quarantine can be lifted. */
  stable: boolean;
}

export interface QuarantineOutcome {
  file: string;
  /** Cases under a live entry: reported, not gating. */
  quarantined: QuarantinedCase[];
  /** Cases whose only entries have expired: they gate again. */
  expired: { row: WireIndexRow; entry: QuarantineEntry }[];
}

/** The first live entry covering `row`, if any. */
export function activeEntry(q: Quarantine, row: WireIndexRow): QuarantineEntry | undefined {
  return q.entries.find((e) => !e.expired && e.matches(row));
}

const passedAll = (r: WireIndexRow) =>
  r.verdict === "pass" && r.attempts.counted > 0 && r.attempts.passed === r.attempts.counted;

/** Sorts this run's rows into quarantined and expired-quarantine cases. */
export function applyQuarantine(
  q: Quarantine,
  rows: readonly WireIndexRow[],
  baseline?: readonly WireIndexRow[],
): QuarantineOutcome {
  const base = new Map((baseline ?? []).map((r) => [rowKey(r), r]));
  const quarantined: QuarantinedCase[] = [];
  const expired: QuarantineOutcome["expired"] = [];
  for (const row of rows) {
    const entry = activeEntry(q, row);
    if (entry) {
      const b = base.get(rowKey(row));
      quarantined.push({ row, entry, stable: passedAll(row) && (baseline ? !!b && passedAll(b) : true) });
      continue;
    }
    const old = q.entries.find((e) => e.expired && e.matches(row));
    if (old) expired.push({ row, entry: old });
  }
  return { file: q.file, quarantined, expired };
}
