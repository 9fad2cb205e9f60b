/** The top of the PR comment: the verdict headline, the counts, the run line and the target table. */
import type { EvalRoot } from "../config/types.js";
import type { Verdict } from "../gate/case.js";
import { type GateCase, sortRegressions } from "../gate/run.js";
import type { CommentOptions } from "./comment.js";
import { RANK } from "./comment-case.js";
import type { Piece } from "./fit.js";
import {
  comparableBaseTargets,
  costOf,
  count,
  countDelta,
  duration,
  paren,
  plural,
  shardFinished,
  shortSha,
  type TargetCells,
  targetCells,
  usdDelta,
} from "./format.js";
import * as md from "./markdown.js";
import { clip } from "./text.js";
import { isProposed, type ReportView, type TargetNumbers } from "./view.js";

export interface Context {
  view: ReportView;
  options: CommentOptions;
  multiSuite: boolean;
  /** The baseline's target rollups by name, when counts can be compared with them. */
  baseTargets: Map<string, TargetNumbers> | null;
}

export function contextOf(view: ReportView, options: CommentOptions): Context {
  return {
    view,
    options,
    multiSuite: new Set(view.cases.map((c) => c.suite)).size > 1,
    baseTargets: comparableBaseTargets(view),
  };
}

/**
 * The verdict flips the gate counts as regressions (gate.regressions: fail, with its evidence rule:
 * Barnard's test and Holm's correction, gate/run.ts) and the possible ones it only reports, by the
 * gate's own function so the headline never counts what the gate did not.
 */
export function regressionCounts(view: Pick<ReportView, "cases" | "suites">): {
  counted: number;
  possible: number;
} {
  let counted = 0;
  let possible = 0;
  const byRoot = new Map<string, ReportView["cases"]>();
  // A proposed case (new in the pull request) never gates, so it is never a regression either.
  for (const c of view.cases.filter((x) => !isProposed(x))) {
    const cases = byRoot.get(c.rootEvalPath);
    if (cases) cases.push(c);
    else byRoot.set(c.rootEvalPath, [c]);
  }
  for (const [rootEvalPath, cases] of byRoot) {
    const suite = view.suites.find((s) => s.evalPath === rootEvalPath);
    const rule = suite?.regressions ?? "fail";
    if (rule === "ignore") continue;
    const root: EvalRoot = {
      path: rootEvalPath,
      evalPath: rootEvalPath,
      name: suite?.name ?? rootEvalPath,
      tags: {},
      minCasePassRate: 1,
      regressions: rule,
      regressionEvidence: suite?.regressionEvidence ?? "any",
      regressionAlpha: suite?.regressionAlpha ?? 0.05,
      budget: {},
    };
    const sorted = sortRegressions(root, cases.map(gateCaseOf));
    if (rule === "fail") counted += sorted.confirmed.length;
    possible += sorted.possible.length;
  }
  return { counted, possible };
}

/** What the gate's regression rule reads of a case, from its view. */
function gateCaseOf(c: ReportView["cases"][number]): GateCase {
  const a = c.attempts;
  return {
    identity: { evalPath: c.evalPath, testId: c.testId, target: c.target },
    rootEvalPath: c.rootEvalPath,
    suite: c.suite,
    decision: {
      verdict: c.verdict,
      flaky: c.flaky,
      counts: { ...a },
      reason: c.reason,
    },
    change: c.change && {
      ...c.change,
      baseVerdict: c.change.baseVerdict as Verdict | null,
    },
  };
}

/** What the verdict text needs of the run. */
export type VerdictFacts = Pick<ReportView, "gate" | "counts" | "cases" | "suites">;

/**
 * "gate failed: 2 regressions, 1 errored case": the verdict and its leading reason (regressions
 * first). The comment's headline and the check run's title both say it, so they never disagree.
 */
export function verdictText(view: VerdictFacts): string {
  if (view.gate.verdict === "pass") {
    const w = view.gate.warnings.length;
    const { possible } = regressionCounts(view);
    const note = possible ? ` (${plural(possible, "possible regression")})` : "";
    return `gate passed${w ? ` with ${plural(w, "warning")}${note}` : ""}`;
  }
  const parts: string[] = [];
  const { counted: regressions, possible } = regressionCounts(view);
  if (regressions) parts.push(plural(regressions, "regression"));
  if (view.counts.errored) parts.push(plural(view.counts.errored, "errored case"));
  if (view.gate.budgetStops.length) parts.push("budget spent");
  if (parts.length === 0) parts.push(plural(view.counts.failed, "failing case"));
  if (possible) parts.push(plural(possible, "possible regression"));
  return `gate failed: ${parts.join(", ")}`;
}

export function headline(view: ReportView): string {
  if (view.run.shard) return `## ⏳ evalgate — ${shardFinished(view.run.shard, view.counts)}\n\n`;
  return `## ${view.gate.verdict === "pass" ? "✅" : "❌"} evalgate — ${verdictText(view)}\n\n`;
}

type BaseTotals = Omit<TargetNumbers, "name" | "provider" | "model" | "usage"> & { costUsd: number | null };

/** The baseline's numbers over the targets this run also has, as the counts and cost are compared. */
function baseTotals(ctx: Context): BaseTotals | null {
  if (!ctx.baseTargets) return null;
  const mine = ctx.view.targets.map((t) => ctx.baseTargets!.get(t.name)).filter((t) => t !== undefined);
  const sum = (k: "cases" | "passed" | "failed" | "errored" | "flaky" | "attempts" | "attemptsPassed") =>
    mine.reduce((a, t) => a + t[k], 0);
  const attempts = sum("attempts");
  return {
    cases: sum("cases"),
    passed: sum("passed"),
    failed: sum("failed"),
    errored: sum("errored"),
    flaky: sum("flaky"),
    attempts,
    attemptsPassed: sum("attemptsPassed"),
    attemptSuccessRate: attempts ? sum("attemptsPassed") / attempts : null,
    // Unknown for any one target: unknown in all, never a partial sum; nothing shared: no figure.
    costUsd:
      mine.length > 0 && mine.every((t) => t.usage?.costUsd != null)
        ? mine.reduce((a, t) => a + t.usage!.costUsd!, 0)
        : null,
  };
}

export function countsLine(ctx: Context): string {
  const c = ctx.view.counts;
  const base = baseTotals(ctx);
  const d = (k: "passed" | "failed" | "flaky" | "errored") => (base ? paren(countDelta(c[k] - base[k])) : "");
  const sha = shortSha(ctx.view.comparison?.baselineSha);
  const vs = base ? ` — changes vs base${sha ? ` ${md.code(sha)}` : ""}` : "";
  return `**${plural(c.cases, "case")}** · ${count(c.passed)} passed${d("passed")} · ${count(c.failed)} failed${d("failed")} · ${count(c.flaky)} flaky${d("flaky")} · ${count(c.errored)} errored${d("errored")}${vs}\n\n`;
}

/**
 * The agent CLI or model a target ran that differs from the baseline's ("claude-code 2.1.300 →
 * 2.1.332"): a change of agent is drift, which reviewers must see beside the deltas. Empty when
 * nothing changed or either side did not report it.
 */
export function driftLine(ctx: Context): string {
  if (!ctx.baseTargets) return "";
  const changes: string[] = [];
  const list = (xs: readonly string[]) => xs.join(", ");
  for (const t of ctx.view.targets) {
    const base = ctx.baseTargets.get(t.name);
    const parts: string[] = [];
    for (const [key, label] of [
      ["agentVersions", t.provider],
      ["models", "model"],
    ] as const) {
      const was = base?.usage?.[key] ?? [];
      const now = t.usage?.[key] ?? [];
      if (was.length && now.length && list(was) !== list(now))
        parts.push(`${md.text(label)} ${md.text(list(was))} → ${md.text(list(now))}`);
    }
    if (parts.length) changes.push(`${md.code(t.name)}: ${parts.join(", ")}`);
  }
  return changes.length ? `**Agent changed vs base** — ${changes.join(" · ")}\n\n` : "";
}

export function contextLine(ctx: Context): string {
  const v = ctx.view;
  const names = v.suites.map((s) => `**${md.text(clip(s.name, 60))}**`);
  const suites =
    names.length > 3 ? `${names.slice(0, 3).join(", ")} and ${names.length - 3} more` : names.join(", ");
  const tests = new Set(v.cases.map((c) => `${c.evalPath}\u0000${c.testId}`)).size;
  const targets = new Set(v.cases.map((c) => c.target)).size;
  const planned = [...new Set(v.cases.map((c) => c.attempts.planned))].sort((a, b) => a - b);
  const attempts =
    planned.length === 0
      ? ""
      : planned.length === 1
        ? ` × ${plural(planned[0]!, "attempt")}`
        : ` × ${planned[0]}–${planned.at(-1)} attempts`;
  const parts = [suites, `${plural(tests, "test")} × ${plural(targets, "target")}${attempts}`].filter(
    Boolean,
  );
  const head = shortSha(v.git?.sha);
  const base = shortSha(v.comparison?.baselineSha);
  if (head || base) {
    parts.push(
      `${base ? `base ${md.code(base)} → ` : ""}head ${head ? md.code(head) : "(no commit)"}${v.git?.dirty ? " (uncommitted changes)" : ""}`,
    );
  }
  parts.push(duration(v.run.durationMs));
  if (v.usage?.costUsd != null) {
    const baseCost = baseTotals(ctx)?.costUsd ?? null;
    parts.push(
      `${md.text(costOf(v.usage))}${baseCost !== null ? ` (${md.text(usdDelta(v.usage.costUsd - baseCost))} vs base)` : ""}`,
    );
  }
  if (v.run.shard) parts.push(`shard ${v.run.shard.index}/${v.run.shard.total}`);
  if (v.run.mergedFrom) parts.push(`merged from ${plural(v.run.mergedFrom.length, "shard")}`);
  const f = v.run.filters;
  const filters = [
    ...f.targets.map((t) => `--target ${t}`),
    ...f.tests.map((t) => `--test ${t}`),
    ...f.tags.map((t) => `--tag ${t}`),
  ];
  if (filters.length) parts.push(`filtered: ${md.code(clip(filters.join(" "), 120))}`);
  return `${parts.join(" · ")}\n\n`;
}

export function noBaseline(ctx: Context): Piece | null {
  if (ctx.view.comparison) return null;
  const why = ctx.options.baselineNote?.trim()
    ? md.text(clip(ctx.options.baselineNote, 400))
    : "this run was not compared with a baseline (`evalgate run --baseline DIR`)";
  return {
    open: `_No baseline: ${why}. Changes against the base branch are not shown._\n\n`,
    rank: RANK.optional,
  };
}

function targetRow(ctx: Context, t: TargetNumbers): string {
  const b = ctx.baseTargets?.get(t.name);
  const cells = targetCells(t, b);
  const name = `${md.text(clip(t.name, 60))}${t.model ? ` (${md.text(clip(t.model, 40))})` : ""}${ctx.baseTargets && !b ? " · new" : ""}`;
  return md.row([name, cells.passed, cells.failed, cells.flaky, cells.errored, cells.rate, usageCell(cells)]);
}

/** Cost and tokens in one column ("$0.66 (+$0.19) · 229 k (+20 k)"): the table fits a comment's width. */
function usageCell(cells: TargetCells): string {
  const parts = [cells.cost, cells.tokens].filter((p) => p !== "—");
  return parts.length ? md.text(parts.join(" · ")) : "—";
}

export function targetTable(ctx: Context): Piece | null {
  if (ctx.view.targets.length === 0) return null;
  return {
    open: md.tableHead(["target", "passed", "failed", "flaky", "errors", "attempt success", "usage"]),
    children: ctx.view.targets.map((t, i) => ({
      open: targetRow(ctx, t),
      ...(i >= 20 ? { rank: RANK.lastResort, omits: "targets" } : {}),
    })),
    close: "\n",
  };
}
