/**
 * The wire schemas of a case's base history (decisions 0196, 0197): the runs it was compared with
 * and whether its verdict gates. Beside wire-schema.ts, which uses them in the index row and the
 * case summary.
 */
import { z } from "zod";

const count = z.number().int().min(0);
const rate = z.number().min(0).max(1).nullable();
const verdict = z.enum(["pass", "fail", "error"]);

export const changeSchema = z.looseObject({
  change: z.enum(["regressed", "improved", "unchanged", "new", "removed"]),
  base_verdict: verdict.nullable(),
  base_attempts: z.looseObject({ counted: count, passed: count }).nullable(),
  success_rate_delta: z.number().nullable(),
  p_value: z.number().nullable(),
  significant: z.boolean(),
  /** The baseline's case was flaky (absent in older bundles). */
  base_flaky: z.boolean().nullable().optional(),
  /** Base runs pooled into base_attempts (absent in older bundles: one). */
  base_runs: count.optional(),
  /** The base has the case, but no run with this run's history_key: the newest was compared alone. */
  key_changed: z.boolean().optional(),
});

/**
 * Whether a case's verdict gates (gate/admission.ts): admitted by its history, reported without
 * gating, or unproven (not enough history: it gates).
 */
export const admissionSchema = z.looseObject({
  state: z.enum(["admitted", "reported", "unproven"]),
  /** Comparable base runs. */
  runs: count,
  rate: rate,
  /** The one-sided 90 % lower bound of the base rate, the fail chance below was computed at. */
  lower_bound: rate,
  /** The chance the case's verdict fails an agent at that rate. */
  fail_chance: rate,
  /** Admitted before its newest base run, not now. */
  demoted: z.boolean().optional(),
});

/** One base run of a case, as its history lists it (newest first). */
export const historyRunSchema = z.looseObject({
  run_id: z.string(),
  git_sha: z.string().nullable(),
  started_at: z.string(),
  verdict,
  counted: count,
  passed: count,
});
