/**
 * The output contract of `command` agents (docs/agents.md): a custom agent may write JSON to
 * `{OUTPUT_FILE}` (also in $EVALGATE_OUTPUT_FILE) with what it used and whether it failed:
 *
 *   { "usage": { "input_tokens": 1200, "output_tokens": 340, "cached_tokens": 0,
 *                "turns": 4, "tool_calls": 6, "model": "my-model" },
 *     "cost_usd": 0.0123, "agent_version": "1.4.0", "error": null }
 *
 * Every field is optional; unknown fields are ignored. A malformed file is a warning recorded on the
 * attempt, never a crash and never a guess: what cannot be read is left unknown.
 */
import { lstat, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { withCost } from "./prices.js";
import type { Usage } from "./types.js";

const MAX_BYTES = 1024 * 1024;
const count = z.number().int().nonnegative().nullable();

export const outputFileSchema = z.looseObject({
  usage: z
    .looseObject({
      input_tokens: count.optional(),
      output_tokens: count.optional(),
      cached_tokens: count.optional(),
      turns: count.optional(),
      tool_calls: count.optional(),
      model: z.string().nullable().optional(),
    })
    .nullable()
    .optional(),
  cost_usd: z.number().nonnegative().nullable().optional(),
  agent_version: z.string().nullable().optional(),
  error: z.string().nullable().optional(),
});

export interface AgentReport {
  /** The copy of the file kept in the evidence folder. */
  copy?: string;
  usage?: Usage;
  /** A failure the agent reported (an API error, a rate limit): the attempt is an error. */
  error?: string;
  warnings: string[];
}

/** File name of the copy kept in the attempt's evidence folder. */
export const OUTPUT_COPY = "agent-output.json";

/**
 * Reads the agent's output file, if it wrote one, and keeps a copy as evidence. `model` and
 * `price` complete the usage with a cost when the agent gave tokens but no cost.
 */
export async function readAgentReport(
  file: string,
  evidenceDir: string,
  fallback: { model?: string; price?: Parameters<typeof withCost>[1] },
): Promise<AgentReport> {
  const name = "{OUTPUT_FILE}";
  let size: number;
  try {
    // lstat: the agent is untrusted, and evalgate must not follow a link it planted to a file the
    // agent itself may not read (and copy that into the bundle), nor block on a FIFO.
    const s = await lstat(file);
    if (!s.isFile()) {
      const what = s.isSymbolicLink() ? "a symbolic link" : "a special file";
      return { warnings: [`${name} is not a regular file (${what}); it was ignored`] };
    }
    size = s.size;
  } catch {
    return { warnings: [] };
  }
  if (size === 0) return { warnings: [] };
  if (size > MAX_BYTES) {
    return { warnings: [`${name} is ${size} bytes; it is ignored above ${MAX_BYTES} bytes`] };
  }
  const text = await readFile(file, "utf8");
  await writeFile(path.join(evidenceDir, OUTPUT_COPY), text);
  const copy = OUTPUT_COPY;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { copy, warnings: [`${name} is not valid JSON (${(error as Error).message}); usage is unknown`] };
  }
  const parsed = outputFileSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join(".") || "(top level)"}: ${i.message}`)
      .join("; ");
    return {
      copy,
      warnings: [`${name} does not follow the output contract (${issues}); usage is unknown`],
    };
  }
  const o = parsed.data;
  const report: AgentReport = { copy, warnings: [] };
  if (o.error) report.error = o.error;
  const u = o.usage ?? null;
  const anything =
    u !== null ||
    (o.cost_usd !== undefined && o.cost_usd !== null) ||
    (o.agent_version !== undefined && o.agent_version !== null);
  if (anything) {
    report.usage = withCost(
      {
        inputTokens: u?.input_tokens ?? null,
        outputTokens: u?.output_tokens ?? null,
        cachedTokens: u?.cached_tokens ?? null,
        costUsd: o.cost_usd ?? null,
        turns: u?.turns ?? null,
        toolCalls: u?.tool_calls ?? null,
        model: u?.model ?? fallback.model ?? null,
        agentVersion: o.agent_version ?? null,
      },
      fallback.price,
    );
  }
  return report;
}
