/**
 * The run-level gate: every root eval file's rules over the cases it brought. Pure.
 * Rules: any case verdict `error` fails; the share of passing cases must reach min_case_pass_rate;
 * a regression (pass on the baseline → fail now) fails, warns or is ignored per `regressions`; a
 * spent budget fails (the scheduler's stop, or the cases' usage rollups over the cost or token limit).
 */
import type { EvalRoot, Identity } from "../config/types.js";
import { spendingOverrun, spentOf } from "../run/budget.js";
import { sumTotals, type UsageTotals } from "../run/usage.js";
import type { Admission } from "./admission.js";
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
  /** Whether its verdict gates (absent: no history, it does). */
  admission?: Admission | null;
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
 * Sorts a root's regressions: with `evidence: significant`, every case whose drop is significant
 * by Barnard's one-sided test (over the head's looks) after Holm's correction over every case
 * compared with the base; with `any` (and in bundles written before it existed) every verdict
 * flip (pass → fail) but those of a case flaky on both sides whose drop is not significant.
 * Flips not counted are possible regressions (or known flaky).
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
  const any = (root.regressionEvidence ?? "any") === "any";
  // With evidence: significant, a regression is a significant drop, flipped or not (the verdict of
  // a case its history does not admit does not gate); with any, every flip. A significant drop is
  // a regression whatever the case's flakiness: "known flaky" only excuses a flip the test could
  // not tell from noise.
  const confirmed = any
    ? flips.filter((c) => significant.has(c) || !knownFlaky(c))
    : compared.filter((c) => significant.has(c));
  const rest = flips.filter((c) => !confirmed.includes(c));
  return {
    confirmed,
    possible: rest.filter((c) => !knownFlaky(c)),
    knownFlaky: rest.filter(knownFlaky),
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
  const runs = c.change?.baseRuns ?? 1;
  const baseText = base ? `${base.passed} of ${base.counted}${runs > 1 ? ` over ${runs} runs` : ""}` : "?";
  const sig =
    c.change?.pValue !== null && c.change?.pValue !== undefined
      ? `, p = ${c.change.pValue.toFixed(3)}${c.change.significant || what !== "regressed" ? "" : ", not significant"}`
      : "";
  return `${caseLabel(c)}: ${what}: ${d.passed} of ${d.counted} attempts passed (base ${baseText})${sig}`;
}

interface RootOutcome {
  failing: string[];
  passing: string[];
  warnings: string[];
  /** Inconclusive cases: listed first among the warnings (a reviewer must know noise from evidence first). */
  inconclusive: string[];
}

/** Budget: a spent budget, or the cases' cost and tokens over it, fails the root. */
function budgetRule(
  root: EvalRoot,
  mine: readonly GateCase[],
  stop: string | undefined,
  o: RootOutcome,
): void {
  if (stop) {
    const cancelled = mine.reduce((a, c) => a + c.decision.counts.cancelled, 0);
    o.failing.push(
      `${root.name}: ${stop}; ${cancelled} attempt${cancelled === 1 ? " was" : "s were"} cancelled (gate.budget)`,
    );
    return;
  }
  const overrun = spendingOverrun(root.budget, spentOf(sumTotals(mine.map((c) => c.usage))));
  if (overrun) o.failing.push(`${root.name}: ${overrun} (gate.budget)`);
}

/** Regressions per gate.regressions, and what a reviewer should see of the other drops and flips. */
function regressionRule(root: EvalRoot, mine: readonly GateCase[], o: RootOutcome): GateCase[] {
  const sorted = sortRegressions(root, mine);
  const regressed = sorted.confirmed;
  if (root.regressions === "fail") for (const c of regressed) o.failing.push(regressionText(c));
  if (root.regressions === "warn")
    for (const c of regressed) o.warnings.push(`${regressionText(c)} (gate.regressions: warn)`);
  if (root.regressions === "ignore") return [];
  for (const c of sorted.possible) {
    o.warnings.push(
      `${regressionText(c, "possible regression")}; not significant after Holm's correction over ${sorted.compared} case${sorted.compared === 1 ? "" : "s"} (α = ${sorted.alpha})`,
    );
  }
  for (const c of sorted.knownFlaky) {
    o.warnings.push(
      `${caseLabel(c)}: known flaky: flaky on the baseline and here, not counted as a regression`,
    );
  }
  for (const c of mine.filter((x) => x.decision.flaky && x.change?.baseFlaky === false)) {
    o.warnings.push(`${caseLabel(c)}: newly flaky: stable on the baseline, flaky here`);
  }
  const undetectable = undetectableWarning(root, mine, sorted);
  if (undetectable) o.warnings.push(undetectable);
  return root.regressions === "fail" ? regressed : [];
}

/** Cases whose history does not admit them: reported, not gating by their verdict (decision 0197). */
function admissionNotes(mine: readonly GateCase[], o: RootOutcome): void {
  for (const c of mine) {
    const a = c.admission;
    if (a?.state !== "reported") continue;
    const base = `its base history (${a.runs} runs, ${percent(a.rate ?? 0)})`;
    if (a.demoted)
      o.warnings.push(
        `${caseLabel(c)}: demoted: ${base} no longer admits it, so its verdict does not gate (a significant drop still does)`,
      );
    else if (c.decision.verdict === "fail")
      o.warnings.push(
        `${caseLabel(c)}: not gating: ${c.decision.reason}; ${base} does not admit it (a significant drop still blocks)`,
      );
  }
}

/** The verdicts of the cases that gate by them: min_case_pass_rate and on_inconclusive. */
function verdictRule(
  root: EvalRoot,
  gating: readonly GateCase[],
  counted: ReadonlySet<GateCase>,
  o: RootOutcome,
): void {
  const onInconclusive = root.onInconclusive ?? "warn";
  const verdictOf = (c: GateCase) =>
    c.decision.evidence === "inconclusive" && c.decision.verdict !== "error" && onInconclusive !== "warn"
      ? onInconclusive
      : c.decision.verdict;
  for (const c of gating.filter(
    (x) => x.decision.evidence === "inconclusive" && x.decision.verdict !== "error",
  )) {
    const more = c.decision.settleAttempts
      ? `; a run of about ${c.decision.settleAttempts} attempts (--repeat ${c.decision.settleAttempts}) would likely settle it`
      : "";
    const text = `${caseLabel(c)}: inconclusive: ${c.decision.counts.passed} of ${c.decision.counts.counted} attempts passed, the verdict follows the point estimate (${c.decision.verdict}): too few attempts to tell the rate from noise${more}`;
    if (onInconclusive === "warn") o.inconclusive.push(text);
  }
  // One attempt cannot tell an agent's bad luck from a failure: say so where a single attempt failed.
  if (gating.some((c) => c.decision.verdict === "fail" && c.decision.counts.counted === 1))
    o.inconclusive.push(
      `${root.name}: a case failed on its only attempt: one attempt cannot tell an agent's bad luck from a real failure; use repeat: {min: 3, max: 10}`,
    );
  if (gating.length === 0) return;
  const passed = gating.filter((c) => verdictOf(c) === "pass").length;
  const rate = passed / gating.length;
  const needed = root.minCasePassRate;
  const summary = `${root.name}: ${passed} of ${gating.length} cases passed (${percent(rate)})`;
  if (rate + 1e-9 < needed) {
    if (needed >= 1) {
      for (const c of gating.filter((x) => verdictOf(x) === "fail" && !counted.has(x))) {
        const why = c.decision.verdict === "pass" ? " (inconclusive; gate.on_inconclusive: fail)" : "";
        o.failing.push(`${caseLabel(c)}: ${c.decision.reason}${why}`);
      }
    } else {
      o.failing.push(`${summary}; the gate needs at least ${percent(needed)} (gate.min_case_pass_rate)`);
    }
  } else if (needed < 1 && passed < gating.length) {
    o.passing.push(`${summary}; the gate needs at least ${percent(needed)}`);
  } else {
    o.passing.push(summary);
  }
}

export function decideRun(
  roots: readonly EvalRoot[],
  cases: readonly GateCase[],
  budgetStops: ReadonlyMap<string, string> = new Map(),
): RunGate {
  const o: RootOutcome = { failing: [], passing: [], warnings: [], inconclusive: [] };
  for (const root of roots) {
    const mine = cases.filter((c) => c.rootEvalPath === root.evalPath);
    if (mine.length === 0) continue;
    const stop = budgetStops.get(root.evalPath);
    budgetRule(root, mine, stop, o);
    // Errors are run-level trouble: they fail the gate whatever the case's admission.
    for (const c of mine) {
      if (c.decision.verdict === "error" && !(stop && c.decision.counts.cancelled > 0)) {
        o.failing.push(`${caseLabel(c)}: ${c.decision.reason}`);
      }
    }
    const regressed = regressionRule(root, mine, o);
    admissionNotes(mine, o);
    const gating = mine.filter((c) => c.admission?.state !== "reported");
    verdictRule(root, gating, new Set(regressed), o);
    if (gating.length < mine.length && gating.length === 0)
      o.passing.push(
        `${root.name}: no case gates by its verdict (none is admitted by its history); a significant drop still blocks`,
      );
  }
  const warnings = [...o.inconclusive, ...o.warnings];
  return o.failing.length > 0
    ? { verdict: "fail", reasons: o.failing, warnings }
    : { verdict: "pass", reasons: o.passing, warnings };
}
