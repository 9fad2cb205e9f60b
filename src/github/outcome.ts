/**
 * What every step does with its bundle, whatever the mode made or fetched: the record and the
 * comment written into a bundle it made, the upload, the sticky comment and the check run (except
 * for a shard, which does not gate), the job summary, and the step's outputs. All best effort: a
 * warning each; the verdict is the bundle's.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { sealBundle } from "../bundle/seal.js";
import { writeJson } from "../bundle/write.js";
import { REPORT_FILES } from "../pipeline/outputs.js";
import { loadReportView } from "../pipeline/report-view.js";
import {
  COMMENT_MAX_CHARS,
  type CommentOptions,
  commentMarker,
  JOB_SUMMARY_MAX,
  renderComment,
} from "../report/comment.js";
import type { ReportView } from "../report/view.js";
import {
  type ArtifactStore,
  artifactUrl,
  attemptArtifactName,
  shardArtifactName,
  uploadProblem,
} from "./artifact.js";
import { CHECK_SUMMARY_LIMIT, publishCheckRun } from "./check.js";
import { explainApiError, type GitHubClient } from "./client.js";
import { changedFromBaseline, postComment } from "./comment.js";
import { type EventContext, runUrl } from "./context.js";
import { type Destination, destination, forkNotice } from "./destination.js";
import type { ActionInputs } from "./inputs.js";
import { type ActionOutputs, type ActionsLogger, emptyOutputs, writeJobSummary } from "./io.js";
import type { Produced } from "./modes/produced.js";
import { GITHUB_RECORD, recordOf } from "./record.js";

export interface OutcomeDeps {
  env: NodeJS.ProcessEnv;
  artifacts: ArtifactStore;
  logger: ActionsLogger;
}

async function upload(
  produced: Produced,
  inputs: ActionInputs,
  ctx: EventContext,
  deps: OutcomeDeps,
): Promise<{ id: number; url?: string; name: string } | undefined> {
  const shard = produced.summary.run.shard;
  const name = attemptArtifactName(
    shard ? shardArtifactName(inputs.artifactName, shard) : inputs.artifactName,
    ctx.runAttempt,
  );
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

/** What one publication shares: the step's bundle, where it runs, and the comment's options. */
interface Publication {
  produced: Produced;
  inputs: ActionInputs;
  ctx: EventContext;
  view: ReportView;
  /** The comment's options; its links without the artifact's. */
  base: CommentOptions;
  links: NonNullable<CommentOptions["links"]>;
  outputs: ActionOutputs;
  logger: ActionsLogger;
}

/** A bundle this step made: its GitHub record and comment.md written into it, sealed again. */
async function completeBundle(p: Omit<Publication, "links" | "outputs" | "logger">): Promise<void> {
  const { produced, ctx, view, base } = p;
  await writeJson(path.join(produced.dir, GITHUB_RECORD), recordOf(ctx, produced.baselineNote));
  // comment.md again, now with the run link and the baseline note (before the upload); report.html
  // and junit.xml do not change.
  await writeFile(path.join(produced.dir, REPORT_FILES.comment), renderComment(view, base));
  // Sealed again with the record and the comment, before the upload.
  await sealBundle(produced.dir);
}

/** The sticky comment on the pull request; comment.md becomes what was posted. */
async function publishComment(
  p: Publication,
  client: GitHubClient | undefined,
  dest: Destination,
): Promise<void> {
  const { produced, inputs, ctx, view, outputs } = p;
  const body = renderComment(view, { ...p.base, links: p.links });
  const comment = await postComment({
    client,
    mode: inputs.comment,
    marker: commentMarker(inputs.commentKey),
    ref: dest.pr === null ? null : { owner: ctx.owner, repo: ctx.repo, number: dest.pr },
    body,
    facts: {
      gateFailed: view.gate.verdict === "fail",
      hasBaseline: produced.summary.comparison !== null,
      changed: changedFromBaseline(produced.summary, produced.baseline?.summary),
    },
    logger: p.logger,
  });
  if (comment) {
    outputs["comment-id"] = String(comment.id);
    outputs["comment-url"] = comment.url;
    await writeFile(path.join(produced.dir, REPORT_FILES.comment), body);
    if (produced.made) await sealBundle(produced.dir);
  }
}

/** The check run (check-name) on the destination's commit: a new one, or the command's pending one. */
async function publishCheck(
  p: Publication,
  client: GitHubClient,
  check: { name: string; sha: string; pending: number | undefined },
): Promise<void> {
  const { ctx, view, logger } = p;
  const { name, sha, pending } = check;
  const run = runUrl(ctx);
  try {
    const published = await publishCheckRun(client, {
      owner: ctx.owner,
      repo: ctx.repo,
      name,
      headSha: sha,
      summary: view,
      body: renderComment(view, { ...p.base, links: p.links, maxChars: CHECK_SUMMARY_LIMIT }),
      ...(run ? { detailsUrl: run } : {}),
      ...(pending ? { existing: pending } : {}),
    });
    p.outputs["check-run-id"] = String(published.id);
    logger.info(`check run "${name}" created on ${sha.slice(0, 7)}`);
  } catch (error) {
    logger.warn(explainApiError(error, `creating the check run "${name}"`, "checks: write"));
  }
}

/** The comment and the check run where the bundle's pull request and commit are, when they may be. */
async function publishToPullRequest(
  p: Publication,
  client: GitHubClient | undefined,
  pendingCheck: number | undefined,
): Promise<void> {
  const { inputs, logger } = p;
  const dest = await destination(p.produced, p.ctx, client, logger);
  if (dest.stale) {
    // A newer push made this bundle's commit old news: no check run lands on it, no comment.
    logger.notice(`${dest.stale}: no comment or check run was posted`);
  } else if (dest.readOnly) {
    if (inputs.comment !== "off" || inputs.checkName) logger.notice(forkNotice(dest.readOnly));
  } else {
    await publishComment(p, client, dest);
    if (inputs.checkName && client && dest.sha)
      await publishCheck(p, client, { name: inputs.checkName, sha: dest.sha, pending: pendingCheck });
  }
}

/** The job summary: the comment at the summary's size; a shard says it does not gate. */
async function publishJobSummary(p: Publication, env: NodeJS.ProcessEnv): Promise<void> {
  const { view, logger } = p;
  const shard = view.run.shard;
  // A shard's verdict covers its slice only: say so above the report.
  const shardNote = shard
    ? `> [!NOTE]\n> Shard ${shard.index} of ${shard.total}: this job does not gate. The merge step (\`merge: artifacts\`) decides over all shards.\n\n`
    : "";
  const jobSummary = renderComment(view, {
    ...p.base,
    links: p.links,
    maxChars: JOB_SUMMARY_MAX - shardNote.length,
    maxBytes: JOB_SUMMARY_MAX - Buffer.byteLength(shardNote),
  });
  try {
    if (!(await writeJobSummary(shardNote + jobSummary, env)))
      logger.info("GITHUB_STEP_SUMMARY is not set: no job summary");
  } catch (error) {
    logger.warn(`the job summary could not be written: ${(error as Error).message}`);
  }
}

/** The step's outputs from the view, whose fields are checked: a published bundle may come from a fork's run. */
function viewOutputs(view: ReportView, dir: string): Partial<ActionOutputs> {
  const c = view.counts;
  return {
    verdict: view.run.interrupted ? "cancelled" : view.run.shard ? "pending" : view.gate.verdict,
    "run-id": view.run.id,
    "bundle-path": dir,
    cases: String(c.cases),
    passed: String(c.passed),
    failed: String(c.failed),
    errored: String(c.errored),
    flaky: String(c.flaky),
    regressions: String(view.comparison?.regressed ?? 0),
    inconclusive: String(view.cases.filter((x) => x.evidence === "inconclusive").length),
  };
}

export async function publishOutcome(
  produced: Produced,
  inputs: ActionInputs,
  ctx: EventContext,
  client: GitHubClient | undefined,
  deps: OutcomeDeps,
  /** The bot's blocks of the comment (github/bot.ts). */
  sections: string[] = [],
  /** A check run a command opened in progress: concluded instead of a new one. */
  pendingCheck?: number,
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
  if (produced.made) await completeBundle({ produced, inputs, ctx, view, base });
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
  const p: Publication = { produced, inputs, ctx, view, base, links, outputs, logger };

  if (shard) {
    logger.info(
      `shard ${shard.index}/${shard.total}: no comment or check run; the merge step (merge: artifacts) decides the gate and reports`,
    );
  } else await publishToPullRequest(p, client, pendingCheck);
  await publishJobSummary(p, deps.env);
  Object.assign(outputs, viewOutputs(view, produced.dir));
  return { outputs, reasons: view.gate.reasons };
}
