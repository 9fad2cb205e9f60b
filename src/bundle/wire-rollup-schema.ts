/**
 * The bundle's counts and rollups (a case's attempts, a target's cases, usage): split from
 * wire-schema.ts by concern.
 */
import { z } from "zod";

const count = z.number().int().min(0);
const rate = z.number().min(0).max(1).nullable();
const texts = z.array(z.string());

/** A usage rollup (case, target, run): null values were reported by no attempt. */
export const usageTotalsSchema = z.looseObject({
  input_tokens: z.number().nullable(),
  output_tokens: z.number().nullable(),
  cached_tokens: z.number().nullable(),
  cost_usd: z.number().nullable(),
  /** Attempts whose usage was summed. */
  attempts: count,
  /** Attempts whose agent reported none. */
  attempts_without_usage: count,
  /** The agent CLI versions and models the attempts reported (distinct, sorted; absent in older bundles). */
  agent_versions: texts.optional(),
  models: texts.optional(),
});

export const countsSchema = z.looseObject({
  planned: count,
  counted: count,
  passed: count,
  failed: count,
  errored: count,
  timed_out: count,
  cancelled: count,
  retried: count,
});

export const targetRollupSchema = z.looseObject({
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
  usage: usageTotalsSchema.nullable(),
});
