/**
 * The bot around a run: what the event asks for (a `/evalgate` command in a PR comment, a label),
 * who may ask, which suites a pull request can change the result of (`paths:`), and the rules it is
 * judged by (the base commit's gate and quarantine). It decides before the run and reports after
 * it: reactions, the "requested by" line, quarantine and skip sections, a commit status, label
 * removal. A `/evalgate run` command is read in bot-command.ts. Nothing here runs evals: the run
 * mode (modes/run.ts) runs them with the options the bot adds.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { type Bundle, rowKey } from "../bundle/read.js";
import type { WireIndexRow } from "../bundle/wire.js";
import type { Plan } from "../config/types.js";
import { UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import { type OpenExam, openExam } from "../pipeline/exam.js";
import { checkedPlan } from "../pipeline/plan.js";
import type { RunOptions } from "../pipeline/run.js";
import { type QuarantineBlock, quarantineSection, skippedSection } from "../report/bot.js";
import { repositoryRoot } from "../workspace/git.js";
import { type CommandRequest, commandRequest, type Outcome, obj, type PrFacts, str } from "./bot-command.js";
import { bestEffort, explainApiError, type GitHubClient } from "./client.js";
import type { EventContext } from "./context.js";
import { type ActionInputs, checkWorkingDirectory } from "./inputs.js";
import { activeEntry, applyQuarantine, parseQuarantine, type Quarantine } from "./quarantine.js";
import { EXAM_FIX, tarballApi, trustedQuarantine } from "./trusted.js";

type Json = Record<string, unknown>;

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
  finish(outcome: Outcome, detailsUrl?: string): Promise<void>;
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
        await bestEffort(logger, `removing the label ${name}`, "pull-requests: write", () =>
          client.rest.issues.removeLabel({ owner: ctx.owner, repo: ctx.repo, issue_number: n, name }),
        );
      });
    }
  }

  // The run's own options, as the bot leaves them; a first look at the plan finds suites and paths.
  const options = { ...inputs.mode.options, ...run };
  const root = await repositoryRoot(options.cwd);
  const exam = await examOfPullRequest(inputs, ctx, pr, root, deps);
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

/**
 * The exam a pull request is judged by: its base commit's (docs/exam.md), on `pull_request` and on
 * comment commands, unless trust-pr-gate. Not in the merge queue: a PR gets there only after its own
 * check, judged by the base's exam, passed; nor on push: the pushed commit is the base.
 */
async function examOfPullRequest(
  inputs: ActionInputs,
  ctx: EventContext,
  pr: PrFacts | null,
  root: string,
  deps: BotDeps,
): Promise<OpenExam | null> {
  const untrusted = ctx.eventName === "pull_request" || ctx.eventName === "issue_comment";
  if (!untrusted || !pr?.baseSha || inputs.trustPrGate) return null;
  const client = deps.client;
  return openExam(
    root,
    {
      ref: pr.baseSha,
      name: "the base commit",
      ...(client ? { tarball: tarballApi(client, ctx) } : {}),
      fix: EXAM_FIX,
    },
    deps.logger,
  );
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

/** Suites the pull request cannot change the result of (paths:), skipped. A command runs all it asks for. */
async function skippedByPaths(
  j: Judging,
  plan: Plan | null,
  deps: BotDeps,
): Promise<{ name: string; evalPath: string; paths: string[] }[]> {
  const { ctx, pr, command } = j;
  const client = deps.client;
  if (!plan || !pr || !client || command || ctx.eventName !== "pull_request") return [];
  const withPaths = plan.roots.filter((r) => r.paths?.length);
  if (!withPaths.length) return [];
  const files = await changedFiles(client, ctx, pr.number).catch((error: unknown) => {
    throw new UsageError(
      explainApiError(error, `listing the files of PR #${pr.number}`, "pull-requests: read"),
    );
  });
  const skipped = withPaths
    .filter((r) => {
      const isMine = picomatch([...r.paths!, r.evalPath], { dot: true });
      return !files.some((f) => isMine(f));
    })
    .map((r) => ({ name: r.name, evalPath: r.evalPath, paths: r.paths! }));
  if (skipped.length) {
    j.run.skipEvals = new Set(skipped.map((s) => s.evalPath));
    deps.logger.info(
      `skipping ${skipped.map((s) => s.evalPath).join(", ")}: the pull request changes none of their paths`,
    );
  }
  return skipped;
}

/** The quarantine: the base commit's with an exam from it (what the PR changes applies after merge). */
async function quarantineOf(j: Judging, inputs: ActionInputs, deps: BotDeps): Promise<Quarantine | null> {
  const qRel = path.relative(j.root, path.resolve(inputs.cwd, inputs.quarantineFile));
  if (j.exam) {
    const tq = await trustedQuarantine(j.root, j.exam, qRel, deps.today);
    if (tq.changes.length) j.run.quarantineChanges = tq.changes;
    return tq.quarantine;
  }
  const text = await readFile(path.join(j.root, qRel), "utf8").catch(() => null);
  return text === null ? null : parseQuarantine(text, qRel, deps.today);
}

/** The rules of the run (paths, quarantine) and the comment's bot blocks, once the exam is known. */
async function judged(inputs: ActionInputs, deps: BotDeps, j: Judging): Promise<BotPlan> {
  const { ctx, pr, sections, finishers, exam } = j;
  const onPr = pr !== null && ctx.eventName !== "push";
  const plan = onPr
    ? await checkedPlan({ ...j.options, projectRoot: j.root }, { agentPrograms: false })
    : null;
  const skipped = await skippedByPaths(j, plan, deps);
  const quarantine = await quarantineOf(j, inputs, deps);
  if (quarantine) {
    const q = quarantine;
    j.run.gateExclude = (row) => activeEntry(q, row) !== undefined;
  }
  if (exam && (plan?.cases.some((c) => c.exam) || plan?.exam?.files.length || j.run.quarantineChanges))
    deps.logger.info(
      `the pull request changes its exam; it is judged by ${exam.label}'s, and its changes apply after merge`,
    );

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
    run: j.run,
    ...(allSkipped
      ? {
          skipped: `the pull request changes none of the files the suites depend on (paths: of ${skipped.map((s) => s.evalPath).join(", ")})`,
          skippedByPaths: { sections: [] },
        }
      : {}),
    sections: makeSections,
    finish,
    close: async () => {
      await exam?.close();
    },
  };
}
