/** `evalgate import <format>`: one importer per format, one writer. */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors.js";
import { importAgentV } from "./agentv.js";
import { importHarbor } from "./harbor.js";
import { importRunloop } from "./runloop.js";
import { importSweBench } from "./swe-bench.js";
import { FORMATS, type ImportFormat, type ImportOptions, type ImportOutcome, writeImport } from "./write.js";

const IMPORTERS: Record<ImportFormat, (o: ImportOptions) => Promise<ImportOutcome>> = {
  "swe-bench": importSweBench,
  harbor: importHarbor,
  runloop: importRunloop,
  agentv: importAgentV,
};

export async function runImport(
  format: string,
  opts: ImportOptions,
): Promise<{ outcome: ImportOutcome; evalFile: string }> {
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`unknown format "${format}": one of ${FORMATS.join(", ")}`);
  }
  if (opts.specs && format !== "swe-bench") throw new UsageError("--specs only applies to swe-bench");
  if (opts.repos && format !== "swe-bench") throw new UsageError("--repos only applies to swe-bench");
  const out = path.resolve(opts.cwd, opts.out);
  await checkNewOutFolder(out, opts.out);
  const outcome = await IMPORTERS[format as ImportFormat](opts);
  const shown = path.relative(opts.cwd, path.join(out, `${format}.eval.yaml`));
  const evalFile = await writeImport(outcome, out, shown.startsWith("..") ? undefined : shown);
  return { outcome, evalFile };
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
