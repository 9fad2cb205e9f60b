/**
 * Checks of commands and variable names shared by targets, setup and scorers: placeholders that
 * cannot be quoted, programs beside the eval file, and variables no eval file may pass or set.
 */
import {
  type Command,
  evalDirProgram,
  UNQUOTABLE_HINT,
  unknownPlaceholders,
  unquotablePlaceholders,
} from "../../sandbox/commands.js";
import { deniedVariable, EVALGATE_VARIABLES } from "../../sandbox/env.js";
import type { PathKey, YamlSource } from "../yaml.js";
import type { PlanContext } from "./context.js";

/** `{NAME}` placeholders a command may not use (`allowed` are the ones it may), with a hint. */
export function checkPlaceholders(
  ctx: PlanContext,
  src: YamlSource,
  at: PathKey[],
  command: Command,
  allowed: readonly string[],
  hint: (suggestion: string | undefined) => string,
): void {
  for (const u of unknownPlaceholders(command, allowed)) {
    ctx.problem(src, at, `unknown placeholder {${u.name}}`, hint(u.suggestion));
  }
}

/** Passthrough lists may not name the runner's own variables (its token, its runtime secrets). */
export function checkPassthrough(
  ctx: PlanContext,
  src: YamlSource,
  at: PathKey[],
  names: readonly string[] | undefined,
): void {
  (names ?? []).forEach((name, i) => {
    const why = deniedVariable(name);
    if (why) {
      ctx.problem(
        src,
        [...at, i],
        `${name} ${why}; it is never passed to agents, setup or scorers`,
        "pass a dedicated secret with its own name instead (for example MY_AGENT_API_KEY)",
      );
    }
  });
}

/** A shell command whose placeholder evalgate could not quote (see unquotablePlaceholders). */
export function checkQuotable(ctx: PlanContext, src: YamlSource, at: PathKey[], command: Command): void {
  for (const name of unquotablePlaceholders(command)) {
    ctx.problem(
      src,
      at,
      `{${name}} stands in a here-document or in a command substitution inside double quotes, where its value cannot be quoted and could run as shell code`,
      UNQUOTABLE_HINT,
    );
  }
}

/**
 * A setup or scorer command starting a program `{EVAL_DIR}/…` that does not exist or cannot run
 * (asked of the run's preflight: whether a file runs is a question about this machine).
 */
export function checkEvalDirProgram(
  ctx: PlanContext,
  src: YamlSource,
  at: PathKey[],
  command: Command,
  evalDir: string,
): void {
  const probe = ctx.checks.program;
  const program = probe ? evalDirProgram(command, evalDir) : undefined;
  const why = program ? probe?.(program) : undefined;
  if (why)
    ctx.problem(src, at, `the command cannot run: ${why}`, "{EVAL_DIR} is the folder of this eval file");
}

/** A target's fixed `env:` values may not impersonate the runner's variables or evalgate's own. */
export function checkFixedEnv(
  ctx: PlanContext,
  src: YamlSource,
  at: PathKey[],
  values: Record<string, string> | undefined,
): void {
  for (const name of Object.keys(values ?? {})) {
    const why =
      deniedVariable(name) ??
      ((EVALGATE_VARIABLES as readonly string[]).includes(name)
        ? "is set by evalgate for every attempt"
        : undefined);
    if (why) {
      ctx.problem(src, at, `${name} ${why}; env: cannot set it`, "give the value another name", name);
    }
  }
}
