/**
 * What every importer shares: the selection (--filter, --limit), per-instance problems, and the
 * writer of the output folder — one `<format>.eval.yaml`, each test's files under `<format>/<id>/`
 * and an `IMPORT.md` report of what was mapped how and what was skipped and why.
 */
import { chmod, copyFile, cp, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { stringify } from "yaml";
import { suggestSlug } from "../config/schema/values.js";

export const FORMATS = ["swe-bench", "harbor", "runloop", "agentv"] as const;
export type ImportFormat = (typeof FORMATS)[number];

/** An instance that cannot be imported: what is wrong and how to fix it. */
export class InstanceError extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
    this.name = "InstanceError";
  }
}

export interface ImportProblem {
  id: string;
  source: string;
  message: string;
  fix: string;
}

/** A file of the output: text to write, or a file or folder to copy. */
export type OutputFile = { text: string; executable?: boolean } | { copyFrom: string; executable?: boolean };

export interface ImportedTest {
  id: string;
  /** The test as it goes in the eval file (snake_case keys, paths relative to the output folder). */
  entry: Record<string, unknown>;
  /** Files under the output folder, by path relative to it. */
  files: Record<string, OutputFile>;
  /** What was not carried over for this test, and why. */
  notes: string[];
}

export interface ImportOutcome {
  format: ImportFormat;
  sources: string[];
  tests: ImportedTest[];
  problems: ImportProblem[];
  /** How the format's fields were mapped (IMPORT.md's table). */
  mapping: [from: string, to: string][];
  /** Eval-file keys beside tests (repeat, ...). */
  fileKeys?: Record<string, unknown>;
  /** Files shared by all tests. */
  shared?: Record<string, OutputFile>;
  /** Notes about the whole import. */
  notes?: string[];
}

export interface ImportOptions {
  sources: string[];
  out: string;
  cwd: string;
  repos?: string;
  specs?: string;
  limit?: number;
  filter?: string;
  /** harbor: run the tasks on this machine (bubblewrap) instead of in their containers. */
  host?: boolean;
  /** swe-bench: each instance's image, from a template with {id}. */
  images?: string;
}

/** --filter and --limit: which instance ids are imported, in source order. */
export class Selection {
  private taken = 0;
  private readonly match: ((id: string) => boolean) | undefined;
  constructor(
    filter: string | undefined,
    private readonly limit: number | undefined,
  ) {
    this.match = filter ? picomatch(filter) : undefined;
  }
  take(id: string): boolean {
    if (this.match && !this.match(id)) return false;
    if (this.limit !== undefined && this.taken >= this.limit) return false;
    this.taken++;
    return true;
  }
}

/** An id evalgate accepts, unique among `seen`. */
export function testId(raw: string, seen: Set<string>): string {
  let id = suggestSlug(raw) ?? "test";
  for (let n = 2; seen.has(id); n++) id = `${suggestSlug(raw) ?? "test"}-${n}`;
  seen.add(id);
  return id;
}

/** Runs one instance's conversion, turning an InstanceError into a problem for the report. */
export async function convertEach<T>(
  items: { id: string; source: string; item: T }[],
  convert: (item: T, id: string) => Promise<ImportedTest>,
  outcome: ImportOutcome,
): Promise<void> {
  for (const { id, source, item } of items) {
    try {
      outcome.tests.push(await convert(item, id));
    } catch (error) {
      if (!(error instanceof InstanceError)) throw error;
      outcome.problems.push({ id, source, message: error.message, fix: error.fix });
    }
  }
}

async function writeOne(abs: string, f: OutputFile): Promise<void> {
  await mkdir(path.dirname(abs), { recursive: true });
  if ("text" in f) await writeFile(abs, f.text);
  else await cp(f.copyFrom, abs, { recursive: true }).catch(() => copyFile(f.copyFrom, abs));
  if (f.executable) await chmod(abs, 0o755);
}

function report(o: ImportOutcome, evalFile: string, shown: string): string {
  const lines = [
    `# Import: ${o.format}`,
    "",
    `Written by \`evalgate import ${o.format}\` from ${o.sources.map((s) => `\`${s}\``).join(", ")}.`,
    "",
    `- imported: ${o.tests.length} test${o.tests.length === 1 ? "" : "s"}, in \`${evalFile}\``,
    `- skipped: ${o.problems.length}`,
    "",
    `Next: \`evalgate validate ${shown}\`, then \`evalgate validate --solvable ${shown}\` (the reference must pass, no change must fail), then replace the \`noop\` target with your agent.`,
    "",
    "## How the fields were mapped",
    "",
    "| from | to |",
    "| --- | --- |",
    ...o.mapping.map(([a, b]) => `| ${a} | ${b} |`),
    "",
  ];
  if (o.notes?.length) lines.push("## Notes", "", ...o.notes.map((n) => `- ${n}`), "");
  lines.push("## Skipped", "");
  if (o.problems.length === 0) lines.push("Nothing.", "");
  else for (const p of o.problems) lines.push(`- \`${p.id}\` (${p.source}): ${p.message}. Fix: ${p.fix}`);
  if (o.problems.length) lines.push("");
  const noted = o.tests.filter((t) => t.notes.length > 0);
  lines.push("## Per test: not carried over, and notes", "");
  if (noted.length === 0) lines.push("Nothing.", "");
  for (const t of noted) {
    lines.push(`- \`${t.id}\`:`, ...t.notes.map((n) => `  - ${n}`));
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/** Writes the eval file, the tests' files and IMPORT.md; returns the eval file's path. */
/** `shown`: the eval file's path as the user will type it (relative to where they ran the import). */
export async function writeImport(o: ImportOutcome, out: string, shown?: string): Promise<string> {
  await mkdir(out, { recursive: true });
  const evalName = `${o.format}.eval.yaml`;
  for (const [rel, f] of Object.entries(o.shared ?? {})) await writeOne(path.join(out, rel), f);
  for (const t of o.tests) {
    for (const [rel, f] of Object.entries(t.files)) await writeOne(path.join(out, rel), f);
  }
  const file = {
    name: `${o.format} import`,
    description: `Imported by evalgate import ${o.format}; see IMPORT.md`,
    // A placeholder: the imported tests do not say which agent to evaluate.
    targets: [{ name: "noop", provider: "noop" }],
    ...o.fileKeys,
    tests: o.tests.map((t) => t.entry),
  };
  const header =
    "# Written by `evalgate import`: replace the noop target with your agent (docs/agents.md).\n";
  await writeFile(path.join(out, evalName), header + stringify(file, { lineWidth: 0 }));
  await writeFile(path.join(out, "IMPORT.md"), report(o, evalName, shown ?? path.join(out, evalName)));
  return path.join(out, evalName);
}
