/**
 * The merge mode (input `merge`): the shard bundles of one run (this run's shard artifacts, or
 * folders) merged into one bundle, compared with the baseline, and gated over all cases.
 */
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { glob, isDynamicPattern } from "tinyglobby";
import { readConfined } from "../../bundle/files.js";
import { BaseHistory } from "../../bundle/history.js";
import { bundleErrorAsUsage } from "../../bundle/read.js";
import { defaultBundleDir } from "../../bundle/write.js";
import { UsageError } from "../../errors.js";
import { type MergeOptions, mergeBundles } from "../../pipeline/merge.js";
import { newRunId } from "../../pipeline/run.js";
import { VERSION } from "../../version.js";
import { tempRoot } from "../../workspace/temp.js";
import { parseShardArtifactName } from "../artifact.js";
import { resolveBaseline } from "../baseline.js";
import type { EventContext } from "../context.js";
import { type ArtifactRef, actionsApi, downloadArtifact, listRunArtifacts, scratchDir } from "../download.js";
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

/** The suites the shards ran (their summaries' eval files): a baseline of none of them is skipped. */
async function suitesOf(dirs: readonly string[]): Promise<string[]> {
  const suites = new Set<string>();
  for (const dir of dirs) {
    // Read as a claim only: the merge checks each shard fully (bundle/merge.ts).
    const summary = await readConfined(dir, "summary.json", 64 * 1024 ** 2)
      .then((b) => JSON.parse(b.toString("utf8")) as { evals?: { eval_path?: unknown }[] })
      .catch(() => ({ evals: [] }));
    for (const e of Array.isArray(summary.evals) ? summary.evals : [])
      if (typeof e?.eval_path === "string") suites.add(e.eval_path);
  }
  return [...suites];
}

/** This run's shard artifacts (`<artifact-name>-shard-I-of-N`), downloaded. */
async function downloadShards(inputs: ActionInputs, ctx: EventContext, deps: ModeDeps): Promise<string[]> {
  const client = deps.client;
  const runId = ctx.runId;
  if (!client) throw new UsageError("input merge: artifacts needs the github-token input");
  if (!runId) throw new UsageError("input merge: artifacts needs GITHUB_RUN_ID (run it inside a workflow)");
  const root = await scratchDir(deps.env, "evalgate-shards-");
  // Per shard, the newest attempt's artifact: "Re-run failed jobs" re-runs some shards only.
  const shards = await actionsApi("listing this run's shard artifacts", async () => {
    const newest = new Map<string, { a: ArtifactRef; attempt: number }>();
    for (const a of await listRunArtifacts(client, ctx, runId)) {
      const s = parseShardArtifactName(a.name, inputs.artifactName);
      if (!s || a.expired) continue;
      const key = `${s.index}-of-${s.total}`;
      const seen = newest.get(key);
      if (!seen || s.attempt > seen.attempt) newest.set(key, { a, attempt: s.attempt });
    }
    return [...newest.values()].map((x) => x.a);
  });
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
  /** The quarantine's cases, left out of the gate (github/bot.ts). */
  gateExclude?: MergeOptions["gateExclude"],
): Promise<Produced> {
  const dirs =
    mode.from === "artifacts"
      ? await downloadShards(inputs, ctx, deps)
      : await bundleDirs(mode.from, inputs.cwd);
  const suites = await suitesOf(dirs);
  const base = await resolveBaseline(inputs, ctx, deps, suites.length > 0 ? suites : undefined);
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
      ...(gateExclude ? { gateExclude } : {}),
    }),
    (reason) => `input merge: ${reason}`,
  );
  if (merged.baselineNote) deps.logger.info(`note: ${merged.baselineNote}`);
  const made = madeHere(out, merged, base);
  if (merged.baselineNote)
    made.baselineReport = {
      ...made.baselineReport,
      skipped: made.baselineReport?.skipped ?? [],
      fit: merged.baselineNote,
    };
  return made;
}
