/**
 * The bot around a run: what the event asks for (a `/evalgate` command in a PR comment, a label),
 * who may ask, which suites a pull request can change the result of (`paths:`), and the rules it is
 * judged by (the base commit's gate and quarantine). It decides before the run and reports after
 * it: reactions, the "requested by" line, quarantine and skip sections, a commit status, label
 * removal. Nothing here runs evals; main.ts runs them with the options the bot adds.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { type Bundle, rowKey } from "../bundle/read.js";
import type { WireIndexRow } from "../bundle/wire.js";
import { loadPlan } from "../config/plan.js";
import type { GateInput } from "../config/schema.js";
import { UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import type { RunOptions } from "../pipeline/run.js";
import {
  gateChangeSection,
  type QuarantineBlock,
  quarantineSection,
  requestedBy,
  skippedSection,
} from "../report/bot.js";
import { git, repositoryRoot } from "../workspace/git.js";
import { apiStatus, explainApiError, type GitHubClient } from "./client.js";
import { COMMAND_HELP, parseCommand, type RunCommand } from "./commands.js";
import type { EventContext } from "./context.js";
import { type ActionInputs, checkWorkingDirectory } from "./inputs.js";
import { activeEntry, applyQuarantine, parseQuarantine, type Quarantine } from "./quarantine.js";
import { type FileAtCommit, trustedGates, trustedQuarantine } from "./trusted.js";

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" ? (v as Json) : {});
const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

export const FORK_RECIPE_DOC = "docs/fork-pull-requests.md";
const WRITERS = new Set(["admin", "maintain", "write"]);

export interface BotDeps {
  client: GitHubClient | undefined;
  logger: Logger;
  payload: Json;
  today: Date;
}

/** The bot's decision for one step. */
export interface BotPlan {
  ctx: EventContext;
  /** Set when the step runs no evals: why (the skipped-reason output). */
  skipped?: string;
  /** Every suite was skipped for its paths: main posts the skip comment and a passing check. */
  skippedByPaths?: { sections: string[] };
  /** Options the bot adds to the run. */
  run: Partial<RunOptions>;
  /** The comment's bot blocks, once the run's rows are known. */
  sections(rows: readonly WireIndexRow[], baseline: Bundle | undefined): string[];
  /** After the run (or the skip): reactions, commit status, label removal. */
  finish(outcome: "pass" | "fail" | "error", detailsUrl?: string): Promise<void>;
}

function noop(ctx: EventContext, skipped?: string): BotPlan {
  return { ctx, ...(skipped ? { skipped } : {}), run: {}, sections: () => [], finish: async () => {} };
}

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

interface PrFacts {
  number: number;
  headSha: string;
  baseSha: string | null;
  baseRef: string | null;
  headRepo: string | null;
  baseRepo: string;
}

async function api<T>(
  logger: Logger,
  what: string,
  permission: string,
  call: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    logger.warn(explainApiError(error, what, permission));
    return undefined;
  }
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

async function changedFiles(client: GitHubClient, ctx: EventContext, pr: number): Promise<string[]> {
  const files = await client.paginate(client.rest.pulls.listFiles, {
    owner: ctx.owner,
    repo: ctx.repo,
    pull_number: pr,
    per_page: 100,
  });
  return files.flatMap((f) => [f.filename, ...(f.previous_filename ? [f.previous_filename] : [])]);
}

/** Prepares the bot's part of a step that runs evals. */
export async function prepareBot(inputs: ActionInputs, ctx0: EventContext, deps: BotDeps): Promise<BotPlan> {
  if (inputs.mode.kind !== "run") return noop(ctx0);
  await checkWorkingDirectory(inputs.cwd);
  const { client, logger, payload } = deps;
  let ctx = ctx0;
  const sections: string[] = [];
  const finishers: ((outcome: "pass" | "fail" | "error", url?: string) => Promise<void>)[] = [];
  const run: Partial<RunOptions> = {};
  let pr: PrFacts | null = ctx.pullRequest
    ? {
        number: ctx.pullRequest.number,
        headSha: ctx.sha,
        baseSha: ctx.pullRequest.baseSha ?? null,
        baseRef: ctx.pullRequest.baseRef,
        headRepo: ctx.pullRequest.headRepo,
        baseRepo: ctx.pullRequest.baseRepo ?? `${ctx.owner}/${ctx.repo}`,
      }
    : null;
  let command: RunCommand | null = null;

  if (ctx.eventName === "issue_comment") {
    const issue = obj(payload.issue);
    const comment = obj(payload.comment);
    const user = obj(comment.user);
    const login = str(user.login) ?? "someone";
    const number = Number(issue.number);
    if (!issue.pull_request) return noop(ctx, "the comment is on an issue, not a pull request");
    if (payload.action !== "created")
      return noop(ctx, `a comment that was ${String(payload.action)} is not a command`);
    if (user.type === "Bot" || login.endsWith("[bot]"))
      return noop(ctx, `comments by bots (${login}) are not obeyed`);
    const parsed = parseCommand(String(comment.body ?? ""));
    if (!parsed) return noop(ctx, "the comment has no /evalgate command");
    if (!client) throw new UsageError("a /evalgate command needs the github-token input");
    const ref = { owner: ctx.owner, repo: ctx.repo };
    const commentId = Number(comment.id);
    const reply = (body: string) =>
      api(logger, "replying to the command", "pull-requests: write", () =>
        client.rest.issues.createComment({ ...ref, issue_number: number, body }),
      );
    const react = (content: "eyes" | "rocket" | "confused") =>
      api(logger, `reacting ${content} to the command`, "pull-requests: write", () =>
        client.rest.reactions.createForIssueComment({ ...ref, comment_id: commentId, content }),
      );
    // author_association says OWNER/MEMBER for people who may only read: ask for the permission itself.
    const perm = await api(logger, `looking up ${login}'s permission`, "metadata: read", () =>
      client.rest.repos.getCollaboratorPermissionLevel({ ...ref, username: login }),
    );
    const level = perm?.data.role_name ?? perm?.data.permission ?? "none";
    if (!WRITERS.has(level) && !WRITERS.has(perm?.data.permission ?? "none")) {
      await reply(
        `@${login} only people with write access to this repository can run evalgate (you have ${level} access). Nothing was run.`,
      );
      return noop(ctx, `${login} has ${level} access; commands need write`);
    }
    if (parsed.kind === "help") {
      await reply(`evalgate commands:\n\n${COMMAND_HELP}`);
      return noop(ctx, "/evalgate help");
    }
    if (parsed.kind === "invalid") {
      await react("confused");
      await reply(`@${login} \`${parsed.text.replace(/`/g, "'")}\`: ${parsed.error}.\n\n${COMMAND_HELP}`);
      return noop(ctx, `invalid command: ${parsed.error}`);
    }
    command = parsed;
    await react("eyes");
    const got = await client.rest.pulls.get({ ...ref, pull_number: number }).catch((error: unknown) => {
      throw new UsageError(explainApiError(error, `looking up PR #${number}`, "pull-requests: read"));
    });
    const p = got.data;
    pr = {
      number,
      headSha: p.head.sha,
      baseSha: p.base.sha ?? null,
      baseRef: p.base.ref,
      headRepo: p.head.repo?.full_name ?? null,
      baseRepo: p.base.repo?.full_name ?? `${ctx.owner}/${ctx.repo}`,
    };
    if (pr.headRepo !== pr.baseRepo) {
      await react("confused");
      await reply(
        `@${login} this pull request comes from a fork (${pr.headRepo ?? "a deleted repository"}): a command would run its code with this repository's secrets and write token, so evalgate does not. Its evals run under \`pull_request\` without secrets; to get their comment, use the two-workflow recipe in ${FORK_RECIPE_DOC}.`,
      );
      return noop(ctx, "commands do not run the code of pull requests from forks");
    }
    await checkoutHead(await repositoryRoot(inputs.cwd), pr.headSha, number, logger);
    ctx = {
      ...ctx,
      sha: pr.headSha,
      baseBranch: pr.baseRef,
      pullRequest: {
        number,
        baseRef: pr.baseRef,
        headSha: pr.headSha,
        baseSha: pr.baseSha,
        headRepo: pr.headRepo,
        baseRepo: pr.baseRepo,
        fork: false,
      },
    };
    if (parsed.repeat !== undefined) run.repeat = parsed.repeat;
    if (parsed.tests.length) run.tests = parsed.tests;
    if (parsed.targets.length) run.targets = parsed.targets;
    if (parsed.tags.length) run.tags = parsed.tags;
    sections.push(requestedBy(login, parsed.text, pr.headSha));
    const headSha = pr.headSha;
    finishers.push(async (outcome, url) => {
      await react(outcome === "pass" ? "rocket" : "confused");
      // A status on the head commit, where a required check looks (a check run when check-name is set).
      if (!inputs.checkName) {
        await api(logger, "setting the commit status", "statuses: write", () =>
          client.rest.repos.createCommitStatus({
            ...ref,
            sha: headSha,
            state: outcome === "pass" ? "success" : outcome === "fail" ? "failure" : "error",
            context: `evalgate${inputs.commentKey === "default" ? "" : ` (${inputs.commentKey})`}`,
            description:
              `${outcome === "pass" ? "gate passed" : outcome === "fail" ? "gate failed" : "error"} (requested by ${login})`.slice(
                0,
                140,
              ),
            ...(url ? { target_url: url } : {}),
          }),
        );
      }
    });
  } else if (ctx.eventName === "pull_request" && inputs.labels.length > 0) {
    const action = str(payload.action);
    const prLabels = (
      Array.isArray(obj(payload.pull_request).labels) ? (obj(payload.pull_request).labels as unknown[]) : []
    )
      .map((l) => str(obj(l).name))
      .filter((n): n is string => n !== null);
    let label: string | null = null;
    if (action === "labeled") {
      label = str(obj(payload.label).name);
      if (!label || !matchLabel(inputs.labels, label))
        return noop(
          ctx,
          `the label ${label ?? "(none)"} is not one of the labels input (${inputs.labels.join(", ")})`,
        );
    } else {
      label = prLabels.find((l) => matchLabel(inputs.labels, l)) ?? null;
      if (!label) return noop(ctx, `the pull request has none of the labels ${inputs.labels.join(", ")}`);
    }
    const m = matchLabel(inputs.labels, label)!;
    if (m.tags.length) run.tags = m.tags;
    logger.info(`label ${label}: running${m.tags.length ? ` the tests tagged ${m.tags.join(", ")}` : ""}`);
    if (inputs.removeLabel && client && pr) {
      const n = pr.number;
      const name = label;
      finishers.push(async () => {
        await api(logger, `removing the label ${name}`, "pull-requests: write", () =>
          client.rest.issues.removeLabel({ owner: ctx.owner, repo: ctx.repo, issue_number: n, name }),
        );
      });
    }
  }

  // The run's own options, as the bot leaves them; a first look at the plan finds suites and paths.
  const options = { ...inputs.mode.options, ...run };
  const root = await repositoryRoot(options.cwd);
  const onPr = pr !== null && ctx.eventName !== "push";
  const plan = onPr ? await loadPlan({ ...options, projectRoot: root, checkAgentPrograms: false }) : null;

  // Suites the pull request cannot change the result of (paths:), skipped. A command runs all it asks for.
  let skipped: { name: string; evalPath: string; paths: string[] }[] = [];
  if (plan && pr && client && !command && ctx.eventName === "pull_request") {
    const withPaths = plan.roots.filter((r) => r.paths?.length);
    if (withPaths.length) {
      const files = await changedFiles(client, ctx, pr.number).catch((error: unknown) => {
        throw new UsageError(
          explainApiError(error, `listing the files of PR #${pr!.number}`, "pull-requests: read"),
        );
      });
      skipped = withPaths
        .filter((r) => {
          const isMine = picomatch([...r.paths!, r.evalPath], { dot: true });
          return !files.some((f) => isMine(f));
        })
        .map((r) => ({ name: r.name, evalPath: r.evalPath, paths: r.paths! }));
      if (skipped.length) {
        run.skipEvals = new Set(skipped.map((s) => s.evalPath));
        logger.info(
          `skipping ${skipped.map((s) => s.evalPath).join(", ")}: the pull request changes none of their paths`,
        );
      }
    }
  }

  // The gate and the quarantine a PR is judged by: the base commit's.
  // Not in the merge queue: a PR gets there only after its own check, judged by the base's rules, passed.
  const untrusted = ctx.eventName === "pull_request" || ctx.eventName === "issue_comment";
  const trusted = untrusted && pr?.baseSha && !inputs.trustPrGate ? pr.baseSha : null;
  let quarantine: Quarantine | null = null;
  const qRel = path.relative(root, path.resolve(inputs.cwd, inputs.quarantineFile));
  if (trusted && plan) {
    const evalPaths = [
      ...new Set([...plan.roots.map((r) => r.evalPath), ...plan.cases.map((c) => c.identity.evalPath)]),
    ];
    const remote: FileAtCommit | undefined = client
      ? async (rel, sha) => {
          try {
            const { data } = await client.rest.repos.getContent({
              owner: ctx.owner,
              repo: ctx.repo,
              path: rel,
              ref: sha,
            });
            if (Array.isArray(data) || data.type !== "file" || !("content" in data)) return null;
            return Buffer.from(data.content, "base64").toString("utf8");
          } catch (error) {
            if (apiStatus(error) === 404) return null;
            throw new UsageError(
              `${explainApiError(error, `reading ${rel} at the base commit ${sha.slice(0, 7)}`, "contents: read")}; or check out with fetch-depth: 0, or set trust-pr-gate: true if every pull request's author is trusted`,
            );
          }
        }
      : undefined;
    const rules = await trustedGates(root, trusted, evalPaths, remote);
    run.gateOverride = rules.gates as Map<string, GateInput | undefined>;
    const tq = await trustedQuarantine(root, trusted, qRel, deps.today, remote);
    quarantine = tq.quarantine;
    const change = gateChangeSection(
      [...rules.gateChanges].map(([evalPath, lines]) => ({ evalPath, lines })),
      tq.changes,
      trusted,
    );
    if (change) {
      sections.push(change);
      logger.info(`the pull request changes its rules; judged by the base commit ${trusted.slice(0, 7)}'s`);
    }
  } else {
    const text = await readFile(path.join(root, qRel), "utf8").catch(() => null);
    if (text !== null) quarantine = parseQuarantine(text, qRel, deps.today);
  }
  if (quarantine) {
    const q = quarantine;
    run.gateExclude = (row) => activeEntry(q, row) !== undefined;
  }

  const allSkipped = plan !== null && skipped.length > 0 && skipped.length === plan.roots.length;
  const makeSections = (rows: readonly WireIndexRow[], baseline: Bundle | undefined): string[] => {
    const out = [...sections];
    if (quarantine) {
      const o = applyQuarantine(quarantine, rows, baseline?.rows);
      const name = (r: WireIndexRow) => ({
        suite: r.suite,
        testId: r.test_id,
        target: r.target,
        verdict: r.verdict,
      });
      const block: QuarantineBlock = {
        file: o.file,
        quarantined: o.quarantined.map((c) => ({
          ...name(c.row),
          owner: c.entry.owner,
          expires: c.entry.expires,
          reason: c.entry.reason,
          stable: c.stable,
        })),
        expired: o.expired.map((c) => ({ ...name(c.row), owner: c.entry.owner, expires: c.entry.expires })),
      };
      const text = quarantineSection(block);
      if (text) out.push(text);
    }
    if (skipped.length) {
      const paths = new Set(skipped.map((s) => s.evalPath));
      const seen = new Set(rows.map(rowKey));
      const carried = (baseline?.rows ?? [])
        .filter((r) => paths.has(r.root_eval_path) && !seen.has(rowKey(r)))
        .map((r) => ({ suite: r.suite, testId: r.test_id, target: r.target, verdict: r.verdict }));
      out.push(skippedSection({ suites: skipped, carried, baselineSha: baseline?.summary.git?.sha ?? null }));
    }
    return out;
  };
  const finish = async (outcome: "pass" | "fail" | "error", url?: string) => {
    for (const f of finishers) await f(outcome, url);
  };
  return {
    ctx,
    run,
    ...(allSkipped
      ? {
          skipped: `the pull request changes none of the files the suites depend on (paths: of ${skipped.map((s) => s.evalPath).join(", ")})`,
          skippedByPaths: { sections: [] },
        }
      : {}),
    sections: makeSections,
    finish,
  };
}
