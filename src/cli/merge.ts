/** `evalgate merge`: the shard bundles of one run → one bundle, and the gate decided over all cases. */
import path from "node:path";
import { BaseHistory, readBaselines } from "../bundle/history.js";
import { bundleErrorAsUsage } from "../bundle/read.js";
import { EXIT } from "../errors.js";
import { mergeBundles } from "../pipeline/merge.js";
import { gateExcludeOf, quarantineBlock } from "../pipeline/quarantine.js";
import { newRunId } from "../pipeline/run.js";
import { quarantineText } from "../report/bot.js";
import { regressionsOf } from "../report/comment-head.js";
import { renderCaseTable, renderRunFooter } from "../report/table.js";
import { VERSION } from "../version.js";
import { repositoryRoot } from "../workspace/git.js";
import { CLI_NAMING } from "./args.js";
import type { CommandIO } from "./io.js";
import { cliQuarantine, type QuarantineFlag } from "./quarantine.js";

export interface MergeFlags {
  out: string;
  baseline?: string[];
  json?: boolean;
  quarantine?: QuarantineFlag;
}

export async function mergeCommand(bundles: string[], o: MergeFlags, io: CommandIO): Promise<number> {
  const { cwd, stdout } = io;
  const history = o.baseline?.length
    ? new BaseHistory(await readBaselines(o.baseline, cwd, "--baseline"))
    : undefined;
  const quarantine = await cliQuarantine(o.quarantine, cwd, await repositoryRoot(cwd));
  const out = path.resolve(cwd, o.out);
  const merged = await bundleErrorAsUsage(
    mergeBundles({
      bundles: bundles.map((b) => path.resolve(cwd, b)),
      out,
      runId: newRunId(),
      version: VERSION,
      naming: CLI_NAMING,
      ...(history ? { history } : {}),
      ...(quarantine ? { gateExclude: gateExcludeOf(quarantine) } : {}),
    }),
  );
  if (merged.baselineNote) io.logger.info(`note: ${merged.baselineNote}`);
  if (o.json) stdout.write(`${JSON.stringify(merged.summary, null, 2)}\n`);
  else {
    const q = quarantine ? quarantineText(quarantineBlock(quarantine, merged.rows)) : "";
    stdout.write(
      `${renderCaseTable(merged.view.cases, regressionsOf(merged.view).counted)}\n\n${q ? `${q}\n` : ""}${renderRunFooter(merged.view, out)}\n`,
    );
  }
  return merged.summary.gate.verdict === "pass" ? EXIT.pass : EXIT.fail;
}
