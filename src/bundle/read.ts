/** Reading a run bundle written by evalgate (for comparison, reports and merging). */
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../config/errors.js";
import { SUMMARY_SCHEMA, type WireIndexRow, type WireSummary } from "./wire.js";

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
}

export function rowKey(r: { eval_path: string; test_id: string; target: string }): string {
  return `${r.eval_path}\u0000${r.test_id}\u0000${r.target}`;
}

export async function readBundle(dir: string): Promise<Bundle> {
  const abs = path.resolve(dir);
  try {
    if (!(await stat(abs)).isDirectory()) throw new BundleError(`${dir} is not a folder`);
  } catch (error) {
    if (error instanceof BundleError) throw error;
    throw new BundleError(`${dir} does not exist`);
  }
  let summary: WireSummary;
  try {
    summary = JSON.parse(await readFile(path.join(abs, "summary.json"), "utf8")) as WireSummary;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new BundleError(
      code === "ENOENT"
        ? `${dir} is not an evalgate bundle: it has no summary.json`
        : `${dir}/summary.json is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (summary?.schema !== SUMMARY_SCHEMA) {
    throw new BundleError(
      `${dir}/summary.json has schema ${JSON.stringify(summary?.schema)}; this evalgate reads ${SUMMARY_SCHEMA}`,
    );
  }
  let text: string;
  try {
    // Always index.jsonl (SPEC §4): the field is a pointer for readers, never a path to follow.
    text = await readFile(path.join(abs, "index.jsonl"), "utf8");
  } catch {
    throw new BundleError(`${dir} is not a complete evalgate bundle: index.jsonl is missing`);
  }
  const rows: WireIndexRow[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      throw new BundleError(`${dir}/index.jsonl line ${i + 1} is not valid JSON`);
    }
    if (!row || typeof row !== "object" || Array.isArray(row))
      throw new BundleError(`${dir}/index.jsonl line ${i + 1} is not a JSON object`);
    rows.push(row as WireIndexRow);
  });
  return { dir: abs, summary, rows };
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
export function readBundleAs(dir: string, label?: string): Promise<Bundle> {
  return bundleErrorAsUsage(readBundle(dir), (reason) => (label ? `${label}: ${reason}` : reason));
}
