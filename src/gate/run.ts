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

export interface GateCase {
  identity: Identity;
  rootEvalPath: string;
  suite: string;
  decision: CaseDecision;
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

function regressionText(c: GateCase): string {
  const base = c.change?.baseAttempts;
  const d = c.decision.counts;
  const baseText = base ? `${base.passed} of ${base.counted}` : "?";
  const sig =
    c.change?.pValue !== null && c.change?.pValue !== undefined
      ? `, p = ${c.change.pValue.toFixed(3)}${c.change.significant ? "" : ", not significant"}`
      : "";
  return `${caseLabel(c)}: regressed: ${d.passed} of ${d.counted} attempts passed (base ${baseText})${sig}`;
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
    const regressed = mine.filter((c) => c.change?.change === "regressed");
    if (root.regressions === "fail") for (const c of regressed) failing.push(regressionText(c));
    if (root.regressions === "warn")
      for (const c of regressed) warnings.push(`${regressionText(c)} (gate.regressions: warn)`);

    const passed = mine.filter((c) => c.decision.verdict === "pass").length;
    const rate = passed / mine.length;
    const needed = root.minCasePassRate;
    const summary = `${root.name}: ${passed} of ${mine.length} cases passed (${percent(rate)})`;
    if (rate + 1e-9 < needed) {
      if (needed >= 1) {
        const counted = new Set(root.regressions === "fail" ? regressed : []);
        for (const c of mine.filter((x) => x.decision.verdict === "fail" && !counted.has(x))) {
          failing.push(`${caseLabel(c)}: ${c.decision.reason}`);
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
