/**
 * `.evalgate/quarantine.yaml`: known-flaky or known-broken cases that still run and are reported,
 * but do not count in the gate until their entry expires. Every entry names an owner and an expiry
 * at most 90 days ahead, so a quarantine is a dated promise to fix, not a place cases go to be
 * forgotten. One reader for both edges: `evalgate run` / `validate` and the action (decision 0121,
 * 0200).
 *
 * Read strictly (`evalgate validate`, `run`, a pull request's own change), a bad entry is an error
 * naming file, line, key and fix. Read leniently (a file already on the base branch), a bad entry is
 * reported and ignored, and the good ones apply: a file that went bad on main must not stop every
 * run, the fixing pull request's included.
 */
import picomatch from "picomatch";
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { ConfigError, type ConfigProblem, ProblemList } from "../errors.js";
import { MAX_QUARANTINE_FILE_BYTES, readTextFile, TextFileRefused } from "./text-file.js";
import { validate } from "./validate.js";
import type { YamlSource } from "./yaml.js";

export const DEFAULT_QUARANTINE_FILE = ".evalgate/quarantine.yaml";
/** The longest a quarantine may last from the day it is read. */
export const MAX_QUARANTINE_DAYS = 90;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export const quarantineEntrySchema = z.strictObject({
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

export type QuarantineInput = z.infer<typeof quarantineEntrySchema>;

/** What an entry is matched against: a case of a run (an index row's names). */
export interface QuarantinedName {
  suite: string;
  test_id: string;
  target: string;
}

export interface QuarantineEntry extends QuarantineInput {
  /** 1-based line of the entry in the file. */
  line: number | undefined;
  /** The entry has passed its expiry: it no longer applies. */
  expired: boolean;
  matches(row: QuarantinedName): boolean;
}

export interface Quarantine {
  file: string;
  entries: QuarantineEntry[];
  /** Entries (or the whole file) read leniently and left out, each with the reason. */
  ignored: ConfigProblem[];
}

/** YYYY-MM-DD of `d` in UTC. */
export function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function addDays(day: string, n: number): string {
  return isoDay(new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000));
}

/** One entry's problems beyond its schema: how far ahead it expires, a case without a suite. */
function entryProblems(
  e: QuarantineInput,
  i: number,
  display: string,
  latest: string,
  lineOf: (i: number, key?: string) => number | undefined,
): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  if (e.expires > latest) {
    out.push({
      file: display,
      line: lineOf(i, "expires"),
      key: `[${i}].expires`,
      message: `${e.expires} is more than ${MAX_QUARANTINE_DAYS} days ahead: a quarantine is temporary`,
      hint: `set expires: ${latest} or earlier, and renew it if the case is still not fixed then`,
    });
  }
  if (!e.case.includes("/")) {
    out.push({
      file: display,
      line: lineOf(i, "case"),
      key: `[${i}].case`,
      message: `"${e.case}" names no suite`,
      hint: "write <suite>/<test-id glob>, e.g. checkout-bugs/empty-cart-* (the suite is the eval file's name)",
    });
  }
  return out;
}

/** The file read entry by entry: each entry's problems, and the raw value of each entry. */
export interface QuarantineReading {
  quarantine: Quarantine;
  /** Problems of the file as a whole (malformed YAML, not a list): no entry could be read. */
  fileProblems: ConfigProblem[];
  /** Per entry (by index): its problems, and its value as written. */
  entryProblems: { index: number; raw: unknown; problems: ConfigProblem[] }[];
}

/** Reads the quarantine file's text entry by entry, keeping every good entry and every problem. */
export function readQuarantineText(
  text: string,
  display: string,
  today: Date = new Date(),
): QuarantineReading {
  const reading: QuarantineReading = {
    quarantine: { file: display, entries: [], ignored: [] },
    fileProblems: [],
    entryProblems: [],
  };
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    reading.fileProblems.push({
      file: display,
      line: e.linePos?.[0]?.line,
      message: `malformed YAML: ${e.message.split("\n")[0]}`,
      hint: "check indentation and quoting",
    });
  } else {
    const value = doc.toJS({ maxAliasCount: 100 }) ?? [];
    if (!Array.isArray(value)) {
      reading.fileProblems.push({
        file: display,
        line: 1,
        message: "the quarantine file is a list of entries",
        hint: "- { case: suite/test-id, reason: ..., owner: '@you', expires: YYYY-MM-DD }",
      });
    } else {
      readEntries(reading, value, { path: display, display, doc, lines, value }, today);
    }
  }
  reading.quarantine.ignored = [...reading.fileProblems, ...reading.entryProblems.flatMap((e) => e.problems)];
  return reading;
}

function readEntries(reading: QuarantineReading, value: unknown[], src: YamlSource, today: Date): void {
  const day = isoDay(today);
  const latest = addDays(day, MAX_QUARANTINE_DAYS);
  const lineOf = (i: number, key?: string): number | undefined => {
    const node = src.doc.getIn(key ? [i, key] : [i], true) as { range?: [number, number] } | undefined;
    return node?.range ? src.lines.linePos(node.range[0]).line : undefined;
  };
  value.forEach((raw, i) => {
    const problems = new ProblemList();
    const e = validate(quarantineEntrySchema, src, problems, [i]);
    const more = e ? entryProblems(e, i, src.display, latest, lineOf) : [];
    for (const p of more) problems.add(p);
    if (!problems.empty || !e) {
      reading.entryProblems.push({ index: i, raw, problems: problems.items });
      return;
    }
    const isCase = picomatch(e.case, { dot: true });
    const isTarget = e.target ? picomatch(e.target, { dot: true }) : () => true;
    reading.quarantine.entries.push({
      ...e,
      line: lineOf(i),
      expired: e.expires < day,
      matches: (row) => isCase(`${row.suite}/${row.test_id}`) && isTarget(row.target),
    });
  });
}

/**
 * Parses and checks the quarantine file's text. `display` names it in messages (the path, and the
 * commit it came from). Strict: throws a ConfigError naming file, line, key and the fix of every
 * problem. Lenient: returns the good entries, the bad ones in `ignored`.
 */
export function parseQuarantine(
  text: string,
  display: string,
  today: Date = new Date(),
  mode: "strict" | "lenient" = "strict",
): Quarantine {
  const reading = readQuarantineText(text, display, today);
  if (mode === "strict" && reading.quarantine.ignored.length > 0)
    throw new ConfigError(reading.quarantine.ignored);
  return reading.quarantine;
}

/**
 * The quarantine file at `abs` (a regular file of at most 1 MiB), or null when there is none.
 * `display` names it in messages.
 */
export async function readQuarantineFile(
  abs: string,
  display: string,
  today: Date,
  mode: "strict" | "lenient",
): Promise<Quarantine | null> {
  const text = await quarantineText(abs, display);
  return text === null ? null : parseQuarantine(text, display, today, mode);
}

/** The quarantine file's text, or null when it does not exist; a file that cannot be read is a ConfigError. */
export async function quarantineText(abs: string, display: string): Promise<string | null> {
  try {
    return await readTextFile(abs, MAX_QUARANTINE_FILE_BYTES);
  } catch (error) {
    if (!(error instanceof TextFileRefused)) throw error;
    if (error.reason === "missing") return null;
    throw new ConfigError({
      file: display,
      message: `the quarantine file ${error.message}`,
      hint: "make it a YAML list of { case, reason, owner, expires } entries",
    });
  }
}

/** The first live entry covering `row`, if any. */
export function activeEntry(q: Quarantine, row: QuarantinedName): QuarantineEntry | undefined {
  return q.entries.find((e) => !e.expired && e.matches(row));
}

/** The first expired entry covering `row`, if any (its case gates again). */
export function expiredEntry(q: Quarantine, row: QuarantinedName): QuarantineEntry | undefined {
  return q.entries.find((e) => e.expired && e.matches(row));
}

/** A quarantine file's text and how messages name it ("… at the base commit abc1234"). */
export interface QuarantineText {
  text: string;
  display: string;
}

/** The quarantine of a pull request: the one that applies, and what the PR itself gets wrong. */
export interface PullRequestQuarantine {
  /** The file that applies (the base's, or the head's when the PR's rules are trusted); null: none. */
  quarantine: Quarantine | null;
  /** Problems the pull request brings into the file: the PR fails with them (exit 2). */
  introduced: ConfigProblem[];
  /** What the PR changes in the file ("adds demo/x on claude", "lifts demo/y"): applies after merge. */
  changes: string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The quarantine of a pull request from the base's and the head's file (null: no file). A problem
 * the base already has is the base's: reported and its entry ignored, never the PR's fault. A
 * problem only the head has (a new or edited entry 200 days ahead, a file the PR broke) is
 * `introduced`: it fails the PR, so that it never reaches the base branch (decision 0200).
 */
export function pullRequestQuarantine(
  base: QuarantineText | null,
  head: QuarantineText | null,
  today: Date,
  use: "base" | "head",
): PullRequestQuarantine {
  const b = base ? readQuarantineText(base.text, base.display, today) : null;
  const h = head ? readQuarantineText(head.text, head.display, today) : null;
  let introduced: ConfigProblem[] = [];
  if (h && !(base && head && base.text === head.text)) {
    const inherited = (raw: unknown) => (b?.entryProblems ?? []).some((e) => same(e.raw, raw));
    introduced = [
      ...h.fileProblems,
      ...h.entryProblems.filter((e) => !inherited(e.raw)).flatMap((e) => e.problems),
    ];
  }
  const key = (e: { case: string; target?: string | undefined }) =>
    `${e.case}${e.target ? ` on ${e.target}` : ""}`;
  const baseKeys = new Set((b?.quarantine.entries ?? []).map(key));
  const headKeys = new Set((h?.quarantine.entries ?? []).map(key));
  const changes = [
    ...[...headKeys].filter((k) => !baseKeys.has(k)).map((k) => `adds ${k}`),
    ...[...baseKeys].filter((k) => !headKeys.has(k)).map((k) => `lifts ${k}`),
  ];
  const applied = use === "base" ? b : h;
  const quarantine = applied ? applied.quarantine : null;
  if (quarantine && use === "head") {
    // The head's own problems fail the PR; only those it shares with the base are ignored here.
    quarantine.ignored = quarantine.ignored.filter((p) => !introduced.includes(p));
  }
  return { quarantine, introduced, changes };
}
