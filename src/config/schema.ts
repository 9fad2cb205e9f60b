/**
 * The eval-file schema: the single source for validation, the TypeScript types of the raw file and
 * the JSON Schema editors use (`schema/eval.schema.json`, written by `npm run schema`).
 * Keys are snake_case, as users type them; `plan.ts` turns the validated file into camelCase.
 */
import { z } from "zod";
import { DURATION_PATTERN, DURATION_RANGE, durationInRange } from "./duration.js";
import { MAX_CONCURRENCY, MAX_REPEAT } from "./options.js";
import { SIZE_PATTERN } from "./size.js";

export const duration = z
  .union([
    z.string().regex(DURATION_PATTERN, 'a duration such as "90s", "20m" or "1h"'),
    z.number().positive(),
  ])
  .refine(durationInRange, DURATION_RANGE)
  .describe('A duration between 1s and 24h: "90s", "20m", "1h", "1h30m", "1500ms", or a number of seconds');

export const size = z
  .union([
    z.string().regex(SIZE_PATTERN, 'a size such as "10MiB", "100MB" or "512KB"'),
    z.number().int().positive(),
  ])
  .describe('A size: "10MiB", "100MB", "1.5GiB", "512KB", "100B", or a number of bytes');

const stringOrArgv = z
  .union([z.string().min(1), z.array(z.string()).min(1)])
  .describe("A shell command (run with sh -c) or an argv array (run without a shell)");

const rate = z.number().min(0).max(1);

export const SLUG_RULE = "ASCII letters, digits, '.', '_' and '-', starting with a letter or digit";

/**
 * The longest test id, target or scorer name: each becomes a file name (`scorers/<name>.log`, a
 * result folder, a workspace), and file systems take at most 255 bytes per name.
 */
export const MAX_NAME_LENGTH = 100;

/** A name that is safe as a file name in the bundle and readable in a comment. */
const slug = z
  .string()
  .max(MAX_NAME_LENGTH)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, SLUG_RULE);

/** The nearest name that follows SLUG_RULE, for the hint: "Café au lait/2" → "Cafe-au-lait-2". */
export function suggestSlug(text: string): string | undefined {
  const out = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .replace(/-+$/, "");
  return out || undefined;
}

/** Names of environment variables: never the runner's own secrets (checked again in plan.ts). */
const envNames = z
  .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"))
  .describe("Environment variables passed through from evalgate's environment");

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
          network: z
            .boolean()
            .optional()
            .describe(
              "Let the agent reach the network (auto: default true; bwrap: default false, no network at all)",
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
  verify_repeats: z
    .number()
    .int()
    .min(0)
    .max(20)
    .optional()
    .describe(
      "Run this scorer this many more times on each attempt's final workspace (overrides the test's; 0: never, not even automatically); if the attempt's verdict changes, it is a verifier_flake",
    ),
};

const commandLike = {
  run: stringOrArgv.describe("Runs in the workspace. {WORKSPACE} and {EVAL_DIR} are replaced"),
  cwd: z.string().optional().describe("Folder inside the workspace to run in"),
  env_passthrough: envNames.optional(),
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
      .describe(
        "The JUnit XML or CTRF JSON report(s) the command writes: a path or glob relative to cwd (default: the workspace); removed before the command runs",
      ),
    report_format: z
      .enum(["junit", "ctrf"])
      .optional()
      .describe("junit (XML) or ctrf (CTRF JSON); default: detected from each report's content"),
    fail_to_pass: z
      .array(z.string().min(1))
      .optional()
      .describe("Tests that must pass (a skipped or missing one does not); names as in the report"),
    pass_to_pass: z
      .array(z.string().min(1))
      .optional()
      .describe("Tests that must not fail (a missing one counts as failing)"),
  })
  .describe("Runs a test command and grades its JUnit XML report; without lists, every test must pass");

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

export const gitSeedSchema = z
  .strictObject({
    url: z.string().min(1).describe("A local path, file:// URL or https URL (never with credentials in it)"),
    ref: z
      .string()
      .min(1)
      .optional()
      .describe("Branch, tag, or full or short commit sha; a ref that does not exist is an error"),
    subdir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A folder of the repository: setup and the agent run there; the diff and scorers see the whole repository",
      ),
    token_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
      .optional()
      .describe("The environment variable holding a token for an https URL; used for the fetch only"),
  })
  .describe("A git repository at a ref");

export const archiveSeedSchema = z
  .union([
    z.string().min(1),
    z.strictObject({
      path: z
        .string()
        .min(1)
        .describe("The archive (.zip, .tar, .tar.gz or .tgz), relative to the eval file"),
      max_size: size.optional().describe("Largest archive file accepted (default 100MB)"),
      max_unpacked_size: size
        .optional()
        .describe("Largest total of unpacked file data accepted (default 500MB)"),
      max_entries: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("Most entries (files and folders) accepted (default 100000)"),
    }),
  ])
  .describe("A .zip, .tar, .tar.gz or .tgz file of this repository, checked before it is unpacked");

export const seedSchema = z
  .strictObject({
    path: z.string().min(1).optional().describe("A folder of this repository, copied"),
    git: gitSeedSchema.optional(),
    archive: archiveSeedSchema.optional(),
    empty: z.literal(true).optional().describe("Start from an empty repository"),
  })
  .describe("Where the workspace comes from: exactly one of path, git, archive, empty");

export const setupSchema = z.strictObject({
  command: stringOrArgv
    .optional()
    .describe("Platform setup: runs before the baseline commit, never part of the graded diff"),
  instructions: z
    .string()
    .optional()
    .describe("Agent setup: given to the agent with the task; part of the diff"),
  env_passthrough: envNames.optional(),
});

export const verifierSchema = z
  .strictObject({
    from: z
      .string()
      .min(1)
      .describe("A file or folder of this repository, relative to the eval file; the agent never sees it"),
    to: z
      .string()
      .min(1)
      .describe(
        "Where it goes in the workspace, relative to the repository root (also with a git seed's subdir), after the agent finished",
      ),
  })
  .describe("A hidden verifier: copied into the workspace only for the scorers");

export const workspaceSchema = z.strictObject({
  seed: seedSchema.optional(),
  setup: setupSchema.optional(),
  protected: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "Globs relative to the repository root, also with a git seed's subdir (\"test/**\"): restored from the baseline before scoring; a change by the agent marks the attempt tampered. A test's list replaces the file's",
    ),
  verifiers: z
    .array(verifierSchema)
    .optional()
    .describe(
      "Files copied into the workspace after the agent finished and protected paths were restored, fresh for every attempt. A test's list replaces the file's",
    ),
});

export const GATE_POLICIES = [
  "all_attempts_successful",
  "any_attempt_successful",
  "attempt_success_rate_at_least",
  "mean_pass_rate_at_least",
] as const;

export const ON_ERROR = ["fail", "exclude", "retry"] as const;
export const REGRESSIONS = ["fail", "warn", "ignore"] as const;

/** `repeat: N` (fixed) or `repeat: {min, max}` (adaptive: more attempts only while undecided). */
export const repeatSchema = z.union([
  z.number().int().min(1).max(MAX_REPEAT),
  z
    .strictObject({
      min: z.number().int().min(1).max(MAX_REPEAT).describe("Attempts every case gets"),
      max: z
        .number()
        .int()
        .min(1)
        .max(MAX_REPEAT)
        .describe("Attempts a case whose verdict is still open may reach"),
    })
    .refine((r) => r.max >= r.min, { message: "max must be at least min" }),
]);

export const gateSchema = z
  .strictObject({
    policy: z
      .enum(GATE_POLICIES)
      .optional()
      .describe("How a case's attempts become its verdict (default all_attempts_successful)"),
    min_rate: rate
      .optional()
      .describe(
        "For attempt_success_rate_at_least and mean_pass_rate_at_least: the rate a case needs, in [0, 1]",
      ),
    threshold: rate.optional().describe("The old name of min_rate (still accepted, with a warning)"),
    on_error: z
      .enum(ON_ERROR)
      .optional()
      .describe(
        "fail (default): an errored attempt makes the case an error; exclude: drop it; retry: run it again",
      ),
    retries: z
      .number()
      .int()
      .min(1)
      .max(10)
      .optional()
      .describe("With on_error: retry, tries per errored attempt"),
    min_case_pass_rate: rate.optional().describe("Share of cases whose verdict must be pass (default 1.0)"),
    regressions: z
      .union([
        z.enum(REGRESSIONS),
        z.strictObject({
          on: z.enum(REGRESSIONS).optional().describe("fail (default) | warn | ignore"),
          evidence: z
            .enum(["significant", "any"])
            .optional()
            .describe(
              "significant (default): the drop must be significant after Holm's correction; any: every flip",
            ),
          alpha: z.number().gt(0).lt(1).optional().describe("Family-wise significance level (default 0.05)"),
        }),
      ])
      .optional()
      .describe(
        "A case that passed on the baseline and fails now: fail (default) | warn | ignore, or {on, evidence, alpha}",
      ),
    on_inconclusive: z
      .enum(["pass", "warn", "fail"])
      .optional()
      .describe(
        "A case whose attempts did not settle its verdict: warn (default: follow the point estimate) | pass | fail",
      ),
    budget: z
      .strictObject({
        cost_usd: z.number().positive().optional(),
        tokens: z.number().int().positive().optional(),
        duration: duration.optional(),
      })
      .optional()
      .describe("Stop scheduling attempts and fail the run once a limit is exceeded"),
  })
  .describe("Gate policy: case verdicts and run-level rules");

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
    verify_repeats: z
      .number()
      .int()
      .min(0)
      .max(20)
      .optional()
      .describe(
        "Run the scorers this many more times on each attempt's final workspace; if they disagree with themselves the attempt is a verifier_flake, excluded from the agent's rate. Unset: 2 reruns only for an attempt that disagrees with every other attempt of its case so far (at least 2); 0: never",
      ),
    timeout: duration.optional().describe("Agent timeout for this test"),
    workspace: workspaceSchema.optional(),
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
    scorers: z.array(scorerSchema).optional().describe("Appended to every test's scorers"),
    tests: z.array(testEntrySchema),
  })
  .describe("An evalgate eval file (*.eval.yaml)");

/** A raw case file: a list of tests (or includes of further case files). */
export const caseFileSchema = z.array(testEntrySchema);

export type EvalFileInput = z.infer<typeof evalFileSchema>;
export type TargetInput = z.infer<typeof targetSchema>;
export type TestInput = z.infer<typeof testSchema>;
export type IncludeInput = z.infer<typeof includeSchema>;
export type ScorerInput = z.infer<typeof scorerSchema>;
export type WorkspaceInput = z.infer<typeof workspaceSchema>;
export type SeedInput = z.infer<typeof seedSchema>;
export type GateInput = z.infer<typeof gateSchema>;
