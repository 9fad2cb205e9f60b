/**
 * The plan a run, a solvability check or `validate` works from: the eval files resolved (config/),
 * checked by the run's preflight (run/preflight.ts) in the same pass so that every problem comes
 * in one message, with the gate's notes on attempts too few to show a regression.
 */
import { loadPlan, type PlanOptions } from "../config/plan/index.js";
import type { CaseSpec, EvalRoot, Plan } from "../config/types.js";
import { undetectableAdvice } from "../gate/adaptive.js";
import { type PreflightOptions, preflight } from "../run/preflight.js";

/** Loads and checks the plan. Throws ConfigError (every problem at once) or UsageError. */
export async function checkedPlan(opts: PlanOptions, checks: PreflightOptions = {}): Promise<Plan> {
  const plan = await loadPlan({ ...opts, checks: preflight(checks) });
  return { ...plan, notes: [...plan.notes, ...undetectableNotes(plan.roots, plan.cases)] };
}

/** Eval files whose attempts cannot make any regression significant (gate.regressions.evidence). */
export function undetectableNotes(roots: readonly EvalRoot[], cases: readonly CaseSpec[]): string[] {
  const notes: string[] = [];
  for (const root of roots) {
    if (root.regressions === "ignore" || root.regressionEvidence !== "significant") continue;
    const mine = cases.filter((c) => c.rootEvalPath === root.evalPath);
    if (mine.length === 0) continue;
    const best = mine.reduce((a, c) => ((c.repeatMax ?? c.repeat) > (a.repeatMax ?? a.repeat) ? c : a));
    // A single attempt is the quickstart's default: no one expects statistics from it.
    if ((best.repeatMax ?? best.repeat) < 2) continue;
    const advice = undetectableAdvice(
      { min: best.repeat, max: best.repeatMax ?? best.repeat },
      mine.length,
      root.regressionAlpha ?? 0.05,
    );
    if (advice) notes.push(`${root.evalPath}: gate.regressions: ${advice}`);
  }
  return notes;
}
