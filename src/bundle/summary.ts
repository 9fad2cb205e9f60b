/**
 * The run's summary.json: its counts and rollups computed from the index rows, so that a run and a
 * merge of shards produce it the same way; its gate is decided by the caller, from the cases' tries.
 */
import type { EvalRoot, PlanExam } from "../config/types.js";
import type { RunGate } from "../gate/run.js";
import { sumTotals, type UsageTotals } from "../run/usage.js";
import {
  SUMMARY_SCHEMA,
  usageTotalsOf,
  type WireComparison,
  type WireEval,
  type WireExam,
  type WireIndexRow,
  type WireSummary,
  type WireTargetRollup,
  wireUsageTotals,
} from "./wire.js";

export interface RunInfo {
  id: string;
  startedAt: Date;
  finishedAt: Date;
  version: string;
  concurrency: number;
  repeatOverride?: number | { min: number; max: number };
  filters: { targets: string[]; tests: string[]; tags: string[] };
  git: WireSummary["git"];
  shard?: { index: number; total: number };
  mergedFrom?: string[];
  /** Why the run stopped before its end (a signal), making the bundle's status interrupted. */
  interrupted?: string;
}

/** How an attempt got the trees setup built (run/share.ts): shared through an overlay, or copied. */
export const SETUP_TREE_MODES = ["overlay", "reflink", "copy"] as const;
export type SetupTreeMode = (typeof SETUP_TREE_MODES)[number];

/**
 * summary.json's `setup_trees`, from the attempts counted by mode and the reasons trees were
 * copied; undefined when no attempt got a tree (setup built none).
 */
export function wireSetupTrees(
  attempts: Partial<Record<SetupTreeMode, number>>,
  reasons: Iterable<string>,
): WireSummary["setup_trees"] {
  const modes = Object.keys(attempts) as SetupTreeMode[];
  if (modes.length === 0) return undefined;
  return { mode: modes.length === 1 ? modes[0]! : "mixed", attempts, reasons: [...new Set(reasons)].sort() };
}

/** A case new in the checkout, run from its own definition: reported, never gating or counted (docs/exam.md). */
export const isProposed = (row: Pick<WireIndexRow, "exam">): boolean => row.exam?.status === "proposed";

/** summary.json's `exam`: where it was read from, what the checkout changes, and its cases by kind. */
export function wireExam(
  exam: PlanExam,
  rows: readonly WireIndexRow[],
  quarantine: readonly string[] = [],
): WireExam {
  return examCounted(
    {
      sha: exam.sha,
      ref: exam.ref,
      files: exam.files.map((f) => ({ eval_path: f.evalPath, change: f.change, changes: [...f.changes] })),
      quarantine: [...quarantine],
    },
    rows,
  );
}

/** A recorded `exam` with its counts taken again from `rows` (a merge of shards). */
export function examCounted(
  exam: Pick<WireExam, "sha" | "ref" | "files" | "quarantine">,
  rows: readonly WireIndexRow[],
): WireExam {
  const n = (status: string) => rows.filter((r) => r.exam?.status === status).length;
  return {
    sha: exam.sha,
    ref: exam.ref,
    files: exam.files,
    quarantine: exam.quarantine,
    proposed: n("proposed"),
    changed: n("changed"),
    removed: n("removed"),
  };
}

export function wireEvals(roots: readonly EvalRoot[], rows: readonly WireIndexRow[]): WireEval[] {
  return roots.map((r) => ({
    eval_path: r.evalPath,
    name: r.name,
    description: r.description ?? null,
    tags: r.tags,
    min_case_pass_rate: r.minCasePassRate,
    regressions: r.regressions,
    regression_evidence: r.regressionEvidence ?? "any",
    regression_alpha: r.regressionAlpha ?? 0.05,
    on_inconclusive: r.onInconclusive ?? "warn",
    budget: {
      cost_usd: r.budget.costUsd ?? null,
      tokens: r.budget.tokens ?? null,
      duration_ms: r.budget.durationMs ?? null,
    },
    cases: rows.filter((row) => row.root_eval_path === r.evalPath && !isProposed(row)).length,
  }));
}

const RULES = ["fail", "warn", "ignore"] as const;

/** `regressions` of summary.json: the word, or the object form's `on` (else the default, fail). */
function regressionRule(r: WireEval["regressions"]): (typeof RULES)[number] {
  const word = typeof r === "string" ? r : r.on;
  return RULES.find((x) => x === word) ?? "fail";
}

/** The roots' run-level rules, back from summary.json (for merging shards). */
export function rootsOf(evals: readonly WireEval[]): EvalRoot[] {
  return evals.map((e) => {
    const root: EvalRoot = {
      path: e.eval_path,
      evalPath: e.eval_path,
      name: e.name,
      tags: e.tags ?? {},
      minCasePassRate: e.min_case_pass_rate,
      regressions: regressionRule(e.regressions),
      budget: {},
    };
    if (e.regression_evidence) root.regressionEvidence = e.regression_evidence;
    if (e.regression_alpha !== undefined) root.regressionAlpha = e.regression_alpha;
    if (e.on_inconclusive) root.onInconclusive = e.on_inconclusive;
    if (e.description) root.description = e.description;
    if (e.budget.cost_usd !== null) root.budget.costUsd = e.budget.cost_usd;
    if (e.budget.tokens !== null) root.budget.tokens = e.budget.tokens;
    if (e.budget.duration_ms !== null) root.budget.durationMs = e.budget.duration_ms;
    return root;
  });
}

/** Per-target rollups of `rows` (counts, attempts, usage): summary.json's `targets`. */
export function targetRollups(rows: readonly WireIndexRow[]): Map<string, WireTargetRollup> {
  const targets = new Map<string, WireTargetRollup>();
  const usages = new Map<string, (UsageTotals | null)[]>();
  for (const r of rows) {
    let roll = targets.get(r.target);
    if (!roll) {
      roll = {
        name: r.target,
        provider: r.provider,
        model: r.model,
        cases: 0,
        passed: 0,
        failed: 0,
        errored: 0,
        flaky: 0,
        attempts: 0,
        attempts_passed: 0,
        attempt_success_rate: null,
        usage: null,
      };
      targets.set(r.target, roll);
      usages.set(r.target, []);
    }
    roll.cases++;
    if (r.verdict === "pass") roll.passed++;
    if (r.verdict === "fail") roll.failed++;
    if (r.verdict === "error") roll.errored++;
    if (r.flaky) roll.flaky++;
    roll.attempts += r.attempts.counted;
    roll.attempts_passed += r.attempts.passed;
    usages.get(r.target)!.push(usageTotalsOf(r.usage));
  }
  for (const roll of targets.values()) {
    roll.attempt_success_rate = roll.attempts > 0 ? roll.attempts_passed / roll.attempts : null;
    roll.usage = wireUsageTotals(sumTotals(usages.get(roll.name)!));
  }
  return targets;
}

export function buildSummary(
  info: RunInfo,
  evals: readonly WireEval[],
  allRows: readonly WireIndexRow[],
  gate: RunGate,
  budgetStops: ReadonlyMap<string, string>,
  comparison: WireComparison | null = null,
  exam: WireExam | null = null,
): WireSummary {
  // Counts and per-target numbers describe the cases the gate weighed; usage, everything that ran.
  const rows = allRows.filter((r) => !isProposed(r));
  const targets = targetRollups(rows);
  const tags: Record<string, string> = {};
  for (const e of evals) Object.assign(tags, e.tags ?? {});
  const tries = rows.flatMap((r) => r.runs);
  const verdicts = (v: string) => rows.filter((r) => r.verdict === v).length;
  // An interrupted run's gate fails: the cases it did not finish cannot pass.
  const stopped = info.interrupted
    ? {
        verdict: "fail" as const,
        reasons: [info.interrupted, ...(gate.verdict === "fail" ? gate.reasons : [])],
      }
    : {};
  return {
    schema: SUMMARY_SCHEMA,
    status: info.interrupted ? "interrupted" : "complete",
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
      shard: info.shard ?? null,
      merged_from: info.mergedFrom ?? null,
    },
    git: info.git,
    tags,
    evals: [...evals],
    gate: {
      ...gate,
      ...stopped,
      budget_stops: [...budgetStops.entries()].map(([eval_path, reason]) => ({ eval_path, reason })),
    },
    counts: {
      cases: rows.length,
      passed: verdicts("pass"),
      failed: verdicts("fail"),
      errored: verdicts("error"),
      flaky: rows.filter((r) => r.flaky).length,
      attempts: tries.length,
      attempts_passed: tries.filter((t) => t.status === "passed").length,
      attempts_failed: tries.filter((t) => t.status === "failed").length,
      attempts_errored: tries.filter((t) => t.status === "error" || t.status === "timeout").length,
    },
    targets: [...targets.values()],
    usage: wireUsageTotals(sumTotals(allRows.map((r) => usageTotalsOf(r.usage)))),
    comparison,
    ...(exam ? { exam } : {}),
    index: "index.jsonl",
  };
}
