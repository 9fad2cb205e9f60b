/**
 * A step that ends in an error (a mistake in the inputs or eval files, exit 2; a bug, exit 3) still
 * concludes honestly: every output is set (`ran`, `verdict: error`, …), the sticky comment is
 * replaced by the error so that no earlier "gate passed" stays beside the red check, the check run
 * (check-name) concludes `failure`, and the job summary says it. All best effort: the step's exit
 * status is the error's whatever GitHub answers.
 */
import { errorComment } from "../report/bot.js";
import { commentMarker } from "../report/comment.js";
import { CHECK_SUMMARY_LIMIT, completeCheckRun } from "./check.js";
import { bestEffort, type GitHubClient } from "./client.js";
import { findStickyComment, upsertStickyComment } from "./comment.js";
import { type EventContext, runUrl } from "./context.js";
import type { ActionInputs } from "./inputs.js";
import { type ActionsLogger, emptyOutputs, setOutputs, writeJobSummary } from "./io.js";

/** What the step knew when it failed: each part is set as soon as it is known. */
export interface StepState {
  inputs?: ActionInputs;
  ctx?: EventContext;
  client?: GitHubClient;
  /** Evals ran before the error (it came while publishing). */
  ran?: boolean;
  /** The in-progress check run of a command, to complete. */
  pendingCheck?: number;
  /** The bot's after-run work (a command's reaction and commit status). */
  finish?: (outcome: "pass" | "fail" | "error", url?: string) => Promise<void>;
}

export async function endWithError(
  step: StepState,
  failure: { status: number; message: string },
  deps: { env: NodeJS.ProcessEnv; logger: ActionsLogger },
): Promise<void> {
  const { logger } = deps;
  const first = failure.message.replace(/^evalgate: /, "").split("\n")[0]!;
  const outputs = emptyOutputs();
  outputs.verdict = "error";
  outputs.ran = step.ran ? "true" : "false";
  if (!step.ran) outputs["skipped-reason"] = `error: ${first}`;
  const { inputs, ctx, client } = step;
  const kind = failure.status === 2 ? "configuration error" : "internal error";
  if (inputs && ctx) {
    const url = runUrl(ctx);
    const marker = commentMarker(inputs.commentKey);
    const body = errorComment(marker, kind, failure.message.replace(/^evalgate: /, ""), {
      sha: ctx.sha,
      ...(url ? { runUrl: url, runLabel: `run #${ctx.runId}` } : {}),
    });
    const pr = ctx.pullRequest;
    // A fork's pull_request token cannot write; the error is in the job summary and the log.
    const writable = !(pr?.fork && ctx.eventName === "pull_request");
    if (client && pr && writable && inputs.comment !== "off") {
      const ref = { owner: ctx.owner, repo: ctx.repo, number: pr.number };
      const posted = await bestEffort(
        logger,
        `posting the error on PR #${pr.number}`,
        "pull-requests: write",
        async () =>
          upsertStickyComment(client, ref, marker, body, await findStickyComment(client, ref, marker)),
      );
      if (posted) {
        outputs["comment-id"] = String(posted.comment.id);
        outputs["comment-url"] = posted.comment.url;
      }
    }
    if (client && writable && ctx.sha && (inputs.checkName || step.pendingCheck)) {
      const check = await bestEffort(logger, "concluding the check run", "checks: write", () =>
        completeCheckRun(client, {
          owner: ctx.owner,
          repo: ctx.repo,
          name: inputs.checkName ?? "evalgate",
          headSha: ctx.sha,
          conclusion: "failure",
          title: `${kind}: ${first}`.slice(0, 250),
          body: body.slice(0, CHECK_SUMMARY_LIMIT),
          ...(url ? { detailsUrl: url } : {}),
          ...(step.pendingCheck ? { existing: step.pendingCheck } : {}),
        }),
      );
      if (check) outputs["check-run-id"] = String(check.id);
    }
    await writeJobSummary(body, deps.env).catch(() => false);
  }
  setOutputs(outputs);
  if (step.finish) await step.finish("error", ctx ? runUrl(ctx) : undefined).catch(() => undefined);
}
