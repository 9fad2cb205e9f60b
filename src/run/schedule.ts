/**
 * The scheduler: prepares each distinct baseline once, then runs every attempt of every case with a
 * concurrency limit. Attempts are interleaved (attempt 1 of every case, then attempt 2, ...), so a
 * run stopped early still holds comparable evidence for every case.
 */
import path from "node:path";
import pLimit from "p-limit";
import { ConfigError, type ConfigProblem } from "../config/errors.js";
import type { CaseSpec, Plan } from "../config/types.js";
import type { ProcessRunner } from "../sandbox/process.js";
import { BaselineStore, baselineKey, type PreparedBaseline, WorkspaceError } from "../workspace/baseline.js";
import { type AttemptInput, runAttempt } from "./attempt.js";
import { type AttemptResult, attemptDirName, type CaseRun } from "./types.js";

export interface RunHooks {
  /** The attempt's evidence folder inside the bundle. */
  evidenceDir(spec: CaseSpec, dirName: string): string;
  attemptStarted?(spec: CaseSpec, attempt: number, retry: number): void;
  /** Called as each attempt finishes (the bundle writes its records here). */
  attemptFinished(spec: CaseSpec, result: AttemptResult): Promise<void> | void;
  baselinePrepared?(spec: CaseSpec, baseline: PreparedBaseline): void;
}

export interface ExecuteOptions {
  plan: Plan;
  /** Scratch space for baselines and attempt workspaces (outside the user's checkout). */
  workRoot: string;
  runner: ProcessRunner;
  keepWorkspaces: boolean;
  hooks: RunHooks;
}

type BaselineOutcome = AttemptInput["baseline"];

function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 60);
}

/** Prepares every distinct baseline of the plan. A ref that does not exist is a ConfigError. */
async function prepareBaselines(
  opts: ExecuteOptions,
  store: BaselineStore,
): Promise<Map<string, BaselineOutcome>> {
  const limit = pLimit(Math.max(1, opts.plan.concurrency));
  const byKey = new Map<string, CaseSpec>();
  for (const c of opts.plan.cases) {
    const key = baselineKey(c.test.workspace, c.timeouts.setupMs);
    if (!byKey.has(key)) byKey.set(key, c);
  }
  const outcomes = new Map<string, BaselineOutcome>();
  const problems: ConfigProblem[] = [];
  await Promise.all(
    [...byKey.entries()].map(([key, c]) =>
      limit(async () => {
        try {
          const b = await store.prepare(c.test.workspace, c.timeouts.setupMs);
          outcomes.set(key, b);
          opts.hooks.baselinePrepared?.(c, b);
        } catch (error) {
          if (!(error instanceof WorkspaceError)) throw error;
          if (error.failure === "ref_not_found") {
            problems.push({
              file: c.identity.evalPath,
              key: `tests[${c.test.id}].workspace.seed.git.ref`,
              message: error.message,
              hint: "use a branch, tag or commit that exists in the repository",
            });
            return;
          }
          const failed: BaselineOutcome = {
            failure: error.failure === "setup" ? "setup" : "seed",
            message: error.message,
          };
          if (error.setupLog) failed.setupLog = error.setupLog;
          outcomes.set(key, failed);
        }
      }),
    ),
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return outcomes;
}

export async function executePlan(opts: ExecuteOptions): Promise<CaseRun[]> {
  const store = new BaselineStore(opts.workRoot, opts.runner);
  const baselines = await prepareBaselines(opts, store);
  const runs: CaseRun[] = opts.plan.cases.map((spec) => ({ spec, tries: [] }));
  const limit = pLimit(Math.max(1, opts.plan.concurrency));
  const maxRepeat = Math.max(...opts.plan.cases.map((c) => c.repeat));
  const tasks: Promise<void>[] = [];
  for (let attempt = 1; attempt <= maxRepeat; attempt++) {
    runs.forEach((run, caseIndex) => {
      if (attempt > run.spec.repeat) return;
      const spec = run.spec;
      const baseline = baselines.get(baselineKey(spec.test.workspace, spec.timeouts.setupMs))!;
      tasks.push(
        limit(async () => {
          const retry = 0;
          const dirName = attemptDirName(attempt, retry);
          opts.hooks.attemptStarted?.(spec, attempt, retry);
          const result = await runAttempt({
            spec,
            attempt,
            retry,
            baseline,
            workDir: path.join(opts.workRoot, "attempts", `${caseIndex}-${slug(spec.test.id)}`, dirName),
            evidenceDir: opts.hooks.evidenceDir(spec, dirName),
            dirName,
            runner: opts.runner,
            keepWorkspace: opts.keepWorkspaces,
          });
          run.tries.push(result);
          await opts.hooks.attemptFinished(spec, result);
        }),
      );
    });
  }
  await Promise.all(tasks);
  for (const run of runs) run.tries.sort((a, b) => a.attempt - b.attempt || a.retry - b.retry);
  return runs;
}
