/**
 * Reading a run bundle (for comparison, reports, merging and the baseline): the one reader of every
 * consumer. A bundle may be a downloaded artifact, so its files are read through the confined
 * reader (bundle/files.ts), summary.json and index.jsonl are checked against their schemas, and
 * its seal is checked (bundle/seal.ts).
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors.js";
import { FileSeal, RefusedFile, readConfined, SealBroken } from "./files.js";
import { checkSeal, checkSealListing, SUMMARY_CAP_BYTES, SUMMARY_FILE, sealedFileCount } from "./seal.js";
import { SUMMARY_SCHEMA, type WireCaseSummary, type WireIndexRow, type WireSummary } from "./wire.js";
import { parseCaseSummary, parseIndexRow, parseSummary } from "./wire-schema.js";

export class BundleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BundleError";
  }
}

export interface Bundle {
  dir: string;
  summary: WireSummary;
  rows: WireIndexRow[];
  /** Whether summary.json carried a seal that matched (false: a bundle of an evalgate before seals). */
  sealed: boolean;
  /**
   * Set when the seal's files were not hashed here (see ReadOptions.sealOnReadAbove): the files the
   * caller reads must be checked through it.
   */
  fileSeal?: FileSeal;
}

export interface ReadOptions {
  /**
   * strict (default): summary.json and every index row must match the wire schema, and each row's
   * paths stay in the bundle: what compare, merge and the baseline compute with. lenient: rows
   * need only be JSON objects; the report view reads their fields one by one (decision 0066).
   */
  check?: "strict" | "lenient";
  /**
   * A lenient read of a bundle whose seal lists more files than this checks only the seal's digest
   * and returns `fileSeal`, through which the caller checks each file it reads (the report view of
   * thousands of cases reads a fraction of them: docs/decisions/0236). Unset: every file is hashed.
   */
  sealOnReadAbove?: number;
}

/**
 * Files in a bundle above which `evalgate report` hashes only the files it reads (about 150
 * attempts); below it the whole bundle is hashed, a few milliseconds, so that a changed file the
 * report does not show is still named.
 */
export const SEAL_ON_READ_ABOVE = 1000;

/** index.jsonl beyond this is not read (a row is a few KiB: hundreds of thousands of cases). */
const INDEX_CAP_BYTES = 512 * 1024 * 1024;

export function rowKey(r: { eval_path: string; test_id: string; target: string }): string {
  return `${r.eval_path}\u0000${r.test_id}\u0000${r.target}`;
}

/** Whether a relative path from a bundle stays inside it, by its names. */
export function confinedPath(rel: string): boolean {
  return (
    rel.length > 0 &&
    !rel.includes("\0") &&
    !path.isAbsolute(rel) &&
    !/^[A-Za-z]:/.test(rel) &&
    !rel.split(/[\\/]/).includes("..")
  );
}

/** A folder an evalgate run was writing into: its attempts' folders are there, its summary is not. */
async function partlyWritten(abs: string): Promise<boolean> {
  let names: string[];
  try {
    names = await readdir(abs);
  } catch {
    return false;
  }
  if (names.includes("index.jsonl") || names.includes(`.${SUMMARY_FILE}.partial`)) return true;
  for (const name of names.slice(0, 64)) {
    const inner = await readdir(path.join(abs, name)).catch(() => [] as string[]);
    if (inner.some((n) => /^run-\d+/.test(n))) return true;
  }
  return false;
}

const INCOMPLETE =
  "an incomplete evalgate bundle (its run was cut off before the bundle was written to the end)";

async function readText(
  abs: string,
  dir: string,
  rel: string,
  cap: number,
  seal?: FileSeal,
): Promise<string> {
  try {
    const bytes = await readConfined(abs, rel, cap);
    seal?.verify(rel, bytes);
    return bytes.toString("utf8");
  } catch (error) {
    if (error instanceof SealBroken) throw brokenSeal(dir, error.message);
    if (error instanceof RefusedFile && error.reason === "missing" && seal) {
      try {
        seal.verifyMissing(rel);
      } catch (broken) {
        throw brokenSeal(dir, (broken as Error).message);
      }
    }
    if (error instanceof RefusedFile) {
      if (error.reason === "missing") {
        if (rel === SUMMARY_FILE && !(await partlyWritten(abs)))
          throw new BundleError(`${dir} is not an evalgate bundle: it has no summary.json`);
        throw new BundleError(`${dir} is ${INCOMPLETE}: ${rel} is missing`);
      }
      throw new BundleError(`${dir}/${error.message}`);
    }
    throw error;
  }
}

export async function readBundle(dir: string, options: ReadOptions = {}): Promise<Bundle> {
  const strict = (options.check ?? "strict") === "strict";
  const abs = path.resolve(dir);
  try {
    if (!(await stat(abs)).isDirectory()) throw new BundleError(`${dir} is not a folder`);
  } catch (error) {
    if (error instanceof BundleError) throw error;
    throw new BundleError(`${dir} does not exist`);
  }
  let raw: unknown;
  const summaryText = await readText(abs, dir, SUMMARY_FILE, SUMMARY_CAP_BYTES);
  try {
    raw = JSON.parse(summaryText);
  } catch (error) {
    throw new BundleError(
      `${dir} is ${INCOMPLETE}: its summary.json is cut off or not valid JSON (${(error as Error).message})`,
    );
  }
  const schema = (raw as { schema?: unknown } | null)?.schema;
  if (schema !== SUMMARY_SCHEMA) {
    throw new BundleError(
      `${dir}/summary.json has schema ${JSON.stringify(schema)}; this evalgate reads ${SUMMARY_SCHEMA}`,
    );
  }
  // The seal first: a changed bundle is named as such, whatever else the change broke.
  const onRead = !strict && sealedFileCount(raw) > (options.sealOnReadAbove ?? Number.POSITIVE_INFINITY);
  const seal = onRead ? checkSealListing(raw) : await checkSeal(abs, raw, strict ? "refuse" : "allow");
  if (seal.state === "broken")
    throw new BundleError(
      `${dir} was changed after evalgate wrote it, so it is not trusted: ${seal.problem}`,
    );
  const fileSeal = seal.state === "listed" ? new FileSeal(seal.files) : undefined;
  // Lenient reads feed only the report view, which reads every field by itself (pipeline/view-fields.ts).
  let summary = raw as WireSummary;
  if (strict) {
    const parsed = parseSummary(raw);
    if ("problem" in parsed)
      throw new BundleError(`${dir}/summary.json is not a summary evalgate wrote: ${parsed.problem}`);
    summary = parsed.summary;
  }
  // Always index.jsonl, the bundle format's one name for it: the field is a pointer for readers,
  // never a path to follow.
  const text = await readText(abs, dir, "index.jsonl", INDEX_CAP_BYTES, fileSeal);
  const rows: WireIndexRow[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const where = `${dir}/index.jsonl line ${i + 1}`;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      throw new BundleError(`${where} is not valid JSON`);
    }
    if (!row || typeof row !== "object" || Array.isArray(row))
      throw new BundleError(`${where} is not a JSON object`);
    if (strict) {
      const parsed = parseIndexRow(row);
      if ("problem" in parsed)
        throw new BundleError(`${where} is not a row evalgate wrote: ${parsed.problem}`);
      const r = parsed.row;
      for (const [key, rel] of [
        ["result_dir", r.result_dir],
        ["summary_path", r.summary_path],
        ...r.runs.map((run, j) => [`runs[${j}].dir`, run.dir]),
      ] as const) {
        if (!confinedPath(rel))
          throw new BundleError(`${where}: ${key} ${JSON.stringify(rel)} leaves the bundle; refused`);
      }
      row = r;
    }
    rows.push(row as WireIndexRow);
  });
  summary.status ??= "complete";
  return { dir: abs, summary, rows, sealed: seal.state !== "unsealed", ...(fileSeal ? { fileSeal } : {}) };
}

/** The error for a bundle one of whose files does not match its seal (found by a FileSeal). */
export function brokenSeal(dir: string, problem: string): BundleError {
  return new BundleError(
    `${dir} was changed after evalgate wrote it, so it is not trusted: its files do not match its seal (${problem})`,
  );
}

/** A note for a bundle whose files cannot be checked (no seal), else undefined. */
export function unsealedNote(b: Bundle, shown: string = b.dir): string | undefined {
  return b.sealed
    ? undefined
    : `${shown} has no seal (written by an earlier evalgate, or edited by hand): its files are not checked`;
}

/**
 * `work` on bundles the user named: a BundleError in it is their mistake (a UsageError, exit 2),
 * its message passed through `message`.
 */
export async function bundleErrorAsUsage<T>(
  work: Promise<T>,
  message: (reason: string) => string = (reason) => reason,
): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BundleError) throw new UsageError(message(error.message));
    throw error;
  }
}

/** Reads a bundle the user named; a folder that is not one is a UsageError, `label: ` before the reason. */
export function readBundleAs(dir: string, label?: string, options: ReadOptions = {}): Promise<Bundle> {
  return bundleErrorAsUsage(readBundle(dir, options), (reason) => (label ? `${label}: ${reason}` : reason));
}

/** A case summary.json beyond this is not read (it lists the tries of one case: a few KiB each). */
const CASE_SUMMARY_CAP_BYTES = 64 * 1024 * 1024;

/** A shard's case summary, checked, for the index row that names it. */
export async function readCaseSummary(shardDir: string, row: WireIndexRow): Promise<WireCaseSummary> {
  const where = `${shardDir}/${row.summary_path}`;
  let value: unknown;
  try {
    value = JSON.parse(
      (await readConfined(shardDir, row.summary_path, CASE_SUMMARY_CAP_BYTES)).toString("utf8"),
    );
  } catch (error) {
    throw new BundleError(`${where} cannot be read: ${(error as Error).message}`);
  }
  const parsed = parseCaseSummary(value);
  if ("problem" in parsed)
    throw new BundleError(`${where} is not a case summary evalgate wrote: ${parsed.problem}`);
  const s = parsed.summary;
  if (s.eval_path !== row.eval_path || s.test_id !== row.test_id || s.target !== row.target)
    throw new BundleError(`${where} is the summary of another case than its index.jsonl row says`);
  return s;
}
