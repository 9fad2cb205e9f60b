/**
 * zod schemas of the bundle files that compare, merge and the baseline compute with (summary.json
 * and index.jsonl), checked when a bundle is read instead of cast: a bundle may be a downloaded
 * artifact. Objects are loose (fields evalgate does not use here pass through), but every field the
 * gate, the comparison and the merge read must have its type. The report view reads more leniently
 * (decision 0066), field by field, so that a damaged bundle still renders.
 */
import { z } from "zod";
import { SUMMARY_SCHEMA, type WireIndexRow, type WireSummary } from "./wire.js";

const count = z.number().int().min(0);
const rate = z.number().min(0).max(1).nullable();
const texts = z.array(z.string());
const strMap = z.record(z.string(), z.string());

const usageTotals = z
  .looseObject({
    input_tokens: z.number().nullable(),
    output_tokens: z.number().nullable(),
    cached_tokens: z.number().nullable(),
    cost_usd: z.number().nullable(),
    attempts: count,
    attempts_without_usage: count,
  })
  .nullable();

const change = z
  .looseObject({
    change: z.enum(["regressed", "improved", "unchanged", "new", "removed"]),
    base_verdict: z.string().nullable(),
    base_attempts: z.looseObject({ counted: count, passed: count }).nullable(),
    success_rate_delta: z.number().nullable(),
    p_value: z.number().nullable(),
    significant: z.boolean(),
  })
  .nullable();

const targetRollup = z.looseObject({
  name: z.string(),
  provider: z.string(),
  model: z.string().nullable(),
  cases: count,
  passed: count,
  failed: count,
  errored: count,
  flaky: count,
  attempts: count,
  attempts_passed: count,
  attempt_success_rate: rate,
  usage: usageTotals,
});

const identity = { eval_path: z.string().min(1), test_id: z.string().min(1), target: z.string().min(1) };

export const indexRowSchema = z.looseObject({
  ...identity,
  suite: z.string(),
  root_eval_path: z.string().min(1),
  provider: z.string(),
  model: z.string().nullable(),
  tags: texts,
  verdict: z.enum(["pass", "fail", "error"]),
  classification: z.string(),
  flaky: z.boolean(),
  reason: z.string(),
  attempts: z.looseObject({
    planned: count,
    counted: count,
    passed: count,
    failed: count,
    errored: count,
    timed_out: count,
    cancelled: count,
    retried: count,
  }),
  attempt_success_rate: rate,
  mean_score: z.number().nullable(),
  mean_pass_rate: z.number().nullable(),
  usage: usageTotals,
  result_dir: z.string().min(1),
  summary_path: z.string().min(1),
  runs: z.array(
    z.looseObject({
      attempt: count,
      retry: count,
      status: z.string(),
      failure_kind: z.string().nullable(),
      dir: z.string(),
    }),
  ),
  change,
});

export const summarySchema = z.looseObject({
  schema: z.literal(SUMMARY_SCHEMA),
  status: z.enum(["complete", "interrupted"]).optional(),
  run: z.looseObject({
    id: z.string(),
    started_at: z.string(),
    finished_at: z.string(),
    duration_ms: z.number(),
    evalgate_version: z.string(),
    concurrency: z.number(),
    repeat_override: z
      .union([z.number(), z.looseObject({ min: z.number(), max: z.number() })])
      .nullable()
      .optional(),
    filters: z.looseObject({ targets: texts, tests: texts, tags: texts }),
    shard: z.looseObject({ index: z.number().int().min(1), total: z.number().int().min(1) }).nullable(),
    merged_from: texts.nullable().optional(),
  }),
  git: z
    .looseObject({ sha: z.string().nullable(), branch: z.string().nullable(), dirty: z.boolean().nullable() })
    .nullable(),
  tags: strMap,
  evals: z.array(
    z.looseObject({
      eval_path: z.string().min(1),
      name: z.string(),
      description: z.string().nullable(),
      tags: strMap,
      min_case_pass_rate: z.number().min(0).max(1),
      // The plain word, or the object form with regression evidence ({on, evidence, alpha}).
      regressions: z.union([z.enum(["fail", "warn", "ignore"]), z.looseObject({})]),
      budget: z.looseObject({
        cost_usd: z.number().nullable(),
        tokens: z.number().nullable(),
        duration_ms: z.number().nullable(),
      }),
      cases: count,
    }),
  ),
  gate: z.looseObject({
    verdict: z.enum(["pass", "fail"]),
    reasons: texts,
    warnings: texts,
    budget_stops: z.array(z.looseObject({ eval_path: z.string(), reason: z.string() })).optional(),
  }),
  counts: z.looseObject({ cases: count }),
  targets: z.array(targetRollup),
  usage: usageTotals,
  comparison: z
    .looseObject({
      baseline_run_id: z.string(),
      baseline_git_sha: z.string().nullable(),
      removed_cases: z.array(z.looseObject({ ...identity, suite: z.string(), base_verdict: z.string() })),
      targets: z.array(targetRollup).optional(),
    })
    .nullable(),
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
export function parseSummary(value: unknown): { summary: WireSummary } | { problem: string } {
  const r = summarySchema.safeParse(value);
  return r.success ? { summary: r.data as unknown as WireSummary } : { problem: problemsOf(r.error) };
}

/** One index.jsonl row checked, or the reason it is not a row evalgate can use. */
export function parseIndexRow(value: unknown): { row: WireIndexRow } | { problem: string } {
  const r = indexRowSchema.safeParse(value);
  return r.success ? { row: r.data as unknown as WireIndexRow } : { problem: problemsOf(r.error) };
}
