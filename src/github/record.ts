/**
 * What the action records beside a bundle it made (github.json), for a later workflow_run step:
 * which repository, event, commit and pull request the bundle is of, and why it had no baseline.
 * Read back, it is a claim (the bundle may be a fork's artifact), checked before anything is posted.
 */
import { readConfined } from "../bundle/files.js";
import type { EventContext } from "./context.js";

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

export function recordOf(ctx: EventContext, baselineNote: string | undefined): GitHubRecord {
  return {
    schema: "evalgate.github/v1",
    repository: `${ctx.owner}/${ctx.repo}`,
    event: ctx.eventName,
    sha: ctx.sha,
    pull_request: ctx.pullRequest?.number ?? null,
    fork: ctx.pullRequest?.fork ?? false,
    base_branch: ctx.baseBranch,
    run_id: ctx.runId,
    run_attempt: ctx.runAttempt,
    baseline_note: baselineNote ?? null,
  };
}

/** The record of a bundle folder, or nothing usable: every field is checked where it is used. */
export async function readRecord(dir: string): Promise<Partial<GitHubRecord>> {
  try {
    // Through the confined reader: the bundle may be a fork's artifact (a link, a FIFO, a huge file).
    return JSON.parse(
      (await readConfined(dir, GITHUB_RECORD, 1024 * 1024)).toString("utf8"),
    ) as Partial<GitHubRecord>;
  } catch {
    return {};
  }
}
