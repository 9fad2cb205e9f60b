/**
 * The baseline a step compares with (input `baseline`): a bundle folder, none (`off`), or, with
 * `auto`, the bundle of the base branch's newest good run of this workflow. A run counts when it
 * evaluated the base branch's own commit: a push to it (or a schedule or manual run on it) or a
 * merge-queue run into it — never a pull request's run, and never an `issue_comment` command run,
 * which GitHub files under the default branch although it checked out a pull request's head
 * (decision 0202). The candidates are walked newest first: one whose bundle is corrupt, of another
 * commit, or of other suites is skipped with the reason, and the step says which run it used and why
 * the newer ones were not. Every way `auto` can fail ends in a note for the comment, never in a
 * failed step.
 */
import path from "node:path";
import { type Bundle, BundleError, readBundle, readBundleAs } from "../bundle/read.js";
import { suiteFit } from "../bundle/suites.js";
import type { Logger } from "../log.js";
import { artifactAttempt, newestAttempt } from "./artifact.js";
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

/** A baseline to compare with, or why there is none; what was skipped on the way. */
export interface Baseline {
  /** The newest base run's bundle. */
  bundle?: Bundle;
  /** Every base run found, newest first (pooled into each case's history); `bundle` is the first. */
  bundles?: Bundle[];
  note?: string;
  /** The run whose bundle it is ("run 41 on main (abc1234)"), for the log and the comment. */
  used?: string;
  /** Newer runs passed over, each with why ("run 42: its bundle is corrupt: …"). */
  skipped?: string[];
}

/** What looking up a baseline needs of the step. */
export interface BaselineDeps {
  client: GitHubClient | undefined;
  logger: Logger;
  env: NodeJS.ProcessEnv;
}

/**
 * The baseline bundle (`baseline` input), or why there is none. `suites`: the run's suites (root
 * eval paths); a candidate that shares none of them is skipped.
 */
export async function resolveBaseline(
  inputs: Pick<ActionInputs, "baseline" | "artifactName">,
  ctx: EventContext,
  deps: BaselineDeps,
  suites?: readonly string[],
): Promise<Baseline> {
  const b = inputs.baseline;
  if (b.kind === "off") return { note: "the comparison is switched off (baseline: off)" };
  if (b.kind === "path") return { bundle: await readBundleAs(b.path, "input baseline") };
  if (!deps.client) return { note: "no github-token to look up the base branch's runs" };
  const dest = await scratchDir(deps.env, "evalgate-baseline-");
  const found = await fetchBaseline(deps.client, ctx, inputs.artifactName, dest, deps.logger, suites);
  if (found.note !== undefined) {
    deps.logger.info(`no baseline: ${found.note}`);
    return { note: found.note, skipped: found.skipped };
  }
  return { bundle: found.bundle, bundles: found.bundles, used: found.used, skipped: found.skipped };
}

export type BaselineResult =
  | { dir: string; bundle: Bundle; bundles: Bundle[]; used: string; skipped: string[]; note?: undefined }
  | { dir?: undefined; bundle?: undefined; bundles?: undefined; note: string; skipped: string[] };

/** How many of the base branch's newest successful runs are searched for a bundle artifact. */
const RUNS_SEARCHED = 10;
/** The newest base runs pooled into the history (their bundles, each from its own artifact). */
export const BASELINE_RUNS = 10;

/** Events whose runs evaluate the base branch's own commit (merge_group: the queue's, into it). */
const BASE_EVENTS = new Set(["push", "schedule", "workflow_dispatch"]);

const NEEDS_ACTIONS_READ =
  "the token cannot read this repository's workflow runs and artifacts: add actions: read to the workflow's permissions";

interface BaseRun {
  id: number;
  head_sha: string;
  event: string;
  run_number: number;
  head_branch: string | null;
}

/** The base branch's successful runs of this workflow that can be baselines, newest first. */
async function baseRuns(
  client: GitHubClient,
  ctx: EventContext,
  base: string,
  workflow: string,
): Promise<BaseRun[] | { note: string }> {
  const repo = { owner: ctx.owner, repo: ctx.repo };
  const self = `${ctx.owner}/${ctx.repo}`;
  const list = async (q: { branch?: string; event?: string; per_page: number }) =>
    (
      await client.rest.actions.listWorkflowRuns({
        ...repo,
        workflow_id: workflow,
        status: "success",
        exclude_pull_requests: true,
        ...q,
      })
    ).data.workflow_runs;
  try {
    const [onBranch, queued] = await Promise.all([
      list({ branch: base, per_page: 50 }),
      list({ event: "merge_group", per_page: 20 }),
    ]);
    const mine = (r: { id: number; head_repository?: { full_name?: string } | null }) =>
      r.id !== ctx.runId &&
      // A fork's PR from its own `main` also has head_branch "main": only this repository's runs count.
      (r.head_repository?.full_name ?? self) === self;
    const runs = [
      ...onBranch.filter((r) => BASE_EVENTS.has(r.event)),
      ...queued.filter(
        (r) => r.event === "merge_group" && (r.head_branch ?? "").startsWith(`gh-readonly-queue/${base}/`),
      ),
    ].filter(mine);
    // Run ids grow with time: the highest is the newest.
    return runs.sort((a, b) => b.id - a.id).slice(0, RUNS_SEARCHED);
  } catch (error) {
    const status = apiStatus(error);
    if (status === 403) return { note: NEEDS_ACTIONS_READ };
    if (status === 404)
      return {
        note: `the workflow ${workflow} was not found, or ${NEEDS_ACTIONS_READ.replace(/^the /, "")}`,
      };
    return { note: explainApiError(error, `listing the runs of ${workflow} on ${base}`) };
  }
}

/** Why a run's bundle is not a baseline: each reads on its own as a note. */
type Skip = { skip: string; kind: "expired" | "no-artifact" | "unusable" };
/** A run's bundle, or why it is not a baseline (a skip), or a note that ends the search. */
type Candidate = { bundle: Bundle; dir: string } | Skip | { stop: string };

async function candidate(
  client: GitHubClient,
  ctx: EventContext,
  run: BaseRun,
  artifactName: string,
  dest: string,
  suites: readonly string[] | undefined,
): Promise<Candidate> {
  const repo = { owner: ctx.owner, repo: ctx.repo };
  const label = `run ${run.run_number}`;
  const expired: Skip = {
    skip: `the ${artifactName} artifact of ${label} on ${ctx.baseBranch} has expired (raise retention-days to keep baselines longer)`,
    kind: "expired",
  };
  let artifacts: ArtifactRef[];
  try {
    artifacts = await listRunArtifacts(client, repo, run.id);
  } catch (error) {
    if (apiStatus(error) === 403) return { stop: NEEDS_ACTIONS_READ };
    return { stop: explainApiError(error, `listing the artifacts of run ${run.id}`) };
  }
  // A re-run uploads NAME-attempt-N: the newest attempt's bundle is the run's.
  const named = artifacts.filter((a) => artifactAttempt(a.name, artifactName) !== undefined);
  const live = newestAttempt(
    named.filter((a) => !a.expired),
    artifactName,
  );
  if (!live)
    return named.length > 0
      ? expired
      : { skip: `${label} has no artifact named ${artifactName}`, kind: "no-artifact" };
  const dir = path.join(dest, String(run.id));
  try {
    await downloadArtifact(client, repo, live, dir);
    const bundle = await readBundle(dir);
    const sha = bundle.summary.git?.sha ?? null;
    if (sha !== run.head_sha)
      return {
        skip: `the bundle of ${label} is of commit ${sha?.slice(0, 7) ?? "(none)"}, not of the run's ${run.head_sha.slice(0, 7)}`,
        kind: "unusable",
      };
    if (suites && suiteFit(bundle, suites).shared.length === 0)
      return {
        skip: `the bundle of ${label} ran other suites (${bundle.summary.evals.map((e) => e.eval_path).join(", ") || "none"}) than this run`,
        kind: "unusable",
      };
    return { bundle, dir };
  } catch (error) {
    if (error instanceof DownloadError && error.status === 410) return expired;
    if (error instanceof BundleError) {
      // A tampered, cut-off or foreign bundle is never compared with: the skip says why.
      const reason = error.message.replaceAll(`${dir}/`, "").replaceAll(dir, "it");
      return { skip: `the artifact ${live.name} of ${label} was not used: ${reason}`, kind: "unusable" };
    }
    if (apiStatus(error) === 403) return { stop: NEEDS_ACTIONS_READ };
    return {
      skip: `the artifact ${live.name} of ${label} could not be used: ${
        error instanceof DownloadError ? error.message : explainApiError(error, "downloading it")
      }`,
      kind: "unusable",
    };
  }
}

/**
 * The good baselines among the base branch's newest runs, newest first: at most `want` of them (a
 * pooled baseline asks for more than one), with the runs skipped on the way and why.
 */
export async function baselineCandidates(
  client: GitHubClient,
  ctx: EventContext,
  artifactName: string,
  dest: string,
  opts: { want: number; suites?: readonly string[] },
): Promise<{
  good: { bundle: Bundle; dir: string; used: string }[];
  skipped: Skip[];
  note?: string;
  searched: number;
}> {
  const out = {
    good: [] as { bundle: Bundle; dir: string; used: string }[],
    skipped: [] as Skip[],
    searched: 0,
  };
  if (!ctx.baseBranch)
    return { ...out, note: `the ${ctx.eventName} event has no base branch to compare with` };
  if (!ctx.workflowPath)
    return {
      ...out,
      note: "GITHUB_WORKFLOW_REF is not set, so this workflow's earlier runs cannot be found",
    };
  const workflow = path.posix.basename(ctx.workflowPath);
  const runs = await baseRuns(client, ctx, ctx.baseBranch, workflow);
  if (!Array.isArray(runs)) return { ...out, note: runs.note };
  out.searched = runs.length;
  if (runs.length === 0)
    return { ...out, note: `the base branch ${ctx.baseBranch} has no successful run of ${workflow}` };
  for (const run of runs) {
    const c = await candidate(client, ctx, run, artifactName, dest, opts.suites);
    if ("stop" in c) return { ...out, note: c.stop };
    if ("skip" in c) {
      out.skipped.push(c);
      continue;
    }
    const where = run.event === "merge_group" ? "the merge queue" : ctx.baseBranch;
    out.good.push({ ...c, used: `run ${run.run_number} on ${where} (${run.head_sha.slice(0, 7)})` });
    if (out.good.length >= opts.want) break;
  }
  return out;
}

export async function fetchBaseline(
  client: GitHubClient,
  ctx: EventContext,
  artifactName: string,
  dest: string,
  logger: Logger,
  suites?: readonly string[],
): Promise<BaselineResult> {
  // The newest good runs, pooled into each case's history (bundle/history.ts).
  const found = await baselineCandidates(client, ctx, artifactName, dest, {
    want: BASELINE_RUNS,
    ...(suites ? { suites } : {}),
  });
  const skipped = found.skipped.map((x) => x.skip);
  const [best] = found.good;
  if (best) {
    const older = found.good.length - 1;
    logger.info(
      `baseline: artifact ${artifactName} of ${best.used}${older > 0 ? ` and ${older} older run${older > 1 ? "s" : ""} (the case's history)` : ""}${skipped.length ? `; runs skipped: ${skipped.join("; ")}` : ""}`,
    );
    const bundles = found.good.map((g) => g.bundle);
    return { dir: best.dir, bundle: best.bundle, bundles, used: best.used, skipped };
  }
  if (found.note !== undefined) return { note: found.note, skipped };
  const kinds = new Set(found.skipped.map((x) => x.kind));
  const workflow = path.posix.basename(ctx.workflowPath ?? "");
  const runs = `the last ${found.searched} successful runs of ${workflow} on ${ctx.baseBranch}`;
  // One reason for all of them: the newest run's own words (its artifact expired, it has none).
  if (found.skipped.length === 1 || (kinds.size === 1 && kinds.has("expired")))
    return { note: skipped[0]!, skipped };
  if (kinds.size === 1 && kinds.has("no-artifact"))
    return { note: `none of ${runs} has an artifact named ${artifactName}`, skipped };
  return { note: `none of ${runs} has a usable ${artifactName} bundle: ${skipped.join("; ")}`, skipped };
}
