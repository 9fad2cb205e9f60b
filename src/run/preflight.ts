/**
 * The run's preflight: what the planner asks (config/plan/checks.ts) and config cannot answer
 * itself: whether a program exists and runs on this machine (PATH, the executable bit, a script's
 * CRLF shebang), whether a variable is set in evalgate's environment, and each scorer's own check of
 * its options. Passed into loadPlan wherever a plan is loaded to run or to be validated, so that the
 * answers are reported with every other problem of the eval files, in one message.
 */
import { statSync } from "node:fs";
import type { PlanChecks } from "../config/plan/index.js";
import { findEngines } from "../environment/engine.js";
import { crlfShebang, findProgram } from "../sandbox/commands.js";
import { scorerFor } from "../scorers/index.js";

export interface PreflightOptions {
  /** Check that agent commands' programs exist (default true; `validate --solvable` runs no agent). */
  agentPrograms?: boolean;
  /**
   * Check that the variables evalgate reads itself (a judge's api_key_env) are set: a run checks,
   * `validate` does not (files are often linted where the secrets are not). Default false.
   */
  variables?: boolean;
  /** The environment evalgate runs with (default: its own). */
  env?: NodeJS.ProcessEnv;
}

export function preflight(options: PreflightOptions = {}): PlanChecks {
  const env = options.env ?? process.env;
  const program = (p: string) => programProblem(p, env.PATH ?? "");
  const checks: PlanChecks = {
    scorer: (scorer, evalDir) => scorerFor(scorer.type).check?.(scorer, evalDir) ?? [],
    program,
  };
  if (options.agentPrograms !== false) checks.agentProgram = program;
  if (options.variables) checks.variableSet = (name) => Boolean(env[name]);
  // Found on PATH here; whether it answers is asked once the run starts (environment/engine.ts).
  checks.containerEngine = () => {
    const found = findEngines(env);
    return typeof found === "string" ? found : undefined;
  };
  return checks;
}

/** Explains why a program cannot be run (looked up on `envPath`), or returns undefined when it can. */
export function programProblem(program: string, envPath = process.env.PATH ?? ""): string | undefined {
  const found = findProgram(program, envPath);
  if (found) return crlfShebang(found);
  if (program.includes("/")) {
    try {
      const s = statSync(program);
      if (s.isDirectory()) return `${program} is a folder, not a program`;
      return `${program} is not executable (chmod +x it, or run it through its interpreter)`;
    } catch {
      return `${program} does not exist`;
    }
  }
  return `"${program}" was not found on PATH`;
}
