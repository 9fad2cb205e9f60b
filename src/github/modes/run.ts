/**
 * The run mode: the step runs the eval files (maybe one shard) with the core the CLI runs, after
 * the checks only an action needs (pull_request_target, a persisted token), and compares with the
 * baseline.
 */
import type { Bundle } from "../../bundle/read.js";
import { UsageError } from "../../errors.js";
import type { Logger } from "../../log.js";
import { planRun, type RunOptions, runEvals } from "../../pipeline/run.js";
import { SignalInterrupt } from "../../run/interrupt.js";
import { killLiveGroups } from "../../sandbox/process.js";
import { git, repositoryRoot } from "../../workspace/git.js";
import { type BaselineDeps, resolveBaseline } from "../baseline.js";
import type { EventContext } from "../context.js";
import type { ActionInputs } from "../inputs.js";
import { madeHere, type Produced, type RunModeDeps } from "./produced.js";

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
  deps: BaselineDeps,
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

export async function runMode(
  options: RunOptions,
  inputs: ActionInputs,
  ctx: EventContext,
  deps: RunModeDeps,
): Promise<Produced> {
  await guardPullRequestTarget(inputs, ctx);
  const projectRoot = await repositoryRoot(options.cwd);
  await warnPersistedCredentials(projectRoot, deps.logger);
  // The eval files are checked before anything is downloaded: a wrong path fails at once.
  const plan = await planRun({ ...options, projectRoot });
  // A shard's comparison is redone when the shards are merged: only the merge step fetches a baseline.
  const suites = plan.roots.map((r) => r.evalPath);
  const base = options.shard
    ? { note: "shards are compared when merged" }
    : await resolveBaseline(inputs, ctx, deps, suites);
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
        // The token is never given to a process, but one may find it (docs/isolation.md, "The agent's environment").
        ...(inputs.token ? { redact: [inputs.token] } : {}),
        // Under pull_request_target the checkout, not the event, says what is evaluated.
        ...(ctx.sha && ctx.eventName !== "pull_request_target" ? { gitSha: ctx.sha } : {}),
        ...(base.bundle ? { baselines: base.bundles ?? [base.bundle] } : {}),
        ...(times ? { shardTimes: times } : {}),
      },
      { runner: deps.runner, progress: deps.progress, logger: deps.logger, interruption: interrupt },
      plan,
    );
  } finally {
    interrupt.dispose();
    deps.logger.groupEnd?.();
  }
  if (result.interrupted)
    deps.logger.warn(`evalgate: interrupted by ${result.interrupted}: publishing the partial bundle`);
  return madeHere(result.bundleDir, result, base, suites);
}
