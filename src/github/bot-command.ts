/**
 * A `/evalgate run` command in a PR comment (issue_comment): who may ask (write access, no bots,
 * no forks), the answer (reactions, a reply for help and mistakes), the pull request's head checked
 * out, the command's filters, and, after the run, a reaction and a commit status on the head.
 */

import { UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import type { RunOptions } from "../pipeline/run.js";
import { commandReply, requestedBy } from "../report/bot.js";
import { git, repositoryRoot } from "../workspace/git.js";
import { startCheckRun } from "./check.js";
import { bestEffort, explainApiError, type GitHubClient } from "./client.js";
import { type Command, parseCommand, type RunCommand } from "./commands.js";
import { type EventContext, runUrl } from "./context.js";
import { FORK_RECIPE } from "./destination.js";
import type { ActionInputs } from "./inputs.js";

type Json = Record<string, unknown>;
export const obj = (v: unknown): Json => (v && typeof v === "object" ? (v as Json) : {});
export const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

const WRITERS = new Set(["admin", "maintain", "write"]);

export type Outcome = "pass" | "fail" | "error";

/** The pull request a step is about, as the bot needs it. */
export interface PrFacts {
  number: number;
  headSha: string;
  baseSha: string | null;
  baseRef: string | null;
  headRepo: string | null;
  baseRepo: string;
}

/** A command that runs: the context moved to the PR's head, and what the bot adds to the run. */
export interface CommandRequest {
  ctx: EventContext;
  pr: PrFacts;
  command: RunCommand;
  /** The command's filters. */
  run: Partial<RunOptions>;
  /** The comment's "requested by" line. */
  section: string;
  /** The check run (check-name) opened in progress on the head while the command runs. */
  pendingCheck?: number;
  finish(outcome: Outcome, detailsUrl?: string): Promise<void>;
}

/** Checks out `sha` in the repository (issue_comment runs on the default branch's commit). */
async function checkoutHead(root: string, sha: string, pr: number, logger: Logger): Promise<void> {
  const head = (await git(["rev-parse", "HEAD"], { cwd: root }).catch(() => "")).trim();
  if (head === sha) return;
  const has = await git(["cat-file", "-e", `${sha}^{commit}`], { cwd: root }).then(
    () => true,
    () => false,
  );
  if (!has) await git(["fetch", "--no-tags", "--depth=1", "origin", sha], { cwd: root }).catch(() => "");
  try {
    await git(["checkout", "--quiet", "--detach", sha], { cwd: root });
  } catch (error) {
    throw new UsageError(
      `cannot check out the pull request's head ${sha.slice(0, 7)}: ${(error as Error).message.split("\n")[0]}. In the workflow, check out refs/pull/${pr}/head (docs/workflows/evals-commands.yml)`,
    );
  }
  logger.info(
    `checked out the pull request's head ${sha.slice(0, 7)} (was ${head.slice(0, 7) || "nothing"})`,
  );
}

/** The comment's command and who wrote it, or why the comment is not one. */
function commentCommand(
  payload: Json,
): { login: string; number: number; commentId: number; parsed: Command } | { skipped: string } {
  const issue = obj(payload.issue);
  const comment = obj(payload.comment);
  const user = obj(comment.user);
  const login = str(user.login) ?? "someone";
  if (!issue.pull_request) return { skipped: "the comment is on an issue, not a pull request" };
  if (payload.action !== "created")
    return { skipped: `a comment that was ${String(payload.action)} is not a command` };
  if (user.type === "Bot" || login.endsWith("[bot]"))
    return { skipped: `comments by bots (${login}) are not obeyed` };
  const parsed = parseCommand(String(comment.body ?? ""));
  if (!parsed) return { skipped: "the comment has no /evalgate command" };
  return { login, number: Number(issue.number), commentId: Number(comment.id), parsed };
}

/** The answers on the command's comment: a reply and reactions, best effort (a warning each). */
interface Answer {
  reply(body: string): Promise<unknown>;
  react(content: "eyes" | "rocket" | "confused"): Promise<unknown>;
}

type RepoRef = { owner: string; repo: string };

function answerOn(
  client: GitHubClient,
  logger: Logger,
  ref: RepoRef,
  number: number,
  commentId: number,
): Answer {
  return {
    reply: (body) =>
      bestEffort(logger, "replying to the command", "pull-requests: write", () =>
        client.rest.issues.createComment({ ...ref, issue_number: number, body }),
      ),
    react: (content) =>
      bestEffort(logger, `reacting ${content} to the command`, "pull-requests: write", () =>
        client.rest.reactions.createForIssueComment({ ...ref, comment_id: commentId, content }),
      ),
  };
}

/** Why `login` may not command (less than write access), answered on the comment; else undefined. */
async function refusal(
  client: GitHubClient,
  logger: Logger,
  ref: RepoRef,
  login: string,
  answer: Answer,
): Promise<{ skipped: string } | undefined> {
  // author_association says OWNER/MEMBER for people who may only read: ask for the permission itself.
  const perm = await bestEffort(logger, `looking up ${login}'s permission`, "metadata: read", () =>
    client.rest.repos.getCollaboratorPermissionLevel({ ...ref, username: login }),
  );
  const level = perm?.data.role_name ?? perm?.data.permission ?? "none";
  if (WRITERS.has(level) || WRITERS.has(perm?.data.permission ?? "none")) return undefined;
  await answer.reply(commandReply.notWriter(login, level));
  return { skipped: `${login} has ${level} access; commands need write` };
}

async function pullRequestFacts(
  client: GitHubClient,
  ref: RepoRef,
  number: number,
  ctx: EventContext,
): Promise<PrFacts> {
  const got = await client.rest.pulls.get({ ...ref, pull_number: number }).catch((error: unknown) => {
    throw new UsageError(explainApiError(error, `looking up PR #${number}`, "pull-requests: read"));
  });
  const p = got.data;
  return {
    number,
    headSha: p.head.sha,
    baseSha: p.base.sha ?? null,
    baseRef: p.base.ref,
    headRepo: p.head.repo?.full_name ?? null,
    baseRepo: p.base.repo?.full_name ?? `${ctx.owner}/${ctx.repo}`,
  };
}

/** The command's filters, as run options. */
function runFilters(parsed: RunCommand): Partial<RunOptions> {
  const run: Partial<RunOptions> = {};
  if (parsed.repeat !== undefined) run.repeat = parsed.repeat;
  if (parsed.tests.length) run.tests = parsed.tests;
  if (parsed.targets.length) run.targets = parsed.targets;
  if (parsed.tags.length) run.tags = parsed.tags;
  return run;
}

/** Where the head's mark lands (a commit status, or the check run of check-name) and what it says. */
interface HeadMark {
  client: GitHubClient;
  logger: Logger;
  inputs: ActionInputs;
  ref: RepoRef;
  headSha: string;
  login: string;
  /** The commit status's context. */
  context: string;
}

/**
 * Pending on the head while it runs, where a required check looks: the commit status, or the
 * check run (check-name) opened in progress and concluded by the outcome; the check run's id.
 */
async function markPending(mark: HeadMark, url: string | undefined): Promise<number | undefined> {
  const { client, logger, ref, headSha, login } = mark;
  const name = mark.inputs.checkName;
  if (name) {
    return bestEffort(logger, `opening the check run "${name}"`, "checks: write", () =>
      startCheckRun(client, {
        ...ref,
        name,
        headSha,
        title: `running (requested by ${login})`,
        ...(url ? { detailsUrl: url } : {}),
      }),
    );
  }
  await bestEffort(logger, "setting the commit status", "statuses: write", () =>
    client.rest.repos.createCommitStatus({
      ...ref,
      sha: headSha,
      state: "pending",
      context: mark.context,
      description: `running (requested by ${login})`.slice(0, 140),
      ...(url ? { target_url: url } : {}),
    }),
  );
  return undefined;
}

/** After the run: a reaction, and the outcome as the head's commit status (unless a check run has it). */
function finisher(mark: HeadMark, answer: Answer): CommandRequest["finish"] {
  const { client, logger, ref, headSha, login } = mark;
  return async (outcome, url) => {
    await answer.react(outcome === "pass" ? "rocket" : "confused");
    // A status on the head commit, where a required check looks (a check run when check-name is set).
    if (!mark.inputs.checkName) {
      await bestEffort(logger, "setting the commit status", "statuses: write", () =>
        client.rest.repos.createCommitStatus({
          ...ref,
          sha: headSha,
          state: outcome === "pass" ? "success" : outcome === "fail" ? "failure" : "error",
          context: mark.context,
          description:
            `${outcome === "pass" ? "gate passed" : outcome === "fail" ? "gate failed" : "error"} (requested by ${login})`.slice(
              0,
              140,
            ),
          ...(url ? { target_url: url } : {}),
        }),
      );
    }
  };
}

/** The event's context moved to the pull request's head. */
function headContext(ctx: EventContext, pr: PrFacts): EventContext {
  return {
    ...ctx,
    sha: pr.headSha,
    baseBranch: pr.baseRef,
    pullRequest: {
      number: pr.number,
      baseRef: pr.baseRef,
      headSha: pr.headSha,
      baseSha: pr.baseSha,
      headRepo: pr.headRepo,
      baseRepo: pr.baseRepo,
      fork: false,
    },
  };
}

/** The command of an issue_comment event, or why the step runs nothing. */
export async function commandRequest(
  inputs: ActionInputs,
  ctx: EventContext,
  deps: { client: GitHubClient | undefined; logger: Logger; payload: Json },
): Promise<CommandRequest | { skipped: string }> {
  const { client, logger, payload } = deps;
  const asked = commentCommand(payload);
  if ("skipped" in asked) return asked;
  const { login, number, parsed } = asked;
  if (!client) throw new UsageError("a /evalgate command needs the github-token input");
  const ref = { owner: ctx.owner, repo: ctx.repo };
  const answer = answerOn(client, logger, ref, number, asked.commentId);
  const refused = await refusal(client, logger, ref, login, answer);
  if (refused) return refused;
  if (parsed.kind === "help") {
    await answer.reply(commandReply.help());
    return { skipped: "/evalgate help" };
  }
  if (parsed.kind === "invalid") {
    await answer.react("confused");
    await answer.reply(commandReply.invalid(login, parsed.text, parsed.error));
    return { skipped: `invalid command: ${parsed.error}` };
  }
  await answer.react("eyes");
  const pr = await pullRequestFacts(client, ref, number, ctx);
  if (pr.headRepo !== pr.baseRepo) {
    await answer.react("confused");
    await answer.reply(commandReply.fork(login, pr.headRepo, FORK_RECIPE));
    return { skipped: "commands do not run the code of pull requests from forks" };
  }
  await checkoutHead(await repositoryRoot(inputs.cwd), pr.headSha, number, logger);
  const context = `evalgate${inputs.commentKey === "default" ? "" : ` (${inputs.commentKey})`}`;
  const mark: HeadMark = { client, logger, inputs, ref, headSha: pr.headSha, login, context };
  const pendingCheck = await markPending(mark, runUrl(ctx));
  return {
    ctx: headContext(ctx, pr),
    pr,
    command: parsed,
    run: runFilters(parsed),
    section: requestedBy(login, parsed.text, pr.headSha),
    ...(pendingCheck ? { pendingCheck } : {}),
    finish: finisher(mark, answer),
  };
}
