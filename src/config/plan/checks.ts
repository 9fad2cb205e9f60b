/**
 * What the planner asks of the machine a plan will run on and of each scorer's own code. Config
 * reads no PATH, no environment and imports no scorer: the run's preflight (run/preflight.ts)
 * answers, and the planner reports the answers with file, line and key, together with every other
 * problem. A plan loaded without checks asks none of these questions.
 */
import { programOf } from "../../sandbox/commands.js";
import type { ScorerInput } from "../schema/scorers.js";
import type { CaseSpec, TargetSpec } from "../types.js";
import type { PlanContext } from "./context.js";

/** A mistake in a scorer's options, found before anything runs (`evalgate validate`). */
export interface ScorerProblem {
  /** The option's key below the scorer, e.g. ["pattern"]; the whole scorer when absent. */
  at?: (string | number)[];
  message: string;
  hint?: string;
}

export interface PlanChecks {
  /** What the schema cannot check in a scorer's options (each scorer's own check()). */
  scorer?(options: ScorerInput, evalDir: string): ScorerProblem[];
  /**
   * Why a program named beside the eval file (`{EVAL_DIR}/…` in a setup or scorer command) cannot
   * run here, or undefined when it can.
   */
  program?(program: string): string | undefined;
  /** Why the program an agent command starts cannot run here; absent: agents' programs are not checked. */
  agentProgram?(program: string): string | undefined;
  /** Whether a variable evalgate reads itself is set; absent: such variables are not checked. */
  variableSet?(name: string): boolean;
  /** Why no container engine can run an environment here, or undefined when one can. */
  containerEngine?(): string | undefined;
}

/** Programs of the agents that will run must exist (presets' binaries are checked at run time). */
export function checkAgentPrograms(ctx: PlanContext, targets: Iterable<TargetSpec>): void {
  const probe = ctx.checks.agentProgram;
  if (!probe) return;
  for (const target of targets) {
    if (!target.command) continue;
    const program = programOf(target.command);
    const why = program ? probe(program) : undefined;
    const origin = ctx.targetOrigins.get(target);
    if (why && origin) {
      ctx.problem(
        origin.src,
        [...origin.at, "command"],
        `the agent command of target "${target.name}" cannot run: ${why}`,
        "a command starting with ./ is relative to the eval file's folder; other programs are looked up on PATH",
      );
    }
  }
}

/** A judge's key is read by evalgate: without it every attempt would run its agent, then error. */
export function checkJudgeKeys(ctx: PlanContext, cases: readonly CaseSpec[]): void {
  const isSet = ctx.checks.variableSet;
  if (!isSet) return;
  for (const c of cases) {
    for (const scorer of c.test.scorers) {
      const name = scorer.options.type === "llm-judge" ? scorer.options.api_key_env : undefined;
      const origin = ctx.scorerOrigins.get(scorer);
      if (!name || isSet(name) || !origin) continue;
      ctx.problem(
        origin.src,
        [...origin.at, "api_key_env"],
        `${name} is not set, so the judge "${scorer.name}" cannot call its model`,
        `set ${name} in evalgate's environment (in a workflow: env: { ${name}: \${{ secrets.${name} }} })`,
      );
    }
  }
}
