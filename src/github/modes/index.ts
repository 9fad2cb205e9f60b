/**
 * The bundle a step publishes, by the step's mode: run the evals (maybe one shard), merge the
 * shards' bundles, or publish a finished bundle (a folder, or the artifact of the run that
 * triggered a workflow_run).
 */
import type { RunOptions } from "../../pipeline/run.js";
import type { EventContext } from "../context.js";
import { type ActionInputs, checkWorkingDirectory } from "../inputs.js";
import { mergeMode } from "./merge.js";
import type { Produced, RunModeDeps } from "./produced.js";
import { publishMode } from "./publish.js";
import { runMode } from "./run.js";

export type { ModeDeps, Produced, RunModeDeps } from "./produced.js";

export async function produceBundle(
  inputs: ActionInputs,
  ctx: EventContext,
  deps: RunModeDeps,
  /** What the bot adds to a run (github/bot.ts): filters of a command, the base's gate, quarantine, skips. */
  extra: Partial<RunOptions> = {},
): Promise<Produced> {
  await checkWorkingDirectory(inputs.cwd);
  const mode = inputs.mode;
  if (mode.kind === "run") return runMode({ ...mode.options, ...extra }, inputs, ctx, deps);
  if (mode.kind === "merge") return mergeMode(mode, inputs, ctx, deps, extra.gateExclude);
  return publishMode(mode, inputs, ctx, deps);
}
