/**
 * `targets:`: the agents under test.
 */
import { z } from "zod";
import { networkSchema } from "./environment.js";
import { duration, envNames, slug, stringOrArgv } from "./values.js";

export const PROVIDERS = ["command", "claude-code", "codex", "gemini-cli", "reference", "noop"] as const;
/** Providers that run a known agent CLI (docs/agents.md). */
export const PRESETS = ["claude-code", "codex", "gemini-cli"] as const;

export const targetSchema = z
  .strictObject({
    name: slug.describe("The target's name, shown in reports and part of each case's identity"),
    provider: z
      .enum(PROVIDERS)
      .describe(
        "How the agent is run: command (any program), a preset (claude-code, codex, gemini-cli), reference (the test's patch) or noop",
      ),
    command: stringOrArgv
      .optional()
      .describe(
        "For provider: command. Placeholders: {PROMPT} {PROMPT_FILE} {WORKSPACE} {OUTPUT_FILE} {ATTEMPT} {TEST_ID} {EVAL_DIR}",
      ),
    bin: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Presets: the agent's program (default claude, codex or gemini on PATH); ./ and ../ are relative to the eval file",
      ),
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+([-+][\w.-]+)?$/, "a version such as 2.1.332")
      .optional()
      .describe(
        "Presets: install this version of the agent CLI from npm, once per run, into a tool cache (RUNNER_TOOL_CACHE, else ~/.cache/evalgate/tools)",
      ),
    model: z.string().optional().describe("Model name, passed to presets and recorded in the bundle"),
    price: z
      .strictObject({
        input_per_mtok: z.number().nonnegative(),
        output_per_mtok: z.number().nonnegative(),
        cached_per_mtok: z.number().nonnegative().optional(),
      })
      .optional()
      .describe(
        "USD per million tokens, for an agent that reports tokens but no cost (default: evalgate's price table)",
      ),
    args: z.array(z.string()).optional().describe("Extra arguments appended to the agent's command line"),
    env: z.record(z.string(), z.string()).optional().describe("Fixed, non-secret environment values"),
    env_passthrough: envNames.optional(),
    timeout: duration.optional().describe("Agent timeout for this target (overrides timeouts.agent)"),
    sandbox: z
      .union([
        z.enum(["auto", "none", "bwrap"]),
        z.strictObject({
          type: z.enum(["auto", "none", "bwrap"]),
          network: networkSchema
            .optional()
            .describe(
              "What the agent may reach: true, false, or { allow: [host[:port], …] } (auto: default true; bwrap: default false, no network at all; an allow-list needs an environment)",
            ),
          read_only: z
            .array(z.string().min(1))
            .optional()
            .describe("With auto or bwrap: more folders the agent may read, relative to the eval file"),
        }),
      ])
      .optional()
      .describe(
        "auto (default): the strongest isolation this machine offers (bubblewrap, else a PID namespace or a subreaper); bwrap: bubblewrap or an error; none: no sandbox",
      ),
  })
  .describe("One agent under test");

export type TargetInput = z.infer<typeof targetSchema>;
