/** The `command` provider: any program, given the task through placeholders. */

import type { Command } from "../sandbox/commands.js";
import { expandPlaceholders, shellQuote } from "../sandbox/commands.js";
import { readAgentReport } from "./output-file.js";
import type { AgentContext, AgentOutcome, Provider } from "./types.js";

export function agentPlaceholders(ctx: AgentContext): Record<string, string> {
  return {
    PROMPT: ctx.prompt,
    PROMPT_FILE: ctx.promptFile,
    WORKSPACE: ctx.workspace,
    OUTPUT_FILE: ctx.outputFile,
    ATTEMPT: String(ctx.attempt),
    TEST_ID: ctx.test.id,
    EVAL_DIR: ctx.evalDir,
  };
}

function withArgs(command: Command, args: readonly string[]): Command {
  if (args.length === 0) return command;
  if ("argv" in command) return { argv: [...command.argv, ...args] };
  return { shell: `${command.shell} ${args.map(shellQuote).join(" ")}` };
}

export const commandProvider: Provider = {
  async run(ctx: AgentContext): Promise<AgentOutcome> {
    const command = withArgs(
      expandPlaceholders(ctx.target.command!, agentPlaceholders(ctx)),
      ctx.target.args,
    );
    const outcome = await ctx.runner.run({
      command,
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
    };
    if (outcome.spawnError) {
      result.error = `the agent command could not start: ${outcome.spawnError}`;
      result.infrastructure = "the agent could not be started";
      return result;
    }
    const report = await readAgentReport(ctx.outputFile, ctx.evidenceDir, {
      ...(ctx.target.model ? { model: ctx.target.model } : {}),
      ...(ctx.target.price ? { price: ctx.target.price } : {}),
    });
    if (report.copy) result.agentOutput = report.copy;
    if (report.usage) result.usage = report.usage;
    if (report.warnings.length > 0) result.warnings = report.warnings;
    if (report.error && !outcome.timedOut) result.error = `the agent reported an error: ${report.error}`;
    return result;
  },
};
