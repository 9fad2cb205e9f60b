/**
 * The action edge: inputs → the same core the CLI runs → artifact, sticky comment, check run, job
 * summary and outputs. Publishing is best effort (a warning each); the exit status is the gate's:
 * 0 passed, 1 failed, 2 a mistake in the inputs or eval files, 3 a bug.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { readBundleAs } from "../bundle/read.js";
import { sealBundle } from "../bundle/seal.js";
import { writeJson } from "../bundle/write.js";
import { ConfigError, EXIT, UsageError } from "../errors.js";
import { REPORT_FILES } from "../pipeline/outputs.js";
import { loadReportView } from "../pipeline/report-view.js";
import {
  COMMENT_MAX_CHARS,
  type CommentOptions,
  commentMarker,
  JOB_SUMMARY_MAX,
  renderComment,
} from "../report/comment.js";
import { shardFinished } from "../report/format.js";
import {
  ActionsArtifactStore,
  type ArtifactStore,
  artifactUrl,
  shardArtifactName,
  uploadProblem,
} from "./artifact.js";
import { prepareBot } from "./bot.js";
import { CHECK_SUMMARY_LIMIT, publishCheckRun } from "./check.js";
import { createClient, explainApiError, type GitHubClient, isForbidden } from "./client.js";
import { changedFromBaseline, commentWanted, findStickyComment, upsertStickyComment } from "./comment.js";
import { type EventContext, readEventContext, readEventPayload, runUrl } from "./context.js";
import { type ActionInputs, envInputReader, parseInputs } from "./inputs.js";
import {
  type ActionOutputs,
  ActionsLogger,
  emptyOutputs,
  maskSecret,
  setOutputs,
  writeJobSummary,
} from "./io.js";
import { GITHUB_RECORD, type GitHubRecord, type Produced, produceBundle } from "./produce.js";
import { skipStep } from "./skip.js";

export const FORK_RECIPE = "docs/fork-pull-requests.md";

export interface RunDeps {
  env: NodeJS.ProcessEnv;
  artifacts: ArtifactStore;
  logger: ActionsLogger;
}

/** Where this step's comment and check run go, or why they do not. */
interface Destination {
  pr: number | null;
  sha: string;
  /** Set when the token cannot write to the PR (a fork's pull_request run). */
  readOnly?: string;
}

async function destination(
  produced: Produced,
  ctx: EventContext,
  client: GitHubClient | undefined,
  logger: ActionsLogger,
): Promise<Destination> {
  if (produced.from) {
    // workflow_run: the triggering run's own record names the PR. Trust it only when GitHub agrees
    // that this PR's head is the commit that run evaluated.
    const { pr, sha } = produced.from;
    if (pr === null || !client) return { pr: null, sha };
    try {
      const { data } = await client.rest.pulls.get({ owner: ctx.owner, repo: ctx.repo, pull_number: pr });
      if (data.head.sha === sha) return { pr, sha };
      logger.warn(
        `not commenting on PR #${pr}: its head is ${data.head.sha.slice(0, 7)}, but the bundle is of ${sha.slice(0, 7)} (a newer push, or a record that does not belong to this PR)`,
      );
    } catch (error) {
      logger.warn(explainApiError(error, `looking up PR #${pr}`, "pull-requests: read"));
    }
    return { pr: null, sha };
  }
  const pr = ctx.pullRequest;
  if (pr && ctx.eventName === "pull_request" && pr.fork) {
    return {
      pr: pr.number,
      sha: ctx.sha,
      readOnly: `this pull request comes from a fork (${pr.headRepo ?? "a deleted repository"}), whose workflow token is read-only`,
    };
  }
  return { pr: pr?.number ?? null, sha: ctx.sha };
}

function forkNotice(why: string): string {
  return `${why}: evalgate wrote the job summary and the step outputs, but no PR comment or check run. To comment on pull requests from forks, use the two-workflow recipe in ${FORK_RECIPE} (a workflow_run workflow posts the comment).`;
}

async function upload(
  produced: Produced,
  inputs: ActionInputs,
  ctx: EventContext,
  deps: RunDeps,
): Promise<{ id: number; url?: string; name: string } | undefined> {
  const shard = produced.summary.run.shard;
  const name = shard ? shardArtifactName(inputs.artifactName, shard) : inputs.artifactName;
  const problem = uploadProblem(deps.env);
  if (problem) {
    deps.logger.warn(`the bundle was not uploaded: ${problem}. It stays at ${produced.dir}`);
    return undefined;
  }
  deps.logger.group(`evalgate: uploading the bundle as artifact ${name}`);
  try {
    const a = await deps.artifacts.upload(name, produced.dir, inputs.retentionDays);
    deps.logger.groupEnd();
    deps.logger.info(`bundle uploaded as artifact ${name} (id ${a.id}, ${a.size} bytes)`);
    const url = artifactUrl(ctx, a.id);
    return { id: a.id, name, ...(url ? { url } : {}) };
  } catch (error) {
    deps.logger.groupEnd();
    deps.logger.warn(
      `the bundle could not be uploaded as artifact ${name}: ${(error as Error).message.split("\n")[0]}. It stays at ${produced.dir}; the verdict is unchanged`,
    );
    return undefined;
  }
}

async function postComment(
  client: GitHubClient | undefined,
  inputs: ActionInputs,
  ctx: EventContext,
  dest: Destination,
  produced: Produced,
  body: string,
  gateFailed: boolean,
  outputs: ActionOutputs,
  logger: ActionsLogger,
): Promise<boolean> {
  if (inputs.comment === "off" || dest.pr === null) {
    if (dest.pr === null && inputs.comment !== "off") logger.info("no pull request to comment on");
    return false;
  }
  if (!client) {
    logger.warn("no PR comment: the github-token input is empty");
    return false;
  }
  const ref = { owner: ctx.owner, repo: ctx.repo, number: dest.pr };
  const marker = commentMarker(inputs.commentKey);
  try {
    const existing = inputs.comment === "always" ? undefined : await findStickyComment(client, ref, marker);
    const wanted = commentWanted(
      inputs.comment,
      {
        gateFailed,
        hasBaseline: produced.summary.comparison !== null,
        changed: changedFromBaseline(produced.summary, produced.baseline?.summary),
      },
      existing !== undefined,
    );
    if (!wanted.post) {
      logger.info(`no PR comment: ${wanted.why}`);
      return false;
    }
    const { comment, created } = await upsertStickyComment(client, ref, marker, body, existing);
    outputs["comment-id"] = String(comment.id);
    outputs["comment-url"] = comment.url;
    logger.info(`${created ? "posted" : "updated"} the PR comment: ${comment.url}`);
    return true;
  } catch (error) {
    const text = explainApiError(error, `posting the comment on PR #${dest.pr}`, "pull-requests: write");
    if (isForbidden(error)) logger.notice(forkNotice(text));
    else logger.warn(text);
    return false;
  }
}

async function publish(
  produced: Produced,
  inputs: ActionInputs,
  ctx: EventContext,
  client: GitHubClient | undefined,
  deps: RunDeps,
  sections: string[] = [],
): Promise<{ outputs: ActionOutputs; reasons: string[] }> {
  const { logger } = deps;
  const outputs = emptyOutputs();
  const run = runUrl(ctx);
  const base: CommentOptions = {
    key: inputs.commentKey,
    maxChars: COMMENT_MAX_CHARS,
    sections,
    ...(produced.baselineNote ? { baselineNote: produced.baselineNote } : {}),
    links: run ? { run, runLabel: `run #${ctx.runId}` } : {},
    updatedAt: new Date(),
  };

  const view = produced.view ?? (await loadReportView(produced.dir));
  if (produced.made) {
    const record: GitHubRecord = {
      schema: "evalgate.github/v1",
      repository: `${ctx.owner}/${ctx.repo}`,
      event: ctx.eventName,
      sha: ctx.sha,
      pull_request: ctx.pullRequest?.number ?? null,
      fork: ctx.pullRequest?.fork ?? false,
      base_branch: ctx.baseBranch,
      run_id: ctx.runId,
      run_attempt: ctx.runAttempt,
      baseline_note: produced.baselineNote ?? null,
    };
    await writeJson(path.join(produced.dir, GITHUB_RECORD), record);
    // comment.md again, now with the run link and the baseline note (before the upload); report.html
    // and junit.xml do not change.
    await writeFile(path.join(produced.dir, REPORT_FILES.comment), renderComment(view, base));
    // Sealed again with the record and the comment, before the upload.
    await sealBundle(produced.dir);
  }
  const shard = view.run.shard;
  const artifact = produced.made ? await upload(produced, inputs, ctx, deps) : undefined;
  if (artifact) {
    outputs["artifact-id"] = String(artifact.id);
    outputs["artifact-url"] = artifact.url ?? "";
  }
  const links = {
    ...base.links,
    ...(artifact?.url ? { artifact: artifact.url, artifactName: artifact.name } : {}),
  };

  if (shard) {
    logger.info(
      `shard ${shard.index}/${shard.total}: no comment or check run; the merge step (merge: artifacts) decides the gate and reports`,
    );
  } else {
    const dest = await destination(produced, ctx, client, logger);
    if (dest.readOnly) {
      if (inputs.comment !== "off" || inputs.checkName) logger.notice(forkNotice(dest.readOnly));
    } else {
      const body = renderComment(view, { ...base, links });
      const gateFailed = view.gate.verdict === "fail";
      if (await postComment(client, inputs, ctx, dest, produced, body, gateFailed, outputs, logger)) {
        await writeFile(path.join(produced.dir, REPORT_FILES.comment), body);
        if (produced.made) await sealBundle(produced.dir);
      }
      if (inputs.checkName && client && dest.sha) {
        try {
          const check = await publishCheckRun(client, {
            owner: ctx.owner,
            repo: ctx.repo,
            name: inputs.checkName,
            headSha: dest.sha,
            summary: view,
            body: renderComment(view, { ...base, links, maxChars: CHECK_SUMMARY_LIMIT }),
            ...(run ? { detailsUrl: run } : {}),
          });
          outputs["check-run-id"] = String(check.id);
          logger.info(`check run "${inputs.checkName}" created on ${dest.sha.slice(0, 7)}`);
        } catch (error) {
          logger.warn(
            explainApiError(error, `creating the check run "${inputs.checkName}"`, "checks: write"),
          );
        }
      }
    }
  }

  // A shard's verdict covers its slice only: say so above the report.
  const shardNote = shard
    ? `> [!NOTE]\n> Shard ${shard.index} of ${shard.total}: this job does not gate. The merge step (\`merge: artifacts\`) decides over all shards.\n\n`
    : "";
  const jobSummary = renderComment(view, {
    ...base,
    links,
    maxChars: JOB_SUMMARY_MAX - shardNote.length,
    maxBytes: JOB_SUMMARY_MAX - Buffer.byteLength(shardNote),
  });
  try {
    if (!(await writeJobSummary(shardNote + jobSummary, deps.env)))
      logger.info("GITHUB_STEP_SUMMARY is not set: no job summary");
  } catch (error) {
    logger.warn(`the job summary could not be written: ${(error as Error).message}`);
  }

  // From the view, whose fields are checked: a published bundle may come from a fork's run.
  const c = view.counts;
  Object.assign(outputs, {
    verdict: shard ? "pending" : view.gate.verdict,
    "run-id": view.run.id,
    "bundle-path": produced.dir,
    cases: String(c.cases),
    passed: String(c.passed),
    failed: String(c.failed),
    errored: String(c.errored),
    flaky: String(c.flaky),
    regressions: String(view.comparison?.regressed ?? 0),
    inconclusive: String(view.cases.filter((x) => x.evidence === "inconclusive").length),
  });
  return { outputs, reasons: view.gate.reasons };
}

export async function run(
  deps: RunDeps = { env: process.env, artifacts: new ActionsArtifactStore(), logger: new ActionsLogger() },
): Promise<number> {
  const { env, logger } = deps;
  try {
    const inputs = parseInputs(envInputReader(env), { workspace: env.GITHUB_WORKSPACE || process.cwd() });
    maskSecret(inputs.token);
    // Agents get an allow-listed environment anyway; the token need not stay in this process's either.
    delete env["INPUT_GITHUB-TOKEN"];
    const first = readEventContext(env);
    const client = inputs.token
      ? createClient({ token: inputs.token, baseUrl: first.apiUrl, logger })
      : undefined;
    const bot = await prepareBot(inputs, first, {
      client,
      logger,
      payload: readEventPayload(env),
      today: new Date(),
    });
    const ctx = bot.ctx;
    if (bot.skipped) return await skipStep(bot, inputs, ctx, client, deps);
    let produced: Produced;
    try {
      produced = await produceBundle(inputs, ctx, { client, logger, env }, bot.run);
    } catch (error) {
      await bot.finish("error", runUrl(ctx));
      throw error;
    }
    const rows = produced.made ? (await readBundleAs(produced.dir)).rows : [];
    const { outputs, reasons } = await publish(
      produced,
      inputs,
      ctx,
      client,
      deps,
      bot.sections(rows, produced.baseline),
    );
    if (inputs.mode.kind === "run") outputs.ran = "true";
    setOutputs(outputs);
    await bot.finish(outputs.verdict === "fail" ? "fail" : "pass", runUrl(ctx));
    if (outputs.verdict === "fail") {
      logger.fail(`evalgate: gate failed${reasons.length ? `: ${reasons.join("; ")}` : ""}`);
      return EXIT.fail;
    }
    const shard = produced.summary.run.shard;
    logger.info(
      shard ? `evalgate: ${shardFinished(shard, produced.summary.counts)}` : "evalgate: gate passed",
    );
    return EXIT.pass;
  } catch (error) {
    if (error instanceof ConfigError) {
      const n = error.problems.length;
      logger.fail(`evalgate: ${n} problem${n === 1 ? "" : "s"} in the eval files:\n${error.message}`);
      return EXIT.usage;
    }
    if (error instanceof UsageError) {
      logger.fail(`evalgate: ${error.message}`);
      return EXIT.usage;
    }
    const e = error as Error;
    logger.fail(
      `evalgate: internal error: ${e.message}\nThis is a bug in evalgate; the bundle written so far was kept.${env.RUNNER_DEBUG === "1" || env.EVALGATE_DEBUG ? `\n${e.stack}` : " Re-run with debug logging for details."}`,
    );
    return EXIT.internal;
  }
}
