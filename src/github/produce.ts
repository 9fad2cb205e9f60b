/**
 * The bundle a step publishes: run the evals (maybe one shard), merge the shards' bundles, or take a
 * finished bundle (a path, or the artifact of the run that triggered a workflow_run).
 */
import { existsSync } from "node:fs";
import { mkdtemp, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { glob, isDynamicPattern } from "tinyglobby";
import { readConfined } from "../bundle/files.js";
import { type Bundle, bundleErrorAsUsage, readBundleAs } from "../bundle/read.js";
import type { WireSummary } from "../bundle/wire.js";
import { defaultBundleDir } from "../bundle/write.js";
import { UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import { mergeBundles } from "../pipeline/merge.js";
import { newRunId, planRun, type RunOptions, runEvals } from "../pipeline/run.js";
import { LineProgress } from "../report/console.js";
import type { ReportView } from "../report/view.js";
import { SignalInterrupt } from "../run/interrupt.js";
import { ChildProcessRunner, killLiveGroups } from "../sandbox/process.js";
import { VERSION } from "../version.js";
import { git, repositoryRoot } from "../workspace/git.js";
import { tempRoot } from "../workspace/temp.js";
import { parseShardArtifactName } from "./artifact.js";
import { fetchBaseline } from "./baseline.js";
import { explainApiError, type GitHubClient } from "./client.js";
import type { EventContext } from "./context.js";
import { downloadArtifact, listRunArtifacts } from "./download.js";
import type { ActionInputs } from "./inputs.js";
import { ACTION_NAMING } from "./inputs.js";

/** What the action records beside a bundle it made, for a later workflow_run step. */
export const GITHUB_RECORD = "github.json";
export interface GitHubRecord {
  schema: "evalgate.github/v1";
  repository: string;
  event: string;
  sha: string;
  pull_request: number | null;
  fork: boolean;
  base_branch: string | null;
  run_id: number | null;
  run_attempt: number | null;
  baseline_note: string | null;
}

export interface Produced {
  dir: string;
  summary: WireSummary;
  /** The baseline compared with, if any. */
  baseline?: Bundle;
  /** Why there is no baseline. */
  baselineNote?: string;
  /** This step made the bundle (run, merge), so it uploads it; a published bundle is not uploaded again. */
  made: boolean;
  /** Set when this step made the bundle: the view its reports were rendered from. */
  view?: ReportView;
  /** Set when the bundle came from a workflow_run: the PR and commit it belongs to. */
  from?: { pr: number | null; sha: string };
}

export interface ProduceDeps {
  client: GitHubClient | undefined;
  logger: Logger;
  env: NodeJS.ProcessEnv;
}

function scratch(env: NodeJS.ProcessEnv, prefix: string): Promise<string> {
  return mkdtemp(path.join(tempRoot(env), prefix));
}

/** `call` to GitHub's Actions API, whose failure stops the step: saying what failed and that it needs actions: read. */
async function actionsApi<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new UsageError(explainApiError(error, what, "actions: read"));
  }
}

/** A baseline to compare with, or why there is none. */
interface Baseline {
  bundle?: Bundle;
  note?: string;
}

/** The baseline bundle (`baseline` input), or why there is none. */
export async function resolveBaseline(
  inputs: ActionInputs,
  ctx: EventContext,
  deps: ProduceDeps,
): Promise<Baseline> {
  const b = inputs.baseline;
  if (b.kind === "off") return { note: "the comparison is switched off (baseline: off)" };
  if (b.kind === "path") return { bundle: await readBundleAs(b.path, "input baseline") };
  if (!deps.client) return { note: "no github-token to look up the base branch's runs" };
  const dest = await scratch(deps.env, "evalgate-baseline-");
  const found = await fetchBaseline(deps.client, ctx, inputs.artifactName, dest, deps.logger);
  if (found.note !== undefined) {
    deps.logger.info(`no baseline: ${found.note}`);
    return { note: found.note };
  }
  return { bundle: found.bundle };
}

/**
 * Under pull_request_target the workflow holds secrets and a write token while the PR's code is
 * untrusted: running agents and scorers on a checkout of it hands both to the PR's author.
 */
async function guardPullRequestTarget(inputs: ActionInputs, ctx: EventContext): Promise<void> {
  if (ctx.eventName !== "pull_request_target" || inputs.allowPullRequestTarget) return;
  const head = await git(["rev-parse", "HEAD"], { cwd: inputs.cwd }).then(
    (s) => s.trim(),
    () => null,
  );
  if (head && head === ctx.workflowSha) return;
  throw new UsageError(
    `refusing to run under pull_request_target on ${head ? `commit ${head.slice(0, 7)}, which is not the base branch's commit ${ctx.workflowSha?.slice(0, 7) ?? "(unknown)"}` : "a folder that is not a git checkout"}: ` +
      "this event gives the workflow your secrets and a write token, and the pull request's code (its agents, " +
      "scorers and setup commands) could steal them. Use the pull_request event instead (for forks, the " +
      "two-workflow recipe in docs/fork-pull-requests.md), or set allow-pull-request-target: true only if " +
      "you trust every pull request's author.",
  );
}

/**
 * actions/checkout leaves the job's token in the checkout's .git/config (an `extraheader`) unless
 * told `persist-credentials: false`; any process of the job's user can read it there, and evalgate
 * does not need it. Says so; the token stays masked in the bundle either way.
 */
async function warnPersistedCredentials(root: string, logger: Logger): Promise<void> {
  const headers = await git(
    ["config", "--local", "--name-only", "--get-regexp", "^http\\..*\\.extraheader$"],
    {
      cwd: root,
    },
  ).then(
    (s) => s.trim(),
    () => "",
  );
  if (!headers) return;
  logger.warn(
    "the checkout keeps a token in .git/config (actions/checkout's persist-credentials), where an agent " +
      "outside sandbox: bwrap, a setup or a scorer command can read it. evalgate does not need it: set " +
      "`with: { persist-credentials: false }` on the actions/checkout step.",
  );
}

/** The baseline whose durations balance the shards, or nothing (then they are balanced by count). */
async function shardTimes(
  inputs: ActionInputs,
  ctx: EventContext,
  deps: ProduceDeps,
): Promise<Bundle | undefined> {
  try {
    const b = await resolveBaseline(inputs, ctx, deps);
    if (!b.bundle) deps.logger.info("shards balanced by count: no baseline durations");
    return b.bundle;
  } catch (error) {
    deps.logger.warn(`shards balanced by count: ${(error as Error).message}`);
    return undefined;
  }
}

async function runMode(
  options: RunOptions,
  inputs: ActionInputs,
  ctx: EventContext,
  deps: ProduceDeps,
): Promise<Produced> {
  await guardPullRequestTarget(inputs, ctx);
  const projectRoot = await repositoryRoot(options.cwd);
  await warnPersistedCredentials(projectRoot, deps.logger);
  // The eval files are checked before anything is downloaded: a wrong path fails at once.
  const plan = await planRun({ ...options, projectRoot });
  // A shard's comparison is redone when the shards are merged: only the merge step fetches a baseline.
  const base = options.shard
    ? { note: "shards are compared when merged" }
    : await resolveBaseline(inputs, ctx, deps);
  // A shard compares nothing, but the baseline's durations balance the shards (run/shard.ts).
  const times = options.shard ? await shardTimes(inputs, ctx, deps) : undefined;
  // One collapsible group in the job log for the attempts; the verdict is printed after it.
  deps.logger.group?.(
    `evalgate: running ${options.paths.join(", ")}${options.shard ? ` (shard ${options.shard.index}/${options.shard.total})` : ""}`,
  );
  let result: Awaited<ReturnType<typeof runEvals>>;
  // A cancelled job (SIGINT, then SIGTERM 7.5 s later) still publishes what completed, as interrupted.
  const interrupt = new SignalInterrupt(killLiveGroups).install();
  try {
    result = await runEvals(
      {
        ...options,
        projectRoot,
        // The token is never given to a process, but one may find it (README: The agent's environment).
        ...(inputs.token ? { redact: [inputs.token] } : {}),
        // Under pull_request_target the checkout, not the event, says what is evaluated.
        ...(ctx.sha && ctx.eventName !== "pull_request_target" ? { gitSha: ctx.sha } : {}),
        ...(base.bundle ? { baseline: base.bundle } : {}),
        ...(times ? { shardTimes: times } : {}),
      },
      {
        runner: new ChildProcessRunner(),
        progress: new LineProgress(process.stdout),
        logger: deps.logger,
        interruption: interrupt,
      },
      plan,
    );
  } finally {
    interrupt.dispose();
    deps.logger.groupEnd?.();
  }
  if (result.interrupted)
    deps.logger.warn(`evalgate: interrupted by ${result.interrupted}: publishing the partial bundle`);
  return madeHere(result.bundleDir, result, base);
}

/** A bundle this step made (run, merge), with the baseline it was compared with or why there was none. */
function madeHere(dir: string, made: { summary: WireSummary; view: ReportView }, base: Baseline): Produced {
  return {
    dir,
    summary: made.summary,
    view: made.view,
    ...(base.bundle ? { baseline: base.bundle } : {}),
    ...(base.note ? { baselineNote: base.note } : {}),
    made: true,
  };
}

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
async function downloadShards(inputs: ActionInputs, ctx: EventContext, deps: ProduceDeps): Promise<string[]> {
  const client = deps.client;
  const runId = ctx.runId;
  if (!client) throw new UsageError("input merge: artifacts needs the github-token input");
  if (!runId) throw new UsageError("input merge: artifacts needs GITHUB_RUN_ID (run it inside a workflow)");
  const root = await scratch(deps.env, "evalgate-shards-");
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

async function mergeMode(
  mode: { from: "artifacts" | string[]; out?: string },
  inputs: ActionInputs,
  ctx: EventContext,
  deps: ProduceDeps,
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
      ...(base.bundle ? { baseline: base.bundle } : {}),
    }),
    (reason) => `input merge: ${reason}`,
  );
  return madeHere(out, merged, base);
}

async function readRecord(dir: string): Promise<Partial<GitHubRecord>> {
  try {
    // Through the confined reader: the bundle may be a fork's artifact (a link, a FIFO, a huge file).
    return JSON.parse(
      (await readConfined(dir, GITHUB_RECORD, 1024 * 1024)).toString("utf8"),
    ) as Partial<GitHubRecord>;
  } catch {
    return {};
  }
}

async function reportMode(
  from: string,
  inputs: ActionInputs,
  ctx: EventContext,
  deps: ProduceDeps,
): Promise<Produced> {
  if (from !== "workflow-run") {
    // Only rendered (its fields are checked one by one for the view): read leniently, seal checked.
    const bundle = await readBundleAs(path.resolve(inputs.cwd, from), "input bundle", { check: "lenient" });
    return publishedFrom(bundle, await readRecord(bundle.dir));
  }
  const wr = ctx.workflowRun;
  if (!wr)
    throw new UsageError("input bundle: workflow-run works only in a workflow triggered by workflow_run");
  const client = deps.client;
  if (!client) throw new UsageError("input bundle: workflow-run needs the github-token input");
  const artifact = await actionsApi(`listing the artifacts of run ${wr.id}`, async () =>
    (await listRunArtifacts(client, ctx, wr.id, inputs.artifactName)).find((a) => !a.expired),
  );
  if (!artifact) {
    throw new UsageError(
      `input bundle: run ${wr.id} has no artifact named ${inputs.artifactName} (did its evalgate step run, with the same artifact-name?)`,
    );
  }
  const dest = await scratch(deps.env, "evalgate-bundle-");
  await actionsApi(`downloading artifact ${artifact.name} of run ${wr.id}`, () =>
    downloadArtifact(client, ctx, artifact, dest, tempRoot(deps.env)),
  );
  const bundle = await readBundleAs(dest, `artifact ${artifact.name} of run ${wr.id}`, { check: "lenient" });
  // The artifact was written by the triggering run, which may be a fork's code: its record is a
  // claim, checked against GitHub before anything is posted (see main.ts).
  const record = await readRecord(dest);
  const pr = wr.pullRequests[0] ?? (typeof record.pull_request === "number" ? record.pull_request : null);
  return { ...publishedFrom(bundle, record), from: { pr, sha: wr.headSha } };
}

/** A bundle made elsewhere, to be reported: with the baseline note its run recorded. */
function publishedFrom(bundle: Bundle, record: Partial<GitHubRecord>): Produced {
  return {
    dir: bundle.dir,
    summary: bundle.summary,
    ...(typeof record.baseline_note === "string" ? { baselineNote: record.baseline_note } : {}),
    made: false,
  };
}

/** Every path input is relative to working-directory: a wrong one would otherwise surface as "no eval files". */
export async function checkWorkingDirectory(cwd: string): Promise<void> {
  const s = await stat(cwd).catch(() => undefined);
  if (!s)
    throw new UsageError(`input working-directory: ${cwd} does not exist (it is relative to the workspace)`);
  if (!s.isDirectory()) throw new UsageError(`input working-directory: ${cwd} is a file, not a folder`);
}

export async function produceBundle(
  inputs: ActionInputs,
  ctx: EventContext,
  deps: ProduceDeps,
  /** What the bot adds to a run (github/bot.ts): filters of a command, the base's gate, quarantine, skips. */
  extra: Partial<RunOptions> = {},
): Promise<Produced> {
  await checkWorkingDirectory(inputs.cwd);
  const mode = inputs.mode;
  if (mode.kind === "run") return runMode({ ...mode.options, ...extra }, inputs, ctx, deps);
  if (mode.kind === "merge") return mergeMode(mode, inputs, ctx, deps);
  return reportMode(mode.from, inputs, ctx, deps);
}
