/**
 * A step that runs no evals concludes anyway: outputs ran=false and skipped-reason, exit 0. When
 * the pull request touched none of the suites' paths, it also says so where a reviewer looks (the
 * sticky comment, with the baseline's verdicts carried over, a passing check run, the job summary),
 * so a required check never stays pending.
 */
import { EXIT } from "../errors.js";
import { skippedComment } from "../report/bot.js";
import { COMMENT_MAX_CHARS, commentMarker } from "../report/comment.js";
import { resolveBaseline } from "./baseline.js";
import type { BotPlan } from "./bot.js";
import { CHECK_SUMMARY_LIMIT } from "./check.js";
import { explainApiError, type GitHubClient } from "./client.js";
import { upsertStickyComment } from "./comment.js";
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
  outputs["skipped-reason"] = reason;
  if (bot.skippedByPaths) {
    const base = await resolveBaseline(inputs, ctx, { client, logger, env: deps.env }).catch(
      (error: unknown) => {
        logger.warn(`no baseline verdicts to carry over: ${(error as Error).message}`);
        return { bundle: undefined };
      },
    );
    const body = skippedComment(
      commentMarker(inputs.commentKey),
      `No evals ran: ${reason}.`,
      bot.sections([], base.bundle),
    );
    const pr = ctx.pullRequest;
    if (client && pr && !pr.fork && inputs.comment !== "off" && inputs.comment !== "failures") {
      try {
        const ref = { owner: ctx.owner, repo: ctx.repo, number: pr.number };
        const { comment } = await upsertStickyComment(
          client,
          ref,
          commentMarker(inputs.commentKey),
          body.slice(0, COMMENT_MAX_CHARS),
        );
        outputs["comment-id"] = String(comment.id);
        outputs["comment-url"] = comment.url;
      } catch (error) {
        logger.warn(
          explainApiError(error, `posting the comment on PR #${pr.number}`, "pull-requests: write"),
        );
      }
    }
    if (client && inputs.checkName && ctx.sha && !pr?.fork) {
      try {
        const url = runUrl(ctx);
        const { data } = await client.rest.checks.create({
          owner: ctx.owner,
          repo: ctx.repo,
          name: inputs.checkName,
          head_sha: ctx.sha,
          status: "completed",
          conclusion: "success",
          completed_at: new Date().toISOString(),
          ...(url ? { details_url: url } : {}),
          output: {
            title: "skipped: the pull request changes no suite's paths",
            summary: body.slice(0, CHECK_SUMMARY_LIMIT),
          },
        });
        outputs["check-run-id"] = String(data.id);
      } catch (error) {
        logger.warn(explainApiError(error, `creating the check run "${inputs.checkName}"`, "checks: write"));
      }
    }
    await writeJobSummary(body, deps.env).catch(() => false);
    outputs.verdict = "pass";
  }
  setOutputs(outputs);
  await bot.finish("pass", runUrl(ctx));
  return EXIT.pass;
}
