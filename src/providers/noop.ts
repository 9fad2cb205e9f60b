/** The `noop` provider: changes nothing. A test that passes with it does not test the agent. */
import { appendFile } from "node:fs/promises";
import { NO_MODEL_USAGE } from "./prices.js";
import type { AgentContext, AgentOutcome, Provider } from "./types.js";

export const noopProvider: Provider = {
  async run(ctx: AgentContext): Promise<AgentOutcome> {
    await appendFile(ctx.logFile, "noop: no change made\n");
    return { exitCode: 0, signal: null, timedOut: false, durationMs: 0, tail: "", usage: NO_MODEL_USAGE };
  },
};
