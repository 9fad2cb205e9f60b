/**
 * The wire types of the run bundle's summary.json, index.jsonl and case summary.json: snake_case
 * and versioned. With wire-attempt.ts (result.json, grading.json), the only place where internal
 * camelCase records become files that other tools read.
 */

import type { z } from "zod";
import type { CaseSpec } from "../config/types.js";
import type { Admission } from "../gate/admission.js";
import type { CaseDecision } from "../gate/case.js";
import type { CaseChange } from "../gate/compare.js";
import type { UsageTotals } from "../run/usage.js";
import type {
  admissionSchema,
  caseSummarySchema,
  changeSchema,
  comparisonSchema,
  countsSchema,
  evalSchema,
  examSchema,
  indexRowSchema,
  runRefSchema,
  summarySchema,
  targetRollupSchema,
  usageTotalsSchema,
} from "./wire-schema.js";

export { CASE_SCHEMA, SUMMARY_SCHEMA } from "./wire-schema.js";

/** summary.json. */
export type WireSummary = z.infer<typeof summarySchema>;
/** One line of index.jsonl. */
export type WireIndexRow = z.infer<typeof indexRowSchema>;
/** A case's summary.json. */
export type WireCaseSummary = z.infer<typeof caseSummarySchema>;
/** One try of a case, as its summary.json lists it. */
export type WireRunRef = z.infer<typeof runRefSchema>;
export type WireCounts = z.infer<typeof countsSchema>;
export type WireChange = z.infer<typeof changeSchema>;
export type WireComparison = z.infer<typeof comparisonSchema>;
export type WireTargetRollup = z.infer<typeof targetRollupSchema>;
export type WireUsageTotals = z.infer<typeof usageTotalsSchema>;
export type WireEval = z.infer<typeof evalSchema>;
export type WireExam = z.infer<typeof examSchema>;

export interface WireIdentity {
  eval_path: string;
  test_id: string;
  target: string;
}

export function wireChange(c: CaseChange): WireChange {
  return {
    change: c.change,
    base_verdict: c.baseVerdict,
    base_attempts: c.baseAttempts,
    success_rate_delta: c.successRateDelta,
    p_value: c.pValue,
    significant: c.significant,
    base_flaky: c.baseFlaky ?? null,
    ...(c.baseRuns !== undefined ? { base_runs: c.baseRuns } : {}),
    ...(c.keyChanged ? { key_changed: true } : {}),
  };
}

export type WireAdmission = z.infer<typeof admissionSchema>;

export function wireAdmission(a: Admission): WireAdmission {
  return {
    state: a.state,
    runs: a.runs,
    rate: a.rate,
    lower_bound: a.lowerBound,
    fail_chance: a.failChance,
    ...(a.demoted ? { demoted: true } : {}),
  };
}

/** A row's admission back in memory (a merge re-decides the gate from rows). */
export function admissionOfWire(w: WireAdmission | undefined): Admission | undefined {
  if (!w) return undefined;
  return {
    state: w.state,
    runs: w.runs,
    rate: w.rate,
    lowerBound: w.lower_bound,
    failChance: w.fail_chance,
    ...(w.demoted ? { demoted: true } : {}),
  };
}

export interface WireSeal {
  algorithm: "sha256";
  /** Every regular file of the bundle but summary.json, by its bundle-relative path: its sha256. */
  files: Record<string, string>;
  /** sha256 over summary.json without `seal` and the `files` list: the seal of the whole bundle. */
  digest: string;
}

export type WireIsolationLevel = "bwrap" | "pid-namespace" | "subreaper" | "none";

export interface WireIsolation {
  /** The weakest level any agent of the run ran under; null when no target runs an agent program. */
  level: WireIsolationLevel | null;
  /** Why it is not bwrap (null when it is). */
  reason: string | null;
  targets: { name: string; level: WireIsolationLevel; reason: string | null }[];
  /**
   * The threat model's promises the run did not keep (what the agent could do, docs/threat-model.md);
   * absent when it kept them all, and in older bundles.
   */
  gaps?: string[];
  /**
   * The agents that ran in their cases' containers (environment:), one row per target and image;
   * absent when none did, and in older bundles. `level` and `targets` describe the agents that ran
   * on the runner: a target whose every case has an environment is not among them.
   */
  containers?: WireContainerIsolation[];
}

/** A target's agent in the containers of one image (summary.json `isolation.containers`). */
export interface WireContainerIsolation {
  target: string;
  /** docker or podman. */
  engine: string;
  image: string;
  /** The registry's manifest digest, or the image id of a local build. */
  digest: string;
  /** How many of the target's cases ran in that image. */
  cases: number;
}

export function wireUsageTotals(t: UsageTotals | null): WireUsageTotals | null {
  if (!t) return null;
  return {
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cached_tokens: t.cachedTokens,
    cost_usd: t.costUsd,
    attempts: t.attempts,
    attempts_without_usage: t.attemptsWithoutUsage,
    agent_versions: t.agentVersions,
    models: t.models,
  };
}

/** Back from the wire (bundles written before usage rollups existed have none). */
export function usageTotalsOf(w: WireUsageTotals | null | undefined): UsageTotals | null {
  if (!w) return null;
  return {
    inputTokens: w.input_tokens ?? null,
    outputTokens: w.output_tokens ?? null,
    cachedTokens: w.cached_tokens ?? null,
    costUsd: w.cost_usd ?? null,
    attempts: w.attempts ?? 0,
    attemptsWithoutUsage: w.attempts_without_usage ?? 0,
    agentVersions: w.agent_versions ?? [],
    models: w.models ?? [],
  };
}

export function wireIdentity(spec: CaseSpec): WireIdentity {
  return { eval_path: spec.identity.evalPath, test_id: spec.identity.testId, target: spec.identity.target };
}

export function wireCounts(d: CaseDecision): WireCounts {
  const c = d.counts;
  return {
    planned: c.planned,
    counted: c.counted,
    passed: c.passed,
    failed: c.failed,
    errored: c.errored,
    timed_out: c.timedOut,
    cancelled: c.cancelled,
    retried: c.retried,
  };
}
