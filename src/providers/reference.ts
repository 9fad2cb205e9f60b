/**
 * The `reference` provider: applies the test's known-good patch, or runs its reference script
 * (`reference: { script }`) in the workspace, proving the test is solvable.
 */
import { constants } from "node:fs";
import { access, appendFile, readFile } from "node:fs/promises";
import { execa } from "execa";
import { NO_MODEL_USAGE } from "./prices.js";
import type { AgentContext, AgentOutcome, Provider } from "./types.js";

/** Runs the script like an agent: in the agent's folder, its environment, its timeout, its log. */
async function runScript(ctx: AgentContext, script: string): Promise<AgentOutcome> {
  // An executable script runs with its own interpreter (#!/bin/bash); another one with sh.
  const executable = await access(script, constants.X_OK).then(
    () => true,
    () => false,
  );
  const outcome = await ctx.runner.run({
    command: { argv: executable ? [script] : ["/bin/sh", script] },
    cwd: ctx.workspace,
    env: ctx.env,
    timeoutMs: ctx.timeoutMs,
    logFile: ctx.logFile,
  });
  const result: AgentOutcome = {
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    timedOut: outcome.timedOut,
    durationMs: outcome.durationMs,
    tail: outcome.tail,
    usage: NO_MODEL_USAGE,
  };
  if (outcome.spawnError) {
    result.error = `the reference script could not start: ${outcome.spawnError}`;
    result.infrastructure = "the reference script could not be started";
  } else if (outcome.exitCode !== 0 && !outcome.timedOut) {
    result.error = `the reference script exited ${outcome.exitCode ?? outcome.signal}: ${outcome.tail.trim().split("\n").slice(-2).join(" / ")}`;
  }
  return result;
}

export const referenceProvider: Provider = {
  async run(ctx: AgentContext): Promise<AgentOutcome> {
    if (ctx.test.referenceKind === "script") return runScript(ctx, ctx.test.reference!);
    const started = performance.now();
    const patchFile = ctx.test.reference!;
    const result = await execa("git", ["apply", "--whitespace=nowarn", "--verbose", patchFile], {
      // The patch is a diff of the whole repository, whatever folder the agent works in.
      cwd: ctx.repoRoot,
      env: ctx.env,
      extendEnv: false,
      reject: false,
      all: true,
    });
    const text = String(result.all ?? "");
    await appendFile(ctx.logFile, `$ git apply ${patchFile}\n${text}\n`);
    const outcome: AgentOutcome = {
      exitCode: result.exitCode ?? null,
      signal: null,
      timedOut: false,
      durationMs: Math.round(performance.now() - started),
      tail: text.slice(-4096),
      usage: NO_MODEL_USAGE,
    };
    if (result.exitCode !== 0) {
      const size = (await readFile(patchFile)).length;
      outcome.error = `the reference patch (${size} bytes) does not apply to the start commit: ${text.trim().split("\n").slice(-2).join(" / ")}`;
    }
    return outcome;
  },
};
