/**
 * The zod schemas of the bundle's JSON files: summary.json, a row of index.jsonl and a case's
 * summary.json. They are the one source of the wire types (bundle/wire.ts infers them), of the
 * check a bundle read from disk passes (a baseline or a shard may be a downloaded artifact), and
 * of the JSON Schemas published beside the eval file's (schema/, scripts/write-schema.mjs).
 *
 * Objects are loose: a field a newer evalgate added passes through. A field that bundles written
 * before it existed lack is optional; every other field must be there with its type. The report
 * view reads case summaries more leniently (decision 0066), field by field, so that a damaged
 * bundle still renders.
 */
import { z } from "zod";
import type { GatePolicy, OnError } from "../config/types.js";
import type { FailureKind } from "../run/types.js";
import { environmentSchema, resourcesSchema } from "./wire-environment-schema.js";
import { admissionSchema, changeSchema, historyRunSchema } from "./wire-history-schema.js";
import { countsSchema, targetRollupSchema, usageTotalsSchema } from "./wire-rollup-schema.js";

export { admissionSchema, changeSchema, historyRunSchema };

export { countsSchema, environmentSchema, resourcesSchema, targetRollupSchema, usageTotalsSchema };

export const SUMMARY_SCHEMA = "evalgate.summary/v1";
export const CASE_SCHEMA = "evalgate.case/v1";

const count = z.number().int().min(0);
const rate = z.number().min(0).max(1).nullable();
const texts = z.array(z.string());
const strMap = z.record(z.string(), z.string());
const verdict = z.enum(["pass", "fail", "error"]);
const classification = z.enum([
  "stable_pass",
  "stable_fail",
  "flaky",
  "verifier_flake",
  "infrastructure_failure",
  "timeout",
  "mixed_error",
]);
const status = z.enum(["passed", "failed", "timeout", "error"]);
const evidence = z.enum(["decided", "inconclusive"]);
const failureKind = z.enum([
  "quality",
  "empty_diff",
  "tampered",
  "agent_timeout",
  "agent_exit",
  "scorer_error",
  "scorer_timeout",
  "verifier_flake",
  "setup_error",
  "workspace_error",
  "budget_exceeded",
  "cancelled",
  "memory_limit",
  "pids_limit",
  "disk_limit",
] as const satisfies readonly FailureKind[]);
const policyName = z.enum([
  "all_attempts_successful",
  "any_attempt_successful",
  "attempt_success_rate_at_least",
  "mean_pass_rate_at_least",
] as const satisfies readonly GatePolicy[]);
const onError = z.enum(["fail", "exclude", "retry"] as const satisfies readonly OnError[]);

const identity = { eval_path: z.string().min(1), test_id: z.string().min(1), target: z.string().min(1) };

/**
 * How a case stands to the exam read from another commit (docs/exam.md): proposed (new in the
 * checkout, run from its own definition, never gating), changed (judged by the exam's definition;
 * `changes` names what the checkout changes), removed (the checkout no longer has it; run all the same).
 */
export const caseExamSchema = z.looseObject({
  status: z.enum(["proposed", "changed", "removed"]),
  changes: texts,
});

/** Where the run's exam was read from, and what the checkout changes in it (applies after merge). */
export const examSchema = z.looseObject({
  /** The commit the exam was read from. */
  sha: z.string(),
  /** The ref as given (`--exam-from`, or the pull request's base commit). */
  ref: z.string(),
  /** Eval files the checkout adds, removes, or whose gate or paths it changes. */
  files: z.array(
    z.looseObject({
      eval_path: z.string(),
      change: z.enum(["added", "removed", "changed"]),
      changes: texts,
    }),
  ),
  /** What the checkout changes in the quarantine file (entries added or lifted). */
  quarantine: texts,
  /** Cases of each kind (index.jsonl `exam` says which). */
  proposed: count,
  changed: count,
  removed: count,
});

/** One line of index.jsonl: a case, its verdict and where its files are. */
export const indexRowSchema = z.looseObject({
  ...identity,
  suite: z.string(),
  /** The root eval file whose gate governs this case (a wrapper, or eval_path itself). */
  root_eval_path: z.string().min(1),
  provider: z.string(),
  model: z.string().nullable(),
  tags: texts,
  verdict,
  classification,
  flaky: z.boolean(),
  reason: z.string(),
  /** Whether the attempts settled the verdict (absent in older bundles: decided). */
  evidence: evidence.optional(),
  /** For an inconclusive case: the attempts a fresh run would likely need to settle it, if known. */
  settle_attempts: count.nullable().optional(),
  /**
   * What makes the case's attempts comparable across runs (its exam and agent, hashed:
   * config/fingerprint.ts); base runs with another key are another history. Absent in older bundles.
   */
  history_key: z.string().optional(),
  /** The schedule the attempts followed: adaptive {min, max}, or null for a fixed repeat. */
  repeat: z.looseObject({ min: count, max: count }).nullable().optional(),
  /** Whether its verdict gates (absent in older bundles: it did). */
  admission: admissionSchema.optional(),
  attempts: countsSchema,
  attempt_success_rate: rate,
  mean_score: z.number().nullable(),
  mean_pass_rate: z.number().nullable(),
  /** What the case's attempts used (retries included), or null when no agent ran. */
  usage: usageTotalsSchema.nullable(),
  /** Relative to the bundle root. */
  result_dir: z.string().min(1),
  summary_path: z.string().min(1),
  runs: z.array(
    z.looseObject({
      attempt: count,
      retry: count,
      status,
      failure_kind: z.string().nullable(),
      /** diff.patch was cut at limits.diff. */
      diff_truncated: z.boolean(),
      dir: z.string(),
      result_path: z.string(),
      grading_path: z.string().nullable(),
      diff_path: z.string().nullable(),
    }),
  ),
  change: changeSchema.nullable(),
  /** Set when the exam came from another commit and the case is not as it has it (absent: as it has it). */
  exam: caseExamSchema.nullable().optional(),
});

/** One try of a case, as its summary.json lists it. */
export const runRefSchema = z.looseObject({
  attempt: count,
  retry: count,
  /** Whether the verdict counts this try (the last try of its attempt, passed or failed). */
  counted: z.boolean(),
  status,
  failure_stage: z.string().nullable(),
  failure_kind: failureKind.nullable(),
  message: z.string().nullable(),
  score: z.number().nullable(),
  pass_rate: z.number().nullable(),
  duration_ms: z.number(),
  /** diff.patch was cut at limits.diff (see result.json diff.bytes for the whole size). */
  diff_truncated: z.boolean(),
  /** Relative to the case's result directory. */
  dir: z.string(),
});

/** A case's summary.json, in its result directory. */
export const caseSummarySchema = z.looseObject({
  schema: z.literal(CASE_SCHEMA),
  ...identity,
  suite: z.string(),
  provider: z.string(),
  model: z.string().nullable(),
  description: z.string().nullable(),
  instruction: z.string(),
  tags: texts,
  /** The case's gate: what its verdict was decided by (a merge decides it again from `runs`). */
  /**
   * `min_rate` is the policy's rate (gate.min_rate). Bundles written before evalgate named it so
   * record `threshold` instead: a reader takes `min_rate ?? threshold` (docs/bundle.md).
   */
  policy: z.looseObject({
    name: policyName,
    min_rate: z.number().nullable().optional(),
    threshold: z.number().nullable().optional(),
    on_error: onError,
  }),
  verdict,
  classification,
  flaky: z.boolean(),
  reason: z.string(),
  evidence: evidence.optional(),
  settle_attempts: count.nullable().optional(),
  /** Adaptive attempts: the range the case was given (absent: a fixed repeat). */
  repeat: z.looseObject({ min: count, max: count }).nullable().optional(),
  history_key: z.string().optional(),
  admission: admissionSchema.optional(),
  /**
   * The base runs the case was compared with, newest first (the pooled baseline; absent without a
   * baseline and in older bundles).
   */
  history: z.array(historyRunSchema).optional(),
  attempts: countsSchema,
  stats: z.looseObject({
    attempt_success_rate: rate,
    wilson_95: z.tuple([z.number(), z.number()]).nullable(),
    mean_score: z.number().nullable(),
    mean_pass_rate: z.number().nullable(),
    /** Unbiased under the stopping rule: k = 1..counted with a fixed repeat, 1..min with adaptive attempts. */
    pass_at_k: z.record(z.string(), z.number()),
    pass_hat_k: z.record(z.string(), z.number()),
    /**
     * The success rate without the stopping rule's bias (gate/estimate.ts): fixed (passed/counted),
     * rao_blackwell (adaptive attempts), first_attempts (the first min, when errors left the
     * attempts between two looks). Absent in older bundles.
     */
    estimate: z
      .looseObject({
        success_rate: rate,
        method: z.enum(["fixed", "rao_blackwell", "first_attempts"]),
      })
      .optional(),
  }),
  usage: usageTotalsSchema.nullable(),
  runs: z.array(runRefSchema),
  change: changeSchema.nullable(),
  /** The image the case ran in, by digest (absent: the runner's own system, or an older bundle). */
  environment: environmentSchema.nullable().optional(),
  /** The case's per-attempt limits and how each was applied (absent: none declared). */
  resources: resourcesSchema.nullable().optional(),
});

export const comparisonSchema = z.looseObject({
  baseline_run_id: z.string(),
  baseline_git_sha: z.string().nullable(),
  regressed: count,
  improved: count,
  unchanged: count,
  new: count,
  removed: count,
  /** Cases whose success rate moved significantly (p < 0.05), whatever their verdicts. */
  significant: count,
  /** Cases of the baseline that this run no longer has (only when the run was not filtered or sharded). */
  removed_cases: z.array(z.looseObject({ ...identity, suite: z.string(), base_verdict: z.string() })),
  /** The baseline's per-target rollups, for per-target deltas (absent in older bundles). */
  targets: z.array(targetRollupSchema).optional(),
  /** Base runs (bundles) pooled: the newest is baseline_run_id (absent in older bundles: one). */
  baseline_runs: count.optional(),
});

export const evalSchema = z.looseObject({
  eval_path: z.string().min(1),
  name: z.string(),
  description: z.string().nullable(),
  tags: strMap,
  min_case_pass_rate: z.number().min(0).max(1),
  /** The plain word, or the object form of the eval file ({on, evidence, alpha}). */
  regressions: z.union([z.enum(["fail", "warn", "ignore"]), z.looseObject({ on: z.unknown().optional() })]),
  /** Absent in older bundles (every flip counted: any). */
  regression_evidence: z.enum(["significant", "any"]).optional(),
  regression_alpha: z.number().min(0).max(1).optional(),
  on_inconclusive: z.enum(["pass", "warn", "fail"]).optional(),
  budget: z.looseObject({
    cost_usd: z.number().nullable(),
    tokens: z.number().nullable(),
    duration_ms: z.number().nullable(),
  }),
  cases: count,
});

/** The bundle's summary.json: the run, its gate and its rollups. */
export const summarySchema = z.looseObject({
  schema: z.literal(SUMMARY_SCHEMA),
  /** interrupted: the run was stopped (SIGINT, SIGTERM); absent in older bundles: complete. */
  status: z.enum(["complete", "interrupted"]).optional(),
  run: z.looseObject({
    id: z.string(),
    started_at: z.string(),
    finished_at: z.string(),
    duration_ms: z.number(),
    evalgate_version: z.string(),
    node_version: z.string(),
    platform: z.string(),
    concurrency: z.number(),
    repeat_override: z.union([z.number(), z.looseObject({ min: z.number(), max: z.number() })]).nullable(),
    filters: z.looseObject({ targets: texts, tests: texts, tags: texts }),
    /** This bundle is shard `index` of `total` (1-based), or null. */
    shard: z.looseObject({ index: z.number().int().min(1), total: z.number().int().min(1) }).nullable(),
    /** Run ids of the shard bundles this bundle was merged from, or null. */
    merged_from: texts.nullable().optional(),
  }),
  git: z
    .looseObject({ sha: z.string().nullable(), branch: z.string().nullable(), dirty: z.boolean().nullable() })
    .nullable(),
  tags: strMap,
  evals: z.array(evalSchema),
  gate: z.looseObject({
    verdict: z.enum(["pass", "fail"]),
    reasons: texts,
    warnings: texts,
    /** Eval files whose budget was spent, and why. */
    budget_stops: z.array(z.looseObject({ eval_path: z.string(), reason: z.string() })).optional(),
  }),
  counts: z.looseObject({
    cases: count,
    passed: count,
    failed: count,
    errored: count,
    flaky: count,
    attempts: count,
    attempts_passed: count,
    attempts_failed: count,
    attempts_errored: count,
  }),
  targets: z.array(targetRollupSchema),
  /** What every case of the run used. */
  usage: usageTotalsSchema.nullable(),
  comparison: comparisonSchema.nullable(),
  /** Where the exam was read from when not the checkout's own (absent or null: the checkout's). */
  exam: examSchema.nullable().optional(),
  /**
   * What the agents ran under (bundle/wire.ts WireIsolation); absent in older bundles. A merge
   * reads a shard's field by field (an unknown level counts as none), so it is not refused here.
   */
  isolation: z.unknown().optional(),
  /**
   * How attempts got what setup built (docs/performance.md): `overlay` shared with an upper layer of
   * each attempt's own, `reflink` or `copy` copied; `mixed` when attempts differed. Absent when
   * setup built nothing, and in older bundles.
   */
  setup_trees: z
    .looseObject({
      mode: z.enum(["overlay", "reflink", "copy", "mixed"]),
      attempts: z.record(z.string(), count),
      reasons: texts,
    })
    .optional(),
  index: z.literal("index.jsonl"),
  /** A digest of every other file of the bundle (bundle/seal.ts checks it); absent in older bundles. */
  seal: z.unknown().optional(),
});

/** The first problems of a failed parse, as `key: message` (at most three). */
function problemsOf(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((i) => {
    const key = i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
    return `${key.replace(/^\./, "") || "(the whole value)"}: ${i.message}`;
  });
  const more = error.issues.length - shown.length;
  return `${shown.join("; ")}${more > 0 ? ` (and ${more} more)` : ""}`;
}

/** summary.json checked, or the reason it is not a summary evalgate can use. */
export function parseSummary(
  value: unknown,
): { summary: z.infer<typeof summarySchema> } | { problem: string } {
  const r = summarySchema.safeParse(value);
  return r.success ? { summary: r.data } : { problem: problemsOf(r.error) };
}

/** A case's summary.json checked, or the reason it is not one evalgate can use. */
export function parseCaseSummary(
  value: unknown,
): { summary: z.infer<typeof caseSummarySchema> } | { problem: string } {
  const r = caseSummarySchema.safeParse(value);
  return r.success ? { summary: r.data } : { problem: problemsOf(r.error) };
}

/** One index.jsonl row checked, or the reason it is not a row evalgate can use. */
export function parseIndexRow(value: unknown): { row: z.infer<typeof indexRowSchema> } | { problem: string } {
  const r = indexRowSchema.safeParse(value);
  return r.success ? { row: r.data } : { problem: problemsOf(r.error) };
}
