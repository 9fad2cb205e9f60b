/**
 * A step that runs no evals concludes anyway: outputs ran=false, verdict=skipped and
 * skipped-reason, exit 0. When the skip is about this pull request's evals (no run label on it, or
 * it touched none of the suites' paths), a reviewer sees it where they look: the sticky comment says
 * no evals ran on this commit and why (with the run link; for paths, the baseline's verdicts carried
 * over), the check run concludes `skipped` (never `success`: no evals passed), and the job summary
 * says it. A comment or check run that already reports this very commit is left alone (decision 0204).
 */
import { EXIT } from "../errors.js";
import { skippedComment } from "../report/bot.js";
import { COMMENT_MAX_CHARS, commentMarker } from "../report/comment.js";
import { resolveBaseline } from "./baseline.js";
import type { BotPlan } from "./bot.js";
import { CHECK_SUMMARY_LIMIT } from "./check.js";
import { bestEffort, explainApiError, type GitHubClient } from "./client.js";
import { findStickyComment, upsertStickyComment } from "./comment.js";
import { type EventContext, runUrl } from "./context.js";
import type { ActionInputs } from "./inputs.js";
import type { ActionsLogger } from "./io.js";
import { emptyOutputs, setOutputs, writeJobSummary } from "./io.js";

export async function skipStep(
  bot: BotPlan,
  inputs: ActionInputs,
  ctx: EventContext,
  client: GitHubClient | undefined,
  deps: { env: NodeJS.ProcessEnv; logger: ActionsLogger },
): Promise<number> {
  const { logger } = deps;
  const reason = bot.skipped ?? "nothing to run";
  logger.info(`evalgate: no evals run: ${reason}`);
  const outputs = emptyOutputs();
  outputs.ran = "false";
  outputs.verdict = "skipped";
  outputs["skipped-reason"] = reason;
  if (bot.skipReport) Object.assign(outputs, await publishSkip(bot, reason, inputs, ctx, client, deps));
  setOutputs(outputs);
  await bot.finish("pass", runUrl(ctx));
  return EXIT.pass;
}

/** The comment, check run and job summary of a skip; the outputs it set. */
async function publishSkip(
  bot: BotPlan,
  reason: string,
  inputs: ActionInputs,
  ctx: EventContext,
  client: GitHubClient | undefined,
  deps: { env: NodeJS.ProcessEnv; logger: ActionsLogger },
): Promise<Partial<Record<"comment-id" | "comment-url" | "check-run-id", string>>> {
  const { logger } = deps;
  const out: Partial<Record<"comment-id" | "comment-url" | "check-run-id", string>> = {};
  const report = bot.skipReport!;
  let sections: string[] = [];
  if (report.kind === "paths") {
    const base = await resolveBaseline(inputs, ctx, { client, logger, env: deps.env }).catch(
      (error: unknown) => {
        logger.warn(`no baseline verdicts to carry over: ${(error as Error).message}`);
        return { bundle: undefined };
      },
    );
    sections = bot.sections([], base.bundle);
  }
  const url = runUrl(ctx);
  const marker = commentMarker(inputs.commentKey);
  const body = skippedComment(
    marker,
    reason,
    { sha: ctx.sha, ...(url ? { runUrl: url, runLabel: `run #${ctx.runId}` } : {}) },
    sections,
    report.hint,
  );
  const pr = ctx.pullRequest;
  const sha7 = ctx.sha.slice(0, 7);
  if (client && pr && !pr.fork && inputs.comment !== "off") {
    try {
      const ref = { owner: ctx.owner, repo: ctx.repo, number: pr.number };
      const existing = await findStickyComment(client, ref, marker);
      if (existing?.body?.includes(`head \`${sha7}\``)) {
        logger.info(`the PR comment already reports ${sha7}: left as it is`);
      } else if (existing || inputs.comment === "always") {
        const { comment } = await upsertStickyComment(
          client,
          ref,
          marker,
          body.slice(0, COMMENT_MAX_CHARS),
          existing,
        );
        out["comment-id"] = String(comment.id);
        out["comment-url"] = comment.url;
      }
    } catch (error) {
      logger.warn(explainApiError(error, `posting the comment on PR #${pr.number}`, "pull-requests: write"));
    }
  }
  if (client && inputs.checkName && ctx.sha && !pr?.fork) {
    const name = inputs.checkName;
    // A result of this very commit (a run when the label was on, a re-run) is not overwritten by a skip.
    const earlier = await bestEffort(logger, `looking up the check runs of ${sha7}`, "checks: read", () =>
      client.rest.checks.listForRef({ owner: ctx.owner, repo: ctx.repo, ref: ctx.sha, check_name: name }),
    );
    const real = earlier?.data.check_runs.find((c) => c.status === "completed" && c.conclusion !== "skipped");
    if (real) logger.info(`the check run "${name}" of ${sha7} already has a result: left as it is`);
    else {
      const check = await bestEffort(logger, `creating the check run "${name}"`, "checks: write", () =>
        client.rest.checks.create({
          owner: ctx.owner,
          repo: ctx.repo,
          name,
          head_sha: ctx.sha,
          status: "completed",
          conclusion: "skipped",
          completed_at: new Date().toISOString(),
          ...(url ? { details_url: url } : {}),
          output: { title: `skipped: ${reason}`.slice(0, 250), summary: body.slice(0, CHECK_SUMMARY_LIMIT) },
        }),
      );
      if (check) out["check-run-id"] = String(check.data.id);
    }
  }
  await writeJobSummary(body, deps.env).catch(() => false);
  return out;
}
