/** `evalgate import <format>`: one importer per format, one writer. */
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

/** The format named, or a UsageError listing the formats there are. */
export function importFormat(format: string): ImportFormat {
  if (!(FORMATS as readonly string[]).includes(format))
    throw new UsageError(`unknown format "${format}": one of ${FORMATS.join(", ")}`);
  return format as ImportFormat;
}

/**
 * Imports `format` into `opts.out`. The caller has checked that the folder is new or empty
 * (cli/import.ts): an import is never written among other files.
 */
export async function runImport(
  format: string,
  opts: ImportOptions,
): Promise<{ outcome: ImportOutcome; evalFile: string }> {
  importFormat(format);
  const out = path.resolve(opts.cwd, opts.out);
  const outcome = await IMPORTERS[format as ImportFormat](opts);
  const shown = path.relative(opts.cwd, path.join(out, `${format}.eval.yaml`));
  const evalFile = await writeImport(outcome, out, shown.startsWith("..") ? undefined : shown);
  return { outcome, evalFile };
}
