/**
 * What starts or skips a pull request's evals besides a command: the `labels` input (a run label on
 * the PR, or one just added) and each suite's `paths:` (the PR's changed files). A skip that is
 * about this PR's evals carries a report (github/skip.ts); an event about something else (another
 * label added) runs and reports nothing.
 */
import picomatch from "picomatch";
import type { EvalRoot } from "../config/types.js";
import { UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import { obj, str } from "./bot-command.js";
import { bestEffort, explainApiError, type GitHubClient } from "./client.js";
import type { EventContext } from "./context.js";
import type { ActionInputs } from "./inputs.js";

type Json = Record<string, unknown>;

/** A label of the `labels` input that `name` is: the label itself or NAME:TAG. */
export function matchLabel(labels: readonly string[], name: string): { tags: string[] } | null {
  for (const l of labels) {
    if (l === name) {
      const i = l.indexOf(":");
      return { tags: i > 0 ? [l.slice(i + 1)] : [] };
    }
  }
  return null;
}

export type LabelTrigger =
  /** No run: why; `report` when the skip is about this PR's evals (no run label on it). */
  | { skip: string; report?: { kind: "labels"; hint: string } }
  /** Run, with the label's tags; `after` removes the label (remove-label). */
  | { tags: string[]; after?: () => Promise<void> };

/** The `labels` input on a pull_request event (undefined: no labels input, or another event). */
export function labelTrigger(
  inputs: ActionInputs,
  ctx: EventContext,
  payload: Json,
  prNumber: number | null,
  client: GitHubClient | undefined,
  logger: Logger,
): LabelTrigger | undefined {
  if (ctx.eventName !== "pull_request" || inputs.labels.length === 0) return undefined;
  const action = str(payload.action);
  const onPr = (
    Array.isArray(obj(payload.pull_request).labels) ? (obj(payload.pull_request).labels as unknown[]) : []
  )
    .map((l) => str(obj(l).name))
    .filter((n): n is string => n !== null);
  let label: string | null;
  if (action === "labeled") {
    label = str(obj(payload.label).name);
    // Another label added: not about the evals, so nothing is run or reported.
    if (!label || !matchLabel(inputs.labels, label))
      return {
        skip: `the label ${label ?? "(none)"} is not one of the labels input (${inputs.labels.join(", ")})`,
      };
  } else {
    label = onPr.find((l) => matchLabel(inputs.labels, l)) ?? null;
    if (!label) {
      const more = inputs.labels.length > 1 ? ` (or one of ${inputs.labels.slice(1).join(", ")})` : "";
      return {
        skip: `the pull request has none of the labels ${inputs.labels.join(", ")}`,
        report: { kind: "labels", hint: `Add the label ${inputs.labels[0]} to run them${more}.` },
      };
    }
  }
  const { tags } = matchLabel(inputs.labels, label)!;
  logger.info(`label ${label}: running${tags.length ? ` the tests tagged ${tags.join(", ")}` : ""}`);
  if (!(inputs.removeLabel && client && prNumber !== null)) return { tags };
  const name = label;
  return {
    tags,
    after: async () => {
      await bestEffort(logger, `removing the label ${name}`, "pull-requests: write", () =>
        client.rest.issues.removeLabel({ owner: ctx.owner, repo: ctx.repo, issue_number: prNumber, name }),
      );
    },
  };
}

/** The PR's changed files (and the old names of renamed ones), as the files API lists them. */
async function changedFiles(
  client: GitHubClient,
  ctx: EventContext,
  pr: number,
): Promise<{ names: string[]; listed: number }> {
  const files = await client.paginate(client.rest.pulls.listFiles, {
    owner: ctx.owner,
    repo: ctx.repo,
    pull_number: pr,
    per_page: 100,
  });
  return {
    names: files.flatMap((f) => [f.filename, ...(f.previous_filename ? [f.previous_filename] : [])]),
    listed: files.length,
  };
}

/** How many files the PR changes: the payload's `changed_files`, else GitHub's answer for the PR. */
async function changedCount(
  client: GitHubClient,
  ctx: EventContext,
  pr: number,
  payload: Json,
): Promise<number | null> {
  const given = obj(payload.pull_request).changed_files;
  if (typeof given === "number") return given;
  try {
    const { data } = await client.rest.pulls.get({ owner: ctx.owner, repo: ctx.repo, pull_number: pr });
    return typeof data.changed_files === "number" ? data.changed_files : null;
  } catch {
    return null; // the listing alone, as before GitHub said how many there are
  }
}

export interface SkippedSuite {
  name: string;
  evalPath: string;
  paths: string[];
}

/**
 * The suites a pull request cannot change the result of: it touches none of their `paths:` (nor
 * the eval file). GitHub's files API lists at most 3,000 files: when the PR changes more than were
 * listed, the unlisted ones could be any suite's, so none is skipped (decision 0204).
 */
export async function pathSkips(
  client: GitHubClient,
  ctx: EventContext,
  pr: number,
  roots: readonly EvalRoot[],
  payload: Json,
  logger: Logger,
): Promise<SkippedSuite[]> {
  const withPaths = roots.filter((r) => r.paths?.length);
  if (withPaths.length === 0) return [];
  const files = await changedFiles(client, ctx, pr).catch((error: unknown) => {
    throw new UsageError(explainApiError(error, `listing the files of PR #${pr}`, "pull-requests: read"));
  });
  const total = await changedCount(client, ctx, pr, payload);
  if (total !== null && total > files.listed) {
    logger.info(
      `running every suite: PR #${pr} changes ${total} files, and GitHub lists only the first ${files.listed}; the others could be any suite's paths`,
    );
    return [];
  }
  const skipped = withPaths
    .filter((r) => {
      const isMine = picomatch([...r.paths!, r.evalPath], { dot: true });
      return !files.names.some((f) => isMine(f));
    })
    .map((r) => ({ name: r.name, evalPath: r.evalPath, paths: r.paths! }));
  if (skipped.length)
    logger.info(
      `skipping ${skipped.map((s) => s.evalPath).join(", ")}: the pull request changes none of their paths`,
    );
  return skipped;
}
