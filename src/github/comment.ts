/**
 * The sticky PR comment: one per pull request and comment key, found by its hidden marker line
 * through every page of the PR's comments (in a comment the token itself wrote), updated in place,
 * and posted when the `comment` input wants it.
 */
import type { WireSummary } from "../bundle/wire.js";
import { apiStatus, explainApiError, type GitHubClient, isForbidden } from "./client.js";
import { forkNotice } from "./destination.js";
import type { CommentMode } from "./inputs.js";
import type { ActionsLogger } from "./io.js";

export interface IssueRef {
  owner: string;
  repo: string;
  number: number;
}

export interface StickyComment {
  id: number;
  url: string;
  /** The comment's text when it was found (a skip does not overwrite a report of the same commit). */
  body?: string;
}

/** A comment is ours when one of its lines is exactly the marker (a quote of it is `> <!-- …`). */
export function hasMarker(body: string | undefined | null, marker: string): boolean {
  return (body ?? "").split("\n").some((line) => line.trim() === marker);
}

/** What the workflow token posts as; the sticky comment's author when the token's own cannot be learnt. */
export const ACTIONS_BOT = "github-actions[bot]";

const logins = new WeakMap<GitHubClient, Promise<string | undefined>>();

/**
 * The login the token posts as: GraphQL's `viewer` answers for every kind of token (the app's
 * `name[bot]` for an installation token, github-actions[bot] for the workflow token, the user for
 * a personal token); GET /user answers only a personal token. Undefined when neither answers.
 * Asked once per client.
 */
export function tokenLogin(client: GitHubClient): Promise<string | undefined> {
  let known = logins.get(client);
  if (!known) {
    known = (async () => {
      try {
        const r = await client.graphql<{ viewer?: { login?: unknown } }>("query { viewer { login } }");
        if (typeof r.viewer?.login === "string" && r.viewer.login) return r.viewer.login;
      } catch {
        // an old GitHub Enterprise, or GraphQL refused: try REST
      }
      try {
        const { data } = await client.rest.users.getAuthenticated();
        return data.login || undefined;
      } catch {
        return undefined;
      }
    })();
    logins.set(client, known);
  }
  return known;
}

/**
 * Whether a comment can be the sticky one: its author is the token's own identity (decision 0201).
 * Anyone else, a maintainer or an organisation member included, could paste the marker into a
 * comment of their own, have evalgate write its report there, and then edit that "report" at will.
 * When the token's identity cannot be learnt, only the workflow token's bot is trusted.
 */
export function ownComment(
  c: { user?: { login?: string | null } | null },
  login: string | undefined,
): boolean {
  return (c.user?.login ?? "") === (login ?? ACTIONS_BOT);
}

export async function findStickyComment(
  client: GitHubClient,
  ref: IssueRef,
  marker: string,
): Promise<StickyComment | undefined> {
  const login = await tokenLogin(client);
  const pages = client.paginate.iterator(client.rest.issues.listComments, {
    owner: ref.owner,
    repo: ref.repo,
    issue_number: ref.number,
    per_page: 100,
  });
  for await (const page of pages) {
    const found = page.data.find((c) => hasMarker(c.body, marker) && ownComment(c, login));
    if (found) return { id: found.id, url: found.html_url, body: found.body ?? "" };
  }
  return undefined;
}

/** Updates the sticky comment, or creates it. Returns it and whether it is new. */
export async function upsertStickyComment(
  client: GitHubClient,
  ref: IssueRef,
  marker: string,
  body: string,
  existing?: StickyComment,
): Promise<{ comment: StickyComment; created: boolean }> {
  const current = existing ?? (await findStickyComment(client, ref, marker));
  if (current) {
    try {
      const { data } = await client.rest.issues.updateComment({
        owner: ref.owner,
        repo: ref.repo,
        comment_id: current.id,
        body,
      });
      return { comment: { id: data.id, url: data.html_url }, created: false };
    } catch (error) {
      // Deleted between the search and the update: post a new one.
      if (apiStatus(error) !== 404) throw error;
    }
  }
  const { data } = await client.rest.issues.createComment({
    owner: ref.owner,
    repo: ref.repo,
    issue_number: ref.number,
    body,
  });
  return { comment: { id: data.id, url: data.html_url }, created: true };
}

export interface CommentFacts {
  gateFailed: boolean;
  /** A baseline was compared with. */
  hasBaseline: boolean;
  /** Some case changed against the baseline, or the gate's verdict differs from the baseline's. */
  changed: boolean;
}

/**
 * Whether to post or update the comment in `mode`. An existing comment is always kept current
 * (except with `off`), so that it never shows a failure that has since been fixed.
 */
export function commentWanted(
  mode: CommentMode,
  facts: CommentFacts,
  existing: boolean,
): { post: boolean; why: string } {
  switch (mode) {
    case "off":
      return { post: false, why: "comment: off" };
    case "always":
      return { post: true, why: "comment: always" };
    case "failures":
      if (facts.gateFailed) return { post: true, why: "the gate failed" };
      return existing
        ? { post: true, why: "an earlier comment exists and is kept current" }
        : { post: false, why: "comment: failures, and the gate passed" };
    case "changes":
      if (existing) return { post: true, why: "an earlier comment exists and is kept current" };
      if (!facts.hasBaseline)
        return facts.gateFailed
          ? { post: true, why: "no baseline to compare with, and the gate failed" }
          : { post: false, why: "comment: changes, no baseline to compare with, and the gate passed" };
      return facts.changed
        ? { post: true, why: "results changed against the baseline" }
        : { post: false, why: "comment: changes, and nothing changed against the baseline" };
  }
}

/** Whether `summary` differs from the baseline: a case changed, or the gate's verdict did. */
export function changedFromBaseline(summary: WireSummary, baseline: WireSummary | undefined): boolean {
  const c = summary.comparison;
  if (!c) return false;
  if (c.regressed + c.improved + c.new + c.removed > 0) return true;
  return baseline !== undefined && baseline.gate.verdict !== summary.gate.verdict;
}

export interface PostCommentOptions {
  /** Undefined when the github-token input is empty. */
  client: GitHubClient | undefined;
  /** The `comment` input. */
  mode: CommentMode;
  /** The hidden line that finds the comment again (of the `comment-key` input). */
  marker: string;
  /** The pull request, or null when the step has none. */
  ref: IssueRef | null;
  body: string;
  facts: CommentFacts;
  logger: ActionsLogger;
}

/**
 * Posts or updates the sticky comment when `mode` wants it. Best effort: a failure is a warning (a
 * notice with the fork recipe when the token may not write). Returns the comment when posted.
 */
export async function postComment(o: PostCommentOptions): Promise<StickyComment | undefined> {
  const { client, mode, ref, logger } = o;
  if (mode === "off" || ref === null) {
    if (ref === null && mode !== "off") logger.info("no pull request to comment on");
    return undefined;
  }
  if (!client) {
    logger.warn("no PR comment: the github-token input is empty");
    return undefined;
  }
  try {
    const existing = mode === "always" ? undefined : await findStickyComment(client, ref, o.marker);
    const wanted = commentWanted(mode, o.facts, existing !== undefined);
    if (!wanted.post) {
      logger.info(`no PR comment: ${wanted.why}`);
      return undefined;
    }
    const { comment, created } = await upsertStickyComment(client, ref, o.marker, o.body, existing);
    logger.info(`${created ? "posted" : "updated"} the PR comment: ${comment.url}`);
    return comment;
  } catch (error) {
    const text = explainApiError(error, `posting the comment on PR #${ref.number}`, "pull-requests: write");
    if (isForbidden(error)) logger.notice(forkNotice(text));
    else logger.warn(text);
    return undefined;
  }
}
