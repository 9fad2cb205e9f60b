/**
 * The eval-file schema: the single source for validation, the TypeScript types of the raw file and
 * the JSON Schema editors use (`schema/eval.schema.json`, written by `npm run schema`).
 * Keys are snake_case, as users type them; the planner (config/plan/) turns the validated file into
 * camelCase. Its parts are beside it: targets, scorers, workspace, gate, and the shared values.
 */
import { z } from "zod";
import { MAX_CONCURRENCY } from "../options.js";
import { environmentSchema, resourcesSchema } from "./environment.js";
import { gateSchema, repeatSchema } from "./gate.js";
import { scorerSchema } from "./scorers.js";
import { targetSchema } from "./targets.js";
import { duration, rate, size, slug, verifyRepeats } from "./values.js";
import { workspaceSchema } from "./workspace.js";

export const testSchema = z
  .strictObject({
    id: slug.describe("Unique within the eval file"),
    description: z.string().optional(),
    instruction: z.string().min(1).optional(),
    instruction_file: z
      .string()
      .min(1)
      .optional()
      .describe("A file holding the instruction, relative to the eval file"),
    reference: z
      .union([
        z.string().min(1),
        z.strictObject({
          script: z
            .string()
            .min(1)
            .describe(
              "A script run in the workspace instead of applying a patch (e.g. a Harbor task's solution/solve.sh), relative to the eval file",
            ),
        }),
      ])
      .optional()
      .describe("A known-good patch (a path relative to the eval file), or { script: path } to run instead"),
    min_score: rate
      .optional()
      .describe(
        "An attempt passes when its score >= min_score and every required scorer passed (default 1.0)",
      ),
    threshold: rate.optional().describe("The old name of min_score (still accepted, with a warning)"),
    tags: z.array(z.string()).optional(),
    targets: z.array(z.string()).optional().describe("Run only these targets (by name)"),
    repeat: repeatSchema.optional(),
    verify_repeats: verifyRepeats
      .optional()
      .describe(
        "Run the scorers this many more times on each attempt's final workspace; if they disagree with themselves the attempt is a verifier_flake, excluded from the agent's rate. Unset: 2 reruns only for an attempt that disagrees with every other attempt of its case so far (at least 2); 0: never",
      ),
    timeout: duration.optional().describe("Agent timeout for this test"),
    workspace: workspaceSchema.optional(),
    environment: environmentSchema.optional().describe("The image this test runs in (replaces the file's)"),
    resources: resourcesSchema.optional().describe("This test's limits (each key replaces the file's)"),
    scorers: z.array(scorerSchema).optional(),
  })
  .describe("One scenario");

export const includeSchema = z.strictObject({
  include: z.string().min(1).describe("A file or glob, relative to this eval file"),
  type: z
    .enum(["tests", "suite"])
    .optional()
    .describe(
      "tests (default): raw cases that take this file's defaults; suite: an eval file that keeps its own",
    ),
});

export const testEntrySchema = z.union([includeSchema, testSchema]);

export const evalFileSchema = z
  .strictObject({
    $schema: z.string().optional(),
    name: z.string().min(1).optional(),
    description: z.string().optional(),
    tags: z.record(z.string(), z.string()).optional().describe("Run metadata recorded in the bundle"),
    targets: z.array(targetSchema).optional(),
    repeat: repeatSchema
      .optional()
      .describe("Attempts per (test, target): N, or {min, max} for adaptive attempts; default 1"),
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(MAX_CONCURRENCY)
      .optional()
      .describe("Attempts at once; default: CPU count"),
    timeouts: z
      .strictObject({ setup: duration.optional(), agent: duration.optional(), scorer: duration.optional() })
      .optional(),
    limits: z
      .strictObject({
        diff: size
          .optional()
          .describe(
            "diff.patch is stored up to this size, cut with a marker and flagged beyond (default 10MiB)",
          ),
        log: size
          .optional()
          .describe("Each agent and scorer log keeps this much: its first and last part (default 5MiB)"),
      })
      .optional()
      .describe("Size limits of the evidence an attempt keeps"),
    gate: gateSchema.optional(),
    paths: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Globs of the files this suite's result depends on (prompts, skills, the agent's code, fixtures); a pull request touching none of them (nor this file) skips the suite",
      ),
    workspace: workspaceSchema.optional(),
    environment: environmentSchema.optional(),
    resources: resourcesSchema.optional(),
    scorers: z.array(scorerSchema).optional().describe("Appended to every test's scorers"),
    tests: z.array(testEntrySchema),
  })
  .describe("An evalgate eval file (*.eval.yaml)");

/** A raw case file: a list of tests (or includes of further case files). */
export const caseFileSchema = z.array(testEntrySchema);

export type EvalFileInput = z.infer<typeof evalFileSchema>;
export type TestInput = z.infer<typeof testSchema>;
export type IncludeInput = z.infer<typeof includeSchema>;
