/**
 * Eval files → the resolved Plan: the entry of the eval-file stage. Every problem of every file is
 * collected and reported together, before anything runs. The parts, by concern: includes.ts (files
 * and their includes), targets.ts, workspace.ts and guards.ts, scorers.ts, gate.ts, cases.ts (tests ×
 * targets), selection.ts (the run's filters) and checks.ts (what the run's preflight answers).
 */
import os from "node:os";
import path from "node:path";
import { discoverEvalFiles } from "../discover.js";
import type { OptionNaming } from "../options.js";
import type { EvalRoot, Plan, PlanExam, RepeatSetting } from "../types.js";
import { checkDuplicateIds, type ExpandOptions, type Expansion, expandCases } from "./cases.js";
import { checkAgentPrograms, checkJudgeKeys, type PlanChecks } from "./checks.js";
import { PlanContext } from "./context.js";
import { checkEnvironments } from "./environment.js";
import { type ExamSource, loadWithExam } from "./exam.js";
import { EvalFiles } from "./includes.js";
import { noCasesError, selectCases } from "./selection.js";
import { loadSide } from "./sides.js";
import { TargetResolver } from "./targets.js";

export type { PlanChecks, ScorerProblem } from "./checks.js";
export type { ExamSource } from "./exam.js";

export interface PlanOptions {
  cwd: string;
  /** Identities use paths relative to this folder (the repository root). Default: cwd. */
  projectRoot?: string;
  paths: readonly string[];
  /** --target: run only these targets. */
  targets?: readonly string[];
  /** --test: run only tests whose id (or `suite/id`) matches one of these globs. */
  tests?: readonly string[];
  /** --tag: run only tests carrying one of these tags. */
  tags?: readonly string[];
  repeat?: RepeatSetting;
  concurrency?: number;
  /** How the user spelled the options, for messages: the CLI's flags or the action's inputs. */
  naming: OptionNaming;
  /**
   * The questions only the run can answer (programs on this machine, variables, each scorer's own
   * check): run/preflight.ts. Without them the plan is checked as far as the eval files go.
   */
  checks?: PlanChecks;
  /**
   * Where the exam (everything that grades) is read from: another commit's files, on a pull request
   * its base's (config/plan/exam.ts, docs/exam.md). Absent: the checkout's own eval files.
   */
  exam?: ExamSource;
  /** Root eval files (evalPath) not to run: a pull request touched none of their `paths:`. */
  skipEvals?: ReadonlySet<string>;
}

interface Loaded {
  roots: EvalRoot[];
  expansion: Expansion;
  notes: string[];
  exam?: PlanExam;
  answerKeys?: string[];
}

/** The checkout's own eval files: the exam and the thing under test alike. */
async function loadOwn(
  ctx: PlanContext,
  targets: TargetResolver,
  opts: PlanOptions,
  expand: ExpandOptions,
): Promise<Loaded> {
  const found = await discoverEvalFiles(opts.paths, ctx.cwd);
  const side = await loadSide(ctx, new EvalFiles(ctx, targets), found, opts.skipEvals);
  checkDuplicateIds(ctx, side.records);
  return { roots: side.roots, expansion: await expandCases(ctx, side.records, expand), notes: side.notes };
}

/** Loads, validates and resolves the eval files under `opts.paths` into a Plan. Throws ConfigError. */
export async function loadPlan(opts: PlanOptions): Promise<Plan> {
  const cwd = path.resolve(opts.cwd);
  const ctx = new PlanContext(cwd, path.resolve(opts.projectRoot ?? cwd), opts.checks);
  const targets = new TargetResolver(ctx);
  const targetFilter = opts.targets && opts.targets.length > 0 ? new Set(opts.targets) : undefined;
  const expand: ExpandOptions = {
    ...(opts.repeat !== undefined && { repeat: opts.repeat }),
    ...(targetFilter && { targetFilter }),
  };
  const loaded = opts.exam
    ? await loadWithExam(ctx, targets, opts.exam, opts.paths, expand, opts.skipEvals)
    : await loadOwn(ctx, targets, opts, expand);
  const { roots, expansion, notes } = loaded;
  const selected = selectCases(
    ctx,
    expansion,
    {
      ...(targetFilter && { targets: targetFilter }),
      ...(opts.tests && { tests: opts.tests }),
      ...(opts.tags && { tags: opts.tags }),
    },
    opts.naming,
  );
  // An agent in an environment runs the image's program, not one of this machine's.
  const onHost = selected.filter((c) => !c.environment).map((c) => c.target);
  checkAgentPrograms(ctx, new Set([...onHost, ...expansion.unplanned]));
  checkJudgeKeys(ctx, selected);
  checkEnvironments(ctx, selected);

  ctx.problems.throwIfAny();
  if (selected.length === 0) throw noCasesError(expansion, opts.naming);
  const concurrencies = roots.map((r) => r.concurrency).filter((c): c is number => c !== undefined);
  const concurrency =
    opts.concurrency ?? (concurrencies.length > 0 ? Math.min(...concurrencies) : os.availableParallelism());
  return {
    projectRoot: ctx.projectRoot,
    roots,
    cases: selected,
    concurrency,
    notes: [...ctx.notes, ...notes],
    ...(loaded.exam ? { exam: loaded.exam } : {}),
    ...(loaded.answerKeys?.length ? { answerKeys: loaded.answerKeys } : {}),
    tips: [...ctx.tips.values()],
  };
}
