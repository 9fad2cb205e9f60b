/**
 * `scorers:`: one schema per scorer type (the scorer's own code is in scorers/<type>.ts).
 */
import { z } from "zod";
import { duration, envNames, rate, slug, stringOrArgv, verifyRepeats } from "./values.js";

const scorerBase = {
  name: slug.optional().describe("Unique within the test; defaults to the scorer type"),
  weight: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe("Weights are all given and sum to 1.0, or all omitted"),
  required: z.boolean().optional().describe("The attempt fails when this scorer fails, whatever the score"),
  timeout: duration.optional().describe("Overrides timeouts.scorer for this scorer"),
  verify_repeats: verifyRepeats
    .optional()
    .describe(
      "Run this scorer this many more times on each attempt's final workspace (overrides the test's; 0: never, not even automatically); if the attempt's verdict changes, it is a verifier_flake",
    ),
};

const commandLike = {
  run: stringOrArgv.describe("Runs in the workspace. {WORKSPACE} and {EVAL_DIR} are replaced"),
  cwd: z.string().optional().describe("Folder inside the workspace to run in"),
  env_passthrough: envNames.optional(),
  network: z
    .boolean()
    .optional()
    .describe(
      "Let the command (and the agent's code it runs) reach the network where scorers run under bubblewrap (default false)",
    ),
  read_only: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "More folders the command may read where scorers run under bubblewrap, relative to the eval file (the eval file's folder, PATH and the system's are shown already)",
    ),
};

export const commandScorerSchema = z
  .strictObject({ type: z.literal("command"), ...scorerBase, ...commandLike })
  .describe("Exit status 0 scores 1.0, anything else 0.0");

export const scriptScorerSchema = z
  .strictObject({
    type: z.literal("script"),
    ...scorerBase,
    ...commandLike,
    pass_at: rate.optional().describe("The scorer passes when its score is at least this (default 1.0)"),
  })
  .describe('Prints "score=0.7" or JSON {"score", "pass", "reason"} on its last line');

export const fileScorerSchema = z
  .strictObject({
    type: z.literal("file"),
    ...scorerBase,
    path: z.string().min(1).describe("A file inside the workspace"),
    exists: z.boolean().optional().describe("true (default): the file must exist; false: it must not"),
    contains: z.string().optional().describe("Text the file must contain"),
    matches: z.string().optional().describe("A regular expression the file's text must match"),
  })
  .describe("Checks a file of the workspace after the agent ran");

export const diffScorerSchema = z
  .strictObject({
    type: z.literal("diff"),
    ...scorerBase,
    allow: z.array(z.string()).optional().describe("Globs: every changed file must match one"),
    deny: z.array(z.string()).optional().describe("Globs: no changed file may match one"),
    max_files: z.number().int().nonnegative().optional(),
    max_lines: z.number().int().nonnegative().optional().describe("Added plus deleted lines"),
    require_change: z.boolean().optional().describe("The agent must change at least one file"),
  })
  .describe("Checks the shape of the agent's diff");

export const testsScorerSchema = z
  .strictObject({
    type: z.literal("tests"),
    ...scorerBase,
    ...commandLike,
    report: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Without it (recommended), the command writes its report to {REPORT_FILE} (or $EVALGATE_REPORT_FILE; its folder {REPORT_DIR}): a fresh path outside the workspace per grading. With it: the JUnit XML, CTRF JSON or TAP report(s) the command writes in the workspace, a path or glob relative to cwd, removed before the command runs",
      ),
    report_format: z
      .enum(["junit", "ctrf", "tap"])
      .optional()
      .describe(
        "junit (XML), ctrf (CTRF JSON) or tap (TAP: tape, node --test --test-reporter=tap, mocha --reporter tap); default: detected from each report's content",
      ),
    fail_to_pass: z
      .array(z.string().min(1))
      .optional()
      .describe("Tests that must pass (a skipped or missing one does not); names as in the report"),
    pass_to_pass: z
      .array(z.string().min(1))
      .optional()
      .describe("Tests that must not fail (a missing one counts as failing)"),
  })
  .describe(
    "Runs a test command and grades its JUnit XML, CTRF or TAP report; without lists, every test must pass",
  );

export const AST_GREP_LANGUAGES = [
  "typescript",
  "tsx",
  "javascript",
  "html",
  "css",
  "python",
  "go",
  "rust",
  "java",
] as const;

export const astGrepScorerSchema = z
  .strictObject({
    type: z.literal("ast-grep"),
    ...scorerBase,
    pattern: z
      .string()
      .min(1)
      .describe("An ast-grep pattern: code with $VAR (one node) and $$$ (any number)"),
    selector: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a node kind such as call_expression")
      .optional()
      .describe(
        "A node kind: the pattern is then context code and only this node of it is matched (ast-grep's contextual pattern)",
      ),
    lang: z.enum(AST_GREP_LANGUAGES).describe("The language of the pattern and of the files searched"),
    path: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A folder, file or glob inside the workspace (default "."); folders give the language\'s files',
      ),
    exclude: z
      .array(z.string())
      .optional()
      .describe("Globs of files not to search (node_modules and .git never are)"),
    expect: z
      .enum(["present", "absent", "count"])
      .optional()
      .describe("present (default): at least one match; absent: none; count: between min and max"),
    min: z.number().int().nonnegative().optional().describe("With expect: count, the fewest matches allowed"),
    max: z.number().int().nonnegative().optional().describe("With expect: count, the most matches allowed"),
    only_changed: z.boolean().optional().describe("Search only the files the agent added or changed"),
  })
  .describe("Searches the workspace for an AST pattern with ast-grep");

export const llmJudgeScorerSchema = z
  .strictObject({
    type: z.literal("llm-judge"),
    ...scorerBase,
    rubric: z.string().min(1).optional().describe("What the judge checks (or rubric_file)"),
    rubric_file: z
      .string()
      .min(1)
      .optional()
      .describe("A file holding the rubric, relative to the eval file"),
    model: z.string().min(1).describe("The judge model, as the endpoint names it"),
    base_url: z
      .string()
      .regex(/^https?:\/\/[^\s]+$/, "an http(s) URL")
      .optional()
      .describe(
        "An OpenAI-compatible API; POST {base_url}/chat/completions (default https://api.openai.com/v1)",
      ),
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
      .optional()
      .describe("The variable holding the API key; read by evalgate, never given to agents"),
    max_diff_tokens: z
      .number()
      .int()
      .min(100)
      .optional()
      .describe("The diff is cut to about this many tokens (default 12000), and the prompt says so"),
    max_retries: z.number().int().min(0).max(10).optional().describe("Retries on 429 and 5xx (default 3)"),
    temperature: z.number().min(0).max(2).optional().describe("Default 0"),
    price: z
      .strictObject({
        input_per_mtok: z.number().nonnegative(),
        output_per_mtok: z.number().nonnegative(),
      })
      .optional()
      .describe("USD per million input and output tokens, to record the judge's cost"),
  })
  .describe('A model grades the diff against a rubric and answers {"score", "pass", "reason"}');

export const scorerSchema = z.discriminatedUnion("type", [
  commandScorerSchema,
  scriptScorerSchema,
  fileScorerSchema,
  diffScorerSchema,
  testsScorerSchema,
  astGrepScorerSchema,
  llmJudgeScorerSchema,
]);
export const SCORER_TYPES = ["command", "script", "file", "diff", "tests", "ast-grep", "llm-judge"] as const;

export type ScorerInput = z.infer<typeof scorerSchema>;
