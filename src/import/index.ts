/** `evalgate import <format>`: one importer per format, one writer. */
import path from "node:path";
import { UsageError } from "../config/errors.js";
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
  const outcome = await IMPORTERS[format as ImportFormat](opts);
  const out = path.resolve(opts.cwd, opts.out);
  const shown = path.relative(opts.cwd, path.join(out, `${format}.eval.yaml`));
  const evalFile = await writeImport(outcome, out, shown.startsWith("..") ? undefined : shown);
  return { outcome, evalFile };
}
