/** The run's summary.json: counts and rollups over the finished cases. */
import type { EvalRoot } from "../config/types.js";
import type { RunGate } from "../gate/run.js";
import { SUMMARY_SCHEMA, type WireComparison, type WireSummary, type WireTargetRollup } from "./wire.js";
import type { FinishedCase } from "./write.js";

export interface RunInfo {
  id: string;
  startedAt: Date;
  finishedAt: Date;
  version: string;
  concurrency: number;
  repeatOverride?: number;
  filters: { targets: string[]; tests: string[]; tags: string[] };
  git: WireSummary["git"];
}

export function buildSummary(
  info: RunInfo,
  roots: readonly EvalRoot[],
  cases: readonly FinishedCase[],
  gate: RunGate,
  comparison: WireComparison | null = null,
): WireSummary {
  const decisions = cases.map((c) => c.decision);
  const targets = new Map<string, WireTargetRollup>();
  for (const c of cases) {
    const t = c.spec.target;
    let roll = targets.get(t.name);
    if (!roll) {
      roll = {
        name: t.name,
        provider: t.provider,
        model: t.model ?? null,
        cases: 0,
        passed: 0,
        failed: 0,
        errored: 0,
        flaky: 0,
        attempts: 0,
        attempts_passed: 0,
        attempt_success_rate: null,
      };
      targets.set(t.name, roll);
    }
    const d = c.decision;
    roll.cases++;
    if (d.verdict === "pass") roll.passed++;
    if (d.verdict === "fail") roll.failed++;
    if (d.verdict === "error") roll.errored++;
    if (d.flaky) roll.flaky++;
    roll.attempts += d.counts.counted;
    roll.attempts_passed += d.counts.passed;
  }
  for (const roll of targets.values()) {
    roll.attempt_success_rate = roll.attempts > 0 ? roll.attempts_passed / roll.attempts : null;
  }
  const tags: Record<string, string> = {};
  for (const r of roots) Object.assign(tags, r.tags);
  return {
    schema: SUMMARY_SCHEMA,
    run: {
      id: info.id,
      started_at: info.startedAt.toISOString(),
      finished_at: info.finishedAt.toISOString(),
      duration_ms: info.finishedAt.getTime() - info.startedAt.getTime(),
      evalgate_version: info.version,
      node_version: process.version,
      platform: `${process.platform}-${process.arch}`,
      concurrency: info.concurrency,
      repeat_override: info.repeatOverride ?? null,
      filters: info.filters,
    },
    git: info.git,
    tags,
    evals: roots.map((r) => ({
      eval_path: r.evalPath,
      name: r.name,
      description: r.description ?? null,
      min_case_pass_rate: r.minCasePassRate,
      regressions: r.regressions,
      budget: {
        cost_usd: r.budget.costUsd ?? null,
        tokens: r.budget.tokens ?? null,
        duration_ms: r.budget.durationMs ?? null,
      },
      cases: cases.filter((c) => c.spec.rootEvalPath === r.evalPath).length,
    })),
    gate,
    counts: {
      cases: cases.length,
      passed: decisions.filter((d) => d.verdict === "pass").length,
      failed: decisions.filter((d) => d.verdict === "fail").length,
      errored: decisions.filter((d) => d.verdict === "error").length,
      flaky: decisions.filter((d) => d.flaky).length,
      attempts: cases.reduce((a, c) => a + c.tries.length, 0),
      attempts_passed: cases.reduce((a, c) => a + c.tries.filter((t) => t.status === "passed").length, 0),
      attempts_failed: cases.reduce((a, c) => a + c.tries.filter((t) => t.status === "failed").length, 0),
      attempts_errored: cases.reduce(
        (a, c) => a + c.tries.filter((t) => t.status === "error" || t.status === "timeout").length,
        0,
      ),
    },
    targets: [...targets.values()],
    comparison,
    index: "index.jsonl",
  };
}
