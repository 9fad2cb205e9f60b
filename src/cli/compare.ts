/** `evalgate compare`: two bundles case by case; exits 1 on a regression the head's gate counts. */
import { compareBundles, wireBundleComparison } from "../bundle/compare.js";
import { unsealedNote } from "../bundle/read.js";
import { EXIT } from "../errors.js";
import { renderComparisonMarkdown } from "../report/compare.js";
import { type CommandIO, readBundleArg } from "./io.js";

export interface CompareFlags {
  format: "markdown" | "json";
}

export async function compareCommand(
  basePath: string,
  headPath: string,
  o: CompareFlags,
  io: CommandIO,
): Promise<number> {
  const [base, head] = await Promise.all([readBundleArg(basePath, io.cwd), readBundleArg(headPath, io.cwd)]);
  for (const [bundle, shown] of [
    [base, basePath],
    [head, headPath],
  ] as const) {
    const note = unsealedNote(bundle, shown);
    if (note) io.stderr.write(`evalgate: note: ${note}\n`);
  }
  const comparison = compareBundles(base, head);
  io.stdout.write(
    o.format === "json"
      ? `${JSON.stringify(wireBundleComparison(comparison), null, 2)}\n`
      : renderComparisonMarkdown(comparison),
  );
  return comparison.verdict === "pass" ? EXIT.pass : EXIT.fail;
}
