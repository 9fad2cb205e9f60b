/** The `reference` provider: applies the test's known-good patch, proving the test is solvable. */
import { appendFile, readFile } from "node:fs/promises";
import { execa } from "execa";
import { NO_MODEL_USAGE } from "./prices.js";
import type { AgentContext, AgentOutcome, Provider } from "./types.js";

export const referenceProvider: Provider = {
  async run(ctx: AgentContext): Promise<AgentOutcome> {
    const started = performance.now();
    const patchFile = ctx.test.reference!;
    const result = await execa("git", ["apply", "--whitespace=nowarn", "--verbose", patchFile], {
      cwd: ctx.workspace,
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
      outcome.error = `the reference patch (${size} bytes) does not apply to the baseline: ${text.trim().split("\n").slice(-2).join(" / ")}`;
    }
    return outcome;
  },
};
