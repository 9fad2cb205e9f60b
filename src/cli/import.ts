/** `evalgate import`: task sets of other harnesses → an eval file, its files and IMPORT.md. */
import path from "node:path";
import { EXIT } from "../errors.js";
import { runImport } from "../import/index.js";
import type { CommandIO } from "./io.js";

export interface ImportFlags {
  out: string;
  repos?: string;
  specs?: string;
  limit?: number;
  filter?: string;
}

export async function importCommand(
  format: string,
  sources: string[],
  o: ImportFlags,
  io: CommandIO,
): Promise<number> {
  const { cwd, stdout, stderr } = io;
  const { outcome, evalFile } = await runImport(format, {
    sources,
    cwd,
    out: o.out,
    ...(o.repos ? { repos: o.repos } : {}),
    ...(o.specs ? { specs: o.specs } : {}),
    ...(o.limit ? { limit: o.limit } : {}),
    ...(o.filter ? { filter: o.filter } : {}),
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
