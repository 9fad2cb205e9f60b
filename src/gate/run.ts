/**
 * The run-level gate: every root eval file's rules over the cases it brought. Pure.
 * Rules: any case verdict `error` fails; the share of passing cases must reach min_case_pass_rate;
 * a regression (pass on the baseline → fail now) fails, warns or is ignored per `regressions`; a
 * spent budget fails (the scheduler's stop, or the cases' usage rollups over the cost or token limit).
 */
import type { EvalRoot, Identity } from "../config/types.js";
import { spendingOverrun, spentOf } from "../run/budget.js";
import { sumTotals, type UsageTotals } from "../run/usage.js";
import type { CaseDecision } from "./case.js";
import type { CaseChange } from "./compare.js";
import { barnardOneSidedLower, holmSignificant } from "./stats.js";

/**
 * What the run gate reads of a case's decision: its verdict and counts, never its statistics (a
 * whole CaseDecision is one too).
 */
export type GateDecision = Pick<
  CaseDecision,
  "verdict" | "flaky" | "counts" | "reason" | "evidence" | "settleAttempts"
> &
  Partial<CaseDecision>;

export interface GateCase {
  identity: Identity;
  rootEvalPath: string;
  suite: string;
  decision: GateDecision;
  change?: CaseChange | null;
  /** What the case's attempts used; checked against the eval file's cost and token budget. */
  usage?: UsageTotals | null;
}

export interface RunGate {
  verdict: "pass" | "fail";
  /** Sentences a reviewer understands: why the gate failed, or what it checked when it passed. */
  reasons: string[];
  /** Things a reviewer should see that did not fail the gate (regressions: warn). */
  warnings: string[];
}

export function caseLabel(c: Pick<GateCase, "suite" | "identity">): string {
  return `${c.suite}/${c.identity.testId} on ${c.identity.target}`;
}

function percent(x: number): string {
  return `${Math.round(x * 100)} %`;
}

/** The p-value of a drop (1 when the rate did not drop, or nothing can be compared). */
function dropP(c: GateCase): number {
  const ch = c.change;
  if (!ch || ch.pValue === null || ch.successRateDelta === null || ch.successRateDelta >= 0) return 1;
  return ch.pValue;
}

/** Was flaky on the baseline and is flaky now: not a regression. */
const knownFlaky = (c: GateCase) => c.change?.baseFlaky === true && c.decision.flaky;

export interface RegressionSort {
  /** Regressions the gate counts (gate.regressions.on applies to them). */
  confirmed: GateCase[];
  /** Verdict flips whose drop is not significant after the correction: reported, never blocking. */
  possible: GateCase[];
  /** Flips of cases flaky on both sides. */
  knownFlaky: GateCase[];
  /** Cases compared (the family Holm's correction runs over). */
  compared: number;
  alpha: number;
}

/**
 * Sorts a root's verdict flips (pass → fail): with `evidence: significant` a flip counts only when
 * its drop is significant by Barnard's one-sided test after Holm's correction over every case
 * compared with the baseline; with `any` (and in bundles written before it existed) every flip.
 */
export function sortRegressions(root: EvalRoot, mine: readonly GateCase[]): RegressionSort {
  const alpha = root.regressionAlpha ?? 0.05;
  const compared = mine.filter((c) => c.change?.pValue !== null && c.change?.pValue !== undefined);
  const significant = new Set<GateCase>();
  const flags = holmSignificant(compared.map(dropP), alpha);
  compared.forEach((c, i) => {
    if (flags[i]) significant.add(c);
  });
  const flips = mine.filter((c) => c.change?.change === "regressed");
  const known = flips.filter(knownFlaky);
  const rest = flips.filter((c) => !knownFlaky(c));
  const any = (root.regressionEvidence ?? "any") === "any";
  return {
    confirmed: rest.filter((c) => any || significant.has(c)),
    possible: rest.filter((c) => !any && !significant.has(c)),
    knownFlaky: known,
    compared: compared.length,
    alpha,
  };
}

/**
 * When not even the clearest drop the attempts allow (every base attempt passed, every head
 * attempt failed) could be significant after the correction, a significance rule can never fire:
 * say so, with the attempts that would make it able to.
 */
export function undetectableWarning(
  root: EvalRoot,
  mine: readonly GateCase[],
  sort: RegressionSort,
): string | null {
  if ((root.regressionEvidence ?? "any") !== "significant" || sort.compared === 0) return null;
  const level = sort.alpha / sort.compared;
  const best = mine
    .filter((c) => c.change?.baseAttempts && c.decision.counts.counted > 0)
    .map((c) => ({
      base: c.change!.baseAttempts!.counted,
      head: c.decision.counts.counted,
    }));
  if (best.length === 0) return null;
  if (best.some((b) => barnardOneSidedLower(b.base, b.base, 0, b.head) <= level)) return null;
  const base = Math.max(...best.map((b) => b.base));
  const head = Math.max(...best.map((b) => b.head));
  let needed = 0;
  for (let n = head + 1; n <= 50; n++) {
    if (barnardOneSidedLower(base, base, 0, n) <= level) {
      needed = n;
      break;
    }
  }
  const advice = needed ? `; use repeat: {min: ${Math.max(3, base)}, max: ${needed}} or more` : "";
  return `${root.name}: with ${base} attempt${base === 1 ? "" : "s"} on the baseline and ${head} here, no drop can be significant at α = ${sort.alpha} over ${sort.compared} case${sort.compared === 1 ? "" : "s"} compared${advice}`;
}

function regressionText(c: GateCase, what = "regressed"): string {
  const base = c.change?.baseAttempts;
  const d = c.decision.counts;
  const baseText = base ? `${base.passed} of ${base.counted}` : "?";
  const sig =
    c.change?.pValue !== null && c.change?.pValue !== undefined
      ? `, p = ${c.change.pValue.toFixed(3)}${c.change.significant || what !== "regressed" ? "" : ", not significant"}`
      : "";
  return `${caseLabel(c)}: ${what}: ${d.passed} of ${d.counted} attempts passed (base ${baseText})${sig}`;
}

export function decideRun(
  roots: readonly EvalRoot[],
  cases: readonly GateCase[],
  budgetStops: ReadonlyMap<string, string> = new Map(),
): RunGate {
  const failing: string[] = [];
  const passing: string[] = [];
  const warnings: string[] = [];
  for (const root of roots) {
    const mine = cases.filter((c) => c.rootEvalPath === root.evalPath);
    if (mine.length === 0) continue;
    const stop = budgetStops.get(root.evalPath);
    if (stop) {
      const cancelled = mine.reduce((a, c) => a + c.decision.counts.cancelled, 0);
      failing.push(
        `${root.name}: ${stop}; ${cancelled} attempt${cancelled === 1 ? " was" : "s were"} cancelled (gate.budget)`,
      );
    } else {
      const overrun = spendingOverrun(root.budget, spentOf(sumTotals(mine.map((c) => c.usage))));
      if (overrun) failing.push(`${root.name}: ${overrun} (gate.budget)`);
    }
    for (const c of mine) {
      if (c.decision.verdict === "error" && !(stop && c.decision.counts.cancelled > 0)) {
        failing.push(`${caseLabel(c)}: ${c.decision.reason}`);
      }
    }
    const sorted = sortRegressions(root, mine);
    const regressed = sorted.confirmed;
    if (root.regressions === "fail") for (const c of regressed) failing.push(regressionText(c));
    if (root.regressions === "warn")
      for (const c of regressed) warnings.push(`${regressionText(c)} (gate.regressions: warn)`);
    if (root.regressions !== "ignore") {
      for (const c of sorted.possible) {
        warnings.push(
          `${regressionText(c, "possible regression")}; not significant after Holm's correction over ${sorted.compared} case${sorted.compared === 1 ? "" : "s"} (α = ${sorted.alpha})`,
        );
      }
      for (const c of sorted.knownFlaky) {
        warnings.push(
          `${caseLabel(c)}: known flaky: flaky on the baseline and here, not counted as a regression`,
        );
      }
      for (const c of mine.filter((x) => x.decision.flaky && x.change?.baseFlaky === false)) {
        warnings.push(`${caseLabel(c)}: newly flaky: stable on the baseline, flaky here`);
      }
      const undetectable = undetectableWarning(root, mine, sorted);
      if (undetectable) warnings.push(undetectable);
    }
    const onInconclusive = root.onInconclusive ?? "warn";
    const verdictOf = (c: GateCase) =>
      c.decision.evidence === "inconclusive" && c.decision.verdict !== "error" && onInconclusive !== "warn"
        ? onInconclusive
        : c.decision.verdict;
    for (const c of mine.filter(
      (x) => x.decision.evidence === "inconclusive" && x.decision.verdict !== "error",
    )) {
      const more = c.decision.settleAttempts
        ? `; about ${c.decision.settleAttempts} more attempts would likely settle it`
        : "";
      const text = `${caseLabel(c)}: inconclusive: ${c.decision.counts.passed} of ${c.decision.counts.counted} attempts passed, the verdict follows the point estimate (${c.decision.verdict})${more}`;
      if (onInconclusive === "warn") warnings.push(text);
    }

    const passed = mine.filter((c) => verdictOf(c) === "pass").length;
    const rate = passed / mine.length;
    const needed = root.minCasePassRate;
    const summary = `${root.name}: ${passed} of ${mine.length} cases passed (${percent(rate)})`;
    if (rate + 1e-9 < needed) {
      if (needed >= 1) {
        const counted = new Set(root.regressions === "fail" ? regressed : []);
        for (const c of mine.filter((x) => verdictOf(x) === "fail" && !counted.has(x))) {
          const why = c.decision.verdict === "pass" ? " (inconclusive; gate.on_inconclusive: fail)" : "";
          failing.push(`${caseLabel(c)}: ${c.decision.reason}${why}`);
        }
      } else {
        failing.push(`${summary}; the gate needs at least ${percent(needed)} (gate.min_case_pass_rate)`);
      }
    } else if (needed < 1 && passed < mine.length) {
      passing.push(`${summary}; the gate needs at least ${percent(needed)}`);
    } else {
      passing.push(summary);
    }
  }
  return failing.length > 0
    ? { verdict: "fail", reasons: failing, warnings }
    : { verdict: "pass", reasons: passing, warnings };
}
