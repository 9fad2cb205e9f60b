/**
 * Where a step's comment and check run go (a pull request and a commit), or why they do not: a
 * fork's pull_request run has a read-only token; a workflow_run's bundle names its PR only as a
 * claim, trusted when GitHub agrees.
 */
import type { Logger } from "../log.js";
import { explainApiError, type GitHubClient } from "./client.js";
import type { EventContext } from "./context.js";
import type { Produced } from "./modes/produced.js";

/** The recipe for commenting on pull requests from forks. */
export const FORK_RECIPE = "docs/fork-pull-requests.md";

export interface Destination {
  pr: number | null;
  sha: string;
  /** Set when the token cannot write to the PR (a fork's pull_request run). */
  readOnly?: string;
  /** Set when the bundle's commit is no longer the PR's head (a workflow_run that came late). */
  stale?: string;
}

export async function destination(
  produced: Produced,
  ctx: EventContext,
  client: GitHubClient | undefined,
  logger: Logger,
): Promise<Destination> {
  if (produced.from) {
    // workflow_run: the triggering run's own record names the PR. Trust it only when GitHub agrees
    // that this PR's head is the commit that run evaluated.
    const { pr, sha } = produced.from;
    if (pr === null || !client) return { pr: null, sha };
    try {
      const { data } = await client.rest.pulls.get({ owner: ctx.owner, repo: ctx.repo, pull_number: pr });
      if (data.head.sha === sha) return { pr, sha };
      return {
        pr: null,
        sha,
        stale: `PR #${pr}'s head is ${data.head.sha.slice(0, 7)}, but the bundle is of ${sha.slice(0, 7)} (a newer push, or a record that does not belong to this PR)`,
      };
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

/** What a step that could not comment (a read-only token) did instead, and how to get the comment. */
export function forkNotice(why: string): string {
  return `${why}: evalgate wrote the job summary and the step outputs, but no PR comment or check run. To comment on pull requests from forks, use the two-workflow recipe in ${FORK_RECIPE} (a workflow_run workflow posts the comment).`;
}
