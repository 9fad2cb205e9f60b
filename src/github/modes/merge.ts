/**
 * The merge mode (input `merge`): the shard bundles of one run (this run's shard artifacts, or
 * folders) merged into one bundle, compared with the baseline, and gated over all cases.
 */
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { glob, isDynamicPattern } from "tinyglobby";
import { BaseHistory } from "../../bundle/history.js";
import { bundleErrorAsUsage } from "../../bundle/read.js";
import { defaultBundleDir } from "../../bundle/write.js";
import { UsageError } from "../../errors.js";
import { mergeBundles } from "../../pipeline/merge.js";
import { newRunId } from "../../pipeline/run.js";
import { VERSION } from "../../version.js";
import { tempRoot } from "../../workspace/temp.js";
import { parseShardArtifactName } from "../artifact.js";
import { resolveBaseline } from "../baseline.js";
import type { EventContext } from "../context.js";
import { actionsApi, downloadArtifact, listRunArtifacts, scratchDir } from "../download.js";
import { ACTION_NAMING, type ActionInputs, type MergeMode } from "../inputs.js";
import { type ModeDeps, madeHere, type Produced } from "./produced.js";

/** Bundle folders named by `merge:` paths: a bundle, a glob of bundles, or a folder of bundles. */
async function bundleDirs(patterns: string[], cwd: string): Promise<string[]> {
  const dirs: string[] = [];
  for (const p of patterns) {
    const matches = isDynamicPattern(p)
      ? (await glob(p, { cwd, onlyDirectories: true, absolute: true, expandDirectories: false })).sort()
      : [path.resolve(cwd, p)];
    if (matches.length === 0) throw new UsageError(`input merge: ${p} matches no folder`);
    for (const dir of matches) {
      if (existsSync(path.join(dir, "summary.json"))) {
        dirs.push(dir);
        continue;
      }
      // actions/download-artifact puts each artifact in a folder of its name.
      const inner = existsSync(dir)
        ? (await readdir(dir, { withFileTypes: true }))
            .filter((e) => e.isDirectory() && existsSync(path.join(dir, e.name, "summary.json")))
            .map((e) => path.join(dir, e.name))
            .sort()
        : [];
      if (inner.length === 0) throw new UsageError(`input merge: ${p} holds no evalgate bundle`);
      dirs.push(...inner);
    }
  }
  return dirs.map((d) => path.resolve(d));
}

/** This run's shard artifacts (`<artifact-name>-shard-I-of-N`), downloaded. */
async function downloadShards(inputs: ActionInputs, ctx: EventContext, deps: ModeDeps): Promise<string[]> {
  const client = deps.client;
  const runId = ctx.runId;
  if (!client) throw new UsageError("input merge: artifacts needs the github-token input");
  if (!runId) throw new UsageError("input merge: artifacts needs GITHUB_RUN_ID (run it inside a workflow)");
  const root = await scratchDir(deps.env, "evalgate-shards-");
  const shards = await actionsApi("listing this run's shard artifacts", async () =>
    (await listRunArtifacts(client, ctx, runId)).filter((a) =>
      parseShardArtifactName(a.name, inputs.artifactName),
    ),
  );
  if (shards.length === 0) {
    throw new UsageError(
      `input merge: this run has no artifact named ${inputs.artifactName}-shard-I-of-N; run the shard jobs first (needs: [...]) with the same artifact-name`,
    );
  }
  const dirs: string[] = [];
  for (const a of shards.sort((x, y) => x.name.localeCompare(y.name))) {
    const dest = path.join(root, a.name);
    await actionsApi(`downloading the shard artifact ${a.name}`, () =>
      downloadArtifact(client, ctx, a, dest, tempRoot(deps.env)),
    );
    dirs.push(dest);
  }
  deps.logger.info(`merging ${dirs.length} shard artifacts: ${shards.map((a) => a.name).join(", ")}`);
  return dirs;
}

export async function mergeMode(
  mode: MergeMode,
  inputs: ActionInputs,
  ctx: EventContext,
  deps: ModeDeps,
): Promise<Produced> {
  const dirs =
    mode.from === "artifacts"
      ? await downloadShards(inputs, ctx, deps)
      : await bundleDirs(mode.from, inputs.cwd);
  const base = await resolveBaseline(inputs, ctx, deps);
  const runId = newRunId();
  const out = mode.out ? path.resolve(inputs.cwd, mode.out) : await defaultBundleDir(inputs.cwd, runId);
  const merged = await bundleErrorAsUsage(
    mergeBundles({
      bundles: dirs,
      out,
      runId,
      version: VERSION,
      naming: ACTION_NAMING,
      ...(base.bundle ? { history: new BaseHistory(base.bundles ?? [base.bundle]) } : {}),
    }),
    (reason) => `input merge: ${reason}`,
  );
  return madeHere(out, merged, base);
}
