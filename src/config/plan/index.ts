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
import type { GateInput } from "../schema/gate.js";
import type { EvalRoot, Plan, RepeatSetting } from "../types.js";
import { checkDuplicateIds, expandCases } from "./cases.js";
import { checkAgentPrograms, checkJudgeKeys, type PlanChecks } from "./checks.js";
import { PlanContext } from "./context.js";
import { evalRootOf } from "./gate.js";
import { EvalFiles } from "./includes.js";
import type { LoadedEval, TestRecord } from "./records.js";
import { noCasesError, selectCases } from "./selection.js";
import { TargetResolver } from "./targets.js";

export type { PlanChecks, ScorerProblem } from "./checks.js";

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
   * The `gate:` block to use instead of the file's own, by evalPath (the base commit's, on a pull
   * request: github/trusted.ts). A key mapped to undefined means "no gate block": the defaults.
   */
  gateOverride?: ReadonlyMap<string, GateInput | undefined>;
  /** Root eval files (evalPath) not to run: a pull request touched none of their `paths:`. */
  skipEvals?: ReadonlySet<string>;
}

/** Loads, validates and resolves the eval files under `opts.paths` into a Plan. Throws ConfigError. */
export async function loadPlan(opts: PlanOptions): Promise<Plan> {
  const cwd = path.resolve(opts.cwd);
  const ctx = new PlanContext(cwd, path.resolve(opts.projectRoot ?? cwd), opts.checks);
  const files = new EvalFiles(ctx, new TargetResolver(ctx), opts.gateOverride);
  const found = await discoverEvalFiles(opts.paths, cwd, ctx.projectRoot);
  const loadedRoots = (await Promise.all(found.map((f) => files.load(f)))).filter(
    (l): l is LoadedEval => !!l,
  );
  const testsOfRoot = new Map<string, TestRecord[]>();
  for (const loaded of loadedRoots) testsOfRoot.set(loaded.src.path, await files.testsOf(loaded));

  const notes: string[] = [];
  const records: TestRecord[] = [];
  const roots: EvalRoot[] = [];
  for (const loaded of loadedRoots) {
    if (files.suiteFiles.has(path.resolve(loaded.src.path))) {
      notes.push(`${loaded.src.display} runs as a suite of the eval files that include it, not on its own`);
      continue;
    }
    if (opts.skipEvals?.has(loaded.evalPath)) continue;
    for (const r of testsOfRoot.get(loaded.src.path) ?? []) records.push(r);
    roots.push(evalRootOf(loaded));
  }

  checkDuplicateIds(ctx, records);
  const targetFilter = opts.targets && opts.targets.length > 0 ? new Set(opts.targets) : undefined;
  const expansion = await expandCases(ctx, records, {
    ...(opts.repeat !== undefined && { repeat: opts.repeat }),
    ...(targetFilter && { targetFilter }),
  });
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
  checkAgentPrograms(ctx, new Set([...selected.map((c) => c.target), ...expansion.unplanned]));
  checkJudgeKeys(ctx, selected);

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
  };
}
