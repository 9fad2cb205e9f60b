/** `evalgate import`: task sets of other harnesses → an eval file, its files and IMPORT.md. */

import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { EXIT, UsageError } from "../errors.js";
import { importFormat, runImport } from "../import/index.js";
import { SWE_BENCH_IMAGES } from "../import/swe-bench.js";
import type { CommandIO } from "./io.js";

export interface ImportFlags {
  out: string;
  repos?: string;
  specs?: string;
  limit?: number;
  filter?: string;
  host?: boolean;
  /** swe-bench: true (the published images) or a template with {id}. */
  images?: string | boolean;
}

export async function importCommand(
  format: string,
  sources: string[],
  o: ImportFlags,
  io: CommandIO,
): Promise<number> {
  const { cwd, stdout, stderr } = io;
  importFormat(format);
  if (o.specs && format !== "swe-bench") throw new UsageError("--specs only applies to swe-bench");
  if (o.repos && format !== "swe-bench") throw new UsageError("--repos only applies to swe-bench");
  if (o.host && format !== "harbor") throw new UsageError("--host only applies to harbor");
  if (o.images && format !== "swe-bench") throw new UsageError("--images only applies to swe-bench");
  await checkNewOutFolder(path.resolve(cwd, o.out), o.out);
  const { outcome, evalFile } = await runImport(format, {
    sources,
    cwd,
    out: o.out,
    ...(o.repos ? { repos: o.repos } : {}),
    ...(o.specs ? { specs: o.specs } : {}),
    ...(o.limit ? { limit: o.limit } : {}),
    ...(o.filter ? { filter: o.filter } : {}),
    ...(o.host ? { host: true } : {}),
    ...(o.images ? { images: o.images === true ? SWE_BENCH_IMAGES : o.images } : {}),
  });
  for (const p of outcome.problems)
    stderr.write(`skipped ${p.id} (${p.source}): ${p.message}. Fix: ${p.fix}\n`);
  const rel = path.relative(cwd, evalFile) || evalFile;
  const n = outcome.tests.length;
  stdout.write(
    `imported ${n} test${n === 1 ? "" : "s"} into ${rel}${outcome.problems.length ? `, skipped ${outcome.problems.length}` : ""} (report: ${path.join(path.dirname(rel), "IMPORT.md")})\nnext: evalgate validate --solvable ${rel}\n`,
  );
  if (n === 0) return EXIT.usage;
  return outcome.problems.length ? EXIT.fail : EXIT.pass;
}

/**
 * The output folder must be new or empty, as for `run --out`: an import written into a folder that
 * holds other files would mix with them (an earlier import's tests beside this one's, an eval file
 * replaced). Checked before anything is read or written.
 */
async function checkNewOutFolder(out: string, shown: string): Promise<void> {
  let entries: string[];
  try {
    if (!(await stat(out)).isDirectory()) throw new UsageError(`--out ${shown} is a file, not a folder`);
    entries = await readdir(out);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    return;
  }
  if (entries.length > 0) {
    throw new UsageError(
      `--out ${shown} exists and is not empty (an import is never written among other files): give a new folder, or remove this one`,
    );
  }
}
