/**
 * `gate:` and `repeat:`: how attempts become a case's verdict, and the run-level rules.
 */
import { z } from "zod";
import { MAX_REPEAT } from "../options.js";
import { duration, rate } from "./values.js";

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

export type GateInput = z.infer<typeof gateSchema>;
