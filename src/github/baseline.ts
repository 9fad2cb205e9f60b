/**
 * The baseline a step compares with (input `baseline`): a bundle folder, none (`off`), or, with
 * `auto`, the bundles of the base branch's latest successful runs of this workflow (the newest
 * BASELINE_RUNS: pooled into each case's history). Every way `auto`
 * can fail (no such run, no artifact, an expired one, a token without `actions: read`, a download
 * error) ends in a note for the comment, never in a failed step.
 */
import path from "node:path";
import { type Bundle, BundleError, readBundle, readBundleAs } from "../bundle/read.js";
import type { Logger } from "../log.js";
import { apiStatus, explainApiError, type GitHubClient } from "./client.js";
import type { EventContext } from "./context.js";
import {
  type ArtifactRef,
  DownloadError,
  downloadArtifact,
  listRunArtifacts,
  scratchDir,
} from "./download.js";
import type { ActionInputs } from "./inputs.js";

/** A baseline to compare with, or why there is none. */
export interface Baseline {
  /** The newest base run's bundle. */
  bundle?: Bundle;
  /** Every base run found, newest first (pooled into each case's history); `bundle` is the first. */
  bundles?: Bundle[];
  note?: string;
}

/** What looking up a baseline needs of the step. */
export interface BaselineDeps {
  client: GitHubClient | undefined;
  logger: Logger;
  env: NodeJS.ProcessEnv;
}

/** The baseline bundle (`baseline` input), or why there is none. */
export async function resolveBaseline(
  inputs: Pick<ActionInputs, "baseline" | "artifactName">,
  ctx: EventContext,
  deps: BaselineDeps,
): Promise<Baseline> {
  const b = inputs.baseline;
  if (b.kind === "off") return { note: "the comparison is switched off (baseline: off)" };
  if (b.kind === "path") return { bundle: await readBundleAs(b.path, "input baseline") };
  if (!deps.client) return { note: "no github-token to look up the base branch's runs" };
  const dest = await scratchDir(deps.env, "evalgate-baseline-");
  const found = await fetchBaseline(deps.client, ctx, inputs.artifactName, dest, deps.logger);
  if (found.note !== undefined) {
    deps.logger.info(`no baseline: ${found.note}`);
    return { note: found.note };
  }
  return { bundle: found.bundle, bundles: found.bundles };
}

export type BaselineResult =
  | { dir: string; bundle: Bundle; bundles: Bundle[]; note?: undefined }
  | { dir?: undefined; bundle?: undefined; bundles?: undefined; note: string };

/** How many of the base branch's latest successful runs are searched for a bundle artifact. */
const RUNS_SEARCHED = 10;
/** The newest base runs pooled into the history (their bundles, each from its own artifact). */
export const BASELINE_RUNS = 10;

const NEEDS_ACTIONS_READ =
  "the token cannot read this repository's workflow runs and artifacts: add actions: read to the workflow's permissions";

export async function fetchBaseline(
  client: GitHubClient,
  ctx: EventContext,
  artifactName: string,
  dest: string,
  logger: Logger,
): Promise<BaselineResult> {
  if (!ctx.baseBranch) return { note: `the ${ctx.eventName} event has no base branch to compare with` };
  if (!ctx.workflowPath)
    return { note: "GITHUB_WORKFLOW_REF is not set, so this workflow's earlier runs cannot be found" };
  const repo = { owner: ctx.owner, repo: ctx.repo };
  const workflow = path.posix.basename(ctx.workflowPath);

  let runs: { id: number; head_sha: string; event: string; run_number: number }[];
  try {
    const { data } = await client.rest.actions.listWorkflowRuns({
      ...repo,
      workflow_id: workflow,
      branch: ctx.baseBranch,
      status: "success",
      exclude_pull_requests: true,
      per_page: 30,
    });
    const self = `${ctx.owner}/${ctx.repo}`;
    runs = data.workflow_runs
      .filter(
        (r) =>
          r.id !== ctx.runId &&
          // A fork's PR from its own `main` also has head_branch "main": only this repository's runs count.
          !r.event.startsWith("pull_request") &&
          (r.head_repository?.full_name ?? self) === self,
      )
      .slice(0, RUNS_SEARCHED);
  } catch (error) {
    const status = apiStatus(error);
    if (status === 403) return { note: NEEDS_ACTIONS_READ };
    if (status === 404)
      return {
        note: `the workflow ${workflow} was not found, or ${NEEDS_ACTIONS_READ.replace(/^the /, "")}`,
      };
    return { note: explainApiError(error, `listing the runs of ${workflow} on ${ctx.baseBranch}`) };
  }
  if (runs.length === 0)
    return { note: `the base branch ${ctx.baseBranch} has no successful run of ${workflow}` };

  let expired: { run: number } | undefined;
  // The newest good bundles, up to BASELINE_RUNS; the first problem ends the search when one is found.
  const found: { dir: string; bundle: Bundle }[] = [];
  const done = (): BaselineResult =>
    ({ dir: found[0]!.dir, bundle: found[0]!.bundle, bundles: found.map((f) => f.bundle) }) as const;
  for (const run of runs) {
    if (found.length >= BASELINE_RUNS) break;
    let artifacts: ArtifactRef[];
    try {
      artifacts = await listRunArtifacts(client, repo, run.id, artifactName);
    } catch (error) {
      if (found.length > 0) return done();
      if (apiStatus(error) === 403) return { note: NEEDS_ACTIONS_READ };
      return { note: explainApiError(error, `listing the artifacts of run ${run.id}`) };
    }
    const live = artifacts.find((a) => !a.expired);
    if (!live) {
      if (artifacts.length > 0) expired ??= { run: run.run_number };
      continue;
    }
    const into = path.join(dest, String(run.id));
    try {
      await downloadArtifact(client, repo, live, into);
      const bundle = await readBundle(into);
      logger.info(
        `baseline: artifact ${live.name} of run ${run.run_number} on ${ctx.baseBranch} (${run.head_sha.slice(0, 7)})`,
      );
      found.push({ dir: into, bundle });
    } catch (error) {
      if (found.length > 0) return done();
      if (error instanceof DownloadError && error.status === 410) {
        expired ??= { run: run.run_number };
        continue;
      }
      if (error instanceof BundleError) {
        // A tampered, cut-off or foreign bundle is never compared with: the note says why.
        const reason = error.message.replaceAll(`${into}/`, "").replaceAll(into, "it");
        return { note: `the artifact ${live.name} of run ${run.run_number} was not used: ${reason}` };
      }
      if (apiStatus(error) === 403) return { note: NEEDS_ACTIONS_READ };
      return {
        note: `the artifact ${live.name} of run ${run.run_number} could not be used: ${
          error instanceof DownloadError ? error.message : explainApiError(error, "downloading it")
        }`,
      };
    }
  }
  if (found.length > 0) return done();
  return {
    note: expired
      ? `the ${artifactName} artifact of run ${expired.run} on ${ctx.baseBranch} has expired (raise retention-days to keep baselines longer)`
      : `none of the last ${runs.length} successful runs of ${workflow} on ${ctx.baseBranch} has an artifact named ${artifactName}`,
  };
}
