/**
 * The bot around a run: what the event asks for (a `/evalgate` command in a PR comment, a label),
 * who may ask, which suites a pull request can change the result of (`paths:`), and the rules it is
 * judged by (the base commit's gate and quarantine). It decides before the run and reports after
 * it: reactions, the "requested by" line, quarantine and skip sections, a commit status, label
 * removal. A `/evalgate run` command is read in bot-command.ts. Nothing here runs evals: the run
 * mode (modes/run.ts) runs them with the options the bot adds.
 */
import path from "node:path";
import { type Bundle, rowKey } from "../bundle/read.js";
import type { WireIndexRow } from "../bundle/wire.js";
import type { Logger } from "../log.js";
import { type OpenExam, openExam } from "../pipeline/exam.js";
import { checkedPlan } from "../pipeline/plan.js";
import { gateExcludeOf, quarantineBlock } from "../pipeline/quarantine.js";
import type { RunOptions } from "../pipeline/run.js";
import { quarantineSection, skippedSection } from "../report/bot.js";
import { repositoryRoot } from "../workspace/git.js";
import { type CommandRequest, commandRequest, type Outcome, type PrFacts } from "./bot-command.js";
import { labelTrigger, pathSkips } from "./bot-triggers.js";
import type { GitHubClient } from "./client.js";
import type { EventContext } from "./context.js";
import type { StepState } from "./error-ending.js";
import { type ActionInputs, checkWorkingDirectory } from "./inputs.js";
import { stepQuarantine } from "./quarantine.js";
import { EXAM_FIX, tarballApi } from "./trusted.js";

type Json = Record<string, unknown>;

export interface BotDeps {
  client: GitHubClient | undefined;
  logger: Logger;
  payload: Json;
  today: Date;
  /** What the step knows so far, filled in as the bot learns it (a command's PR), for an error ending. */
  state?: StepState;
}

/** The bot's decision for one step. */
export interface BotPlan {
  ctx: EventContext;
  /** Set when the step runs no evals: why (the skipped-reason output). */
  skipped?: string;
  /**
   * A skip a reviewer must see (github/skip.ts): the comment says no evals ran on this commit and
   * why, and the check run concludes `skipped`. Unset for events that are not about this PR's
   * evals (a comment that is no command, an unrelated label added).
   */
  skipReport?: { kind: "labels" | "paths"; hint?: string };
  /** Options the bot adds to the run. */
  run: Partial<RunOptions>;
  /** The comment's bot blocks, once the run's rows are known. */
  sections(rows: readonly WireIndexRow[], baseline: Bundle | undefined): string[];
  /** After the run (or the skip): reactions, commit status, label removal. */
  finish(outcome: Outcome, detailsUrl?: string): Promise<void>;
  /** A command's check run, opened in progress on the head: the outcome concludes it. */
  pendingCheck?: number;
  /** At the step's end, whatever happened: removes the exam's files. */
  close(): Promise<void>;
}

function noop(ctx: EventContext, skipped?: string): BotPlan {
  return {
    ctx,
    ...(skipped ? { skipped } : {}),
    run: {},
    sections: () => [],
    finish: async () => {},
    close: async () => {},
  };
}

/**
 * The exam a pull request is judged by: its base commit's (docs/exam.md), on `pull_request` and on
 * comment commands, unless trust-pr-gate. Not in the merge queue: a PR gets there only after its own
 * check, judged by the base's exam, passed; nor on push: the pushed commit is the base.
 */
async function examOfPullRequest(
  inputs: ActionInputs,
  ctx: EventContext,
  baseSha: string | null,
  root: string,
  deps: BotDeps,
): Promise<OpenExam | null> {
  const untrusted = ctx.eventName === "pull_request" || ctx.eventName === "issue_comment";
  if (!untrusted || !baseSha || inputs.trustPrGate) return null;
  const client = deps.client;
  return openExam(
    root,
    {
      ref: baseSha,
      name: "the base commit",
      ...(client ? { tarball: tarballApi(client, ctx) } : {}),
      fix: EXAM_FIX,
    },
    deps.logger,
  );
}

/**
 * A merge step decides the gate of the shards' cases (the shards do not gate): the quarantine
 * applies there as in a run, and its section is in the comment.
 */
async function mergeBot(inputs: ActionInputs, ctx: EventContext, deps: BotDeps): Promise<BotPlan> {
  const root = await repositoryRoot(inputs.cwd);
  const untrusted = ctx.eventName === "pull_request" || ctx.eventName === "issue_comment";
  // Only the base's quarantine file is read from the exam here: the shards ran the exam itself.
  const exam = await examOfPullRequest(inputs, ctx, ctx.pullRequest?.baseSha ?? null, root, deps);
  let quarantine: Awaited<ReturnType<typeof stepQuarantine>>["quarantine"];
  try {
    ({ quarantine } = await stepQuarantine({
      root,
      rel: path.relative(root, path.resolve(inputs.cwd, inputs.quarantineFile)),
      today: deps.today,
      exam,
      trustedPr: untrusted && inputs.trustPrGate,
      logger: deps.logger,
    }));
  } finally {
    await exam?.close();
  }
  if (!quarantine) return noop(ctx);
  return {
    ...noop(ctx),
    run: { gateExclude: gateExcludeOf(quarantine) },
    sections: (rows, baseline) => {
      const text = quarantineSection(quarantineBlock(quarantine, rows, baseline?.rows));
      return text ? [text] : [];
    },
  };
}

/** Prepares the bot's part of a step that runs evals (or merges shards, which gates them). */
export async function prepareBot(inputs: ActionInputs, ctx0: EventContext, deps: BotDeps): Promise<BotPlan> {
  if (inputs.mode.kind === "merge") return mergeBot(inputs, ctx0, deps);
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
  let command: CommandRequest | null = null;

  if (ctx.eventName === "issue_comment") {
    const request = await commandRequest(inputs, ctx, deps);
    if ("skipped" in request) return noop(ctx, request.skipped);
    command = request;
    ctx = request.ctx;
    pr = request.pr;
    Object.assign(run, request.run);
    sections.push(request.section);
    finishers.push(request.finish);
    if (deps.state) {
      // From here an error ends on the PR: its comment, the command's reaction and status.
      deps.state.ctx = ctx;
      deps.state.finish = request.finish;
      if (request.pendingCheck) deps.state.pendingCheck = request.pendingCheck;
    }
  } else {
    const trigger = labelTrigger(inputs, ctx, payload, pr?.number ?? null, client, logger);
    if (trigger && "skip" in trigger)
      return { ...noop(ctx, trigger.skip), ...(trigger.report ? { skipReport: trigger.report } : {}) };
    if (trigger?.tags.length) run.tags = trigger.tags;
    if (trigger?.after) finishers.push(trigger.after);
  }

  // The run's own options, as the bot leaves them; a first look at the plan finds suites and paths.
  const options = { ...inputs.mode.options, ...run };
  const root = await repositoryRoot(options.cwd);
  const exam = await examOfPullRequest(inputs, ctx, pr?.baseSha ?? null, root, deps);
  try {
    if (exam) run.exam = exam;
    return await judged(inputs, deps, {
      ctx,
      pr,
      command,
      root,
      options: { ...options, ...run },
      run,
      sections,
      finishers,
      exam,
    });
  } catch (error) {
    await exam?.close();
    throw error;
  }
}

interface Judging {
  ctx: EventContext;
  pr: PrFacts | null;
  command: CommandRequest | null;
  root: string;
  options: RunOptions;
  /** Options the bot adds to the run (filled in here). */
  run: Partial<RunOptions>;
  sections: string[];
  finishers: ((outcome: "pass" | "fail" | "error", url?: string) => Promise<void>)[];
  exam: OpenExam | null;
}

/** The rules of the run (paths, quarantine) and the comment's bot blocks, once the exam is known. */
async function judged(inputs: ActionInputs, deps: BotDeps, j: Judging): Promise<BotPlan> {
  const { ctx, pr, command, root, run, sections, finishers, exam } = j;
  const { client, logger, payload } = deps;
  const onPr = pr !== null && ctx.eventName !== "push";
  const plan = onPr ? await checkedPlan({ ...j.options, projectRoot: root }, { agentPrograms: false }) : null;

  // Suites the pull request cannot change the result of (paths:), skipped. A command runs all it asks for.
  const skipped =
    plan && pr && client && !command && ctx.eventName === "pull_request"
      ? await pathSkips(client, ctx, pr.number, plan.roots, payload, logger)
      : [];
  if (skipped.length) run.skipEvals = new Set(skipped.map((s) => s.evalPath));

  // The quarantine a PR is judged by: the base commit's (what the PR changes applies after merge).
  const untrusted = ctx.eventName === "pull_request" || ctx.eventName === "issue_comment";
  const { quarantine, changes } = await stepQuarantine({
    root,
    rel: path.relative(root, path.resolve(inputs.cwd, inputs.quarantineFile)),
    today: deps.today,
    exam,
    trustedPr: untrusted && inputs.trustPrGate,
    logger,
  });
  if (changes.length) run.quarantineChanges = changes;
  if (quarantine) run.gateExclude = gateExcludeOf(quarantine);
  if (exam && (plan?.cases.some((c) => c.exam) || plan?.exam?.files.length || changes.length))
    logger.info(
      `the pull request changes its exam; it is judged by ${exam.label}'s, and its changes apply after merge`,
    );

  const allSkipped = plan !== null && skipped.length > 0 && skipped.length === plan.roots.length;
  const makeSections = (rows: readonly WireIndexRow[], baseline: Bundle | undefined): string[] => {
    const out = [...sections];
    if (quarantine) {
      const text = quarantineSection(quarantineBlock(quarantine, rows, baseline?.rows));
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
    ...(command?.pendingCheck ? { pendingCheck: command.pendingCheck } : {}),
    ...(allSkipped
      ? {
          skipped: `the pull request changes none of the files the suites depend on (paths: of ${skipped.map((s) => s.evalPath).join(", ")})`,
          skipReport: { kind: "paths" as const },
        }
      : {}),
    sections: makeSections,
    finish,
    close: async () => {
      await exam?.close();
    },
  };
}
