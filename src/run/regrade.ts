/**
 * Regrading an attempt's final workspace (`verify_repeats`, or the automatic rerun of an attempt
 * that disagrees with its case; docs/gate.md "Verifier flakes"), and what a disagreement means once
 * the case's verifier is calibrated (calibrate.ts, verify.ts).
 */
import type { CaseSpec } from "../config/types.js";
import type { Grading } from "../scorers/grading.js";
import type { AttemptResult, Calibration, VerifyRecord } from "./types.js";
import {
  changedScorers,
  disagreesWithCase,
  type RegradeVerdict,
  regradeVerdict,
  verifyPlan,
} from "./verify.js";

/**
 * verify_repeats, or the automatic rerun of an attempt that disagrees with its case: the scorers
 * grade the same final workspace again (`again`, logs under verify-N/). When the gradings disagree,
 * the case's verifier is calibrated (`calibrate`) to tell a flaky verifier from flaky code.
 */
export async function regrade(
  input: { spec: CaseSpec; attempt: number; peers: readonly AttemptResult[] },
  first: Grading,
  again: (round: number, only: boolean[], first: Grading) => Promise<Grading>,
  calibrate: (repeats: number[], rounds: number) => Promise<Calibration>,
): Promise<{ verify?: VerifyRecord; verdict?: RegradeVerdict }> {
  const { spec } = input;
  const disagrees = disagreesWithCase(first.passed, input.peers, input.attempt);
  const plan = verifyPlan(spec.test.scorers, spec.test.verifyRepeats, disagrees);
  const rounds = first.errored.length === 0 ? Math.max(0, ...plan.repeats) : 0;
  if (rounds === 0) return {};
  const verdicts = [first.passed];
  const changed = new Set<string>();
  for (let i = 1; i <= rounds; i++) {
    const graded = await again(
      i,
      plan.repeats.map((n) => n >= i),
      first,
    );
    verdicts.push(graded.passed);
    for (const name of changedScorers(first, graded)) changed.add(name);
  }
  const passes = verdicts.filter(Boolean).length;
  const verify: VerifyRecord = {
    runs: verdicts.length,
    passed: passes,
    automatic: plan.automatic,
    scorers: spec.test.scorers.filter((_, j) => plan.repeats[j]! > 0).map((s) => s.name),
  };
  if (passes === 0 || passes === verdicts.length) return { verify };
  const why = plan.automatic
    ? "automatic rerun: the attempt disagreed with every other attempt of its case"
    : "verify_repeats";
  const calibration = await calibrate(plan.repeats, rounds).catch((error: unknown) => ({
    error: (error as Error).message,
  }));
  if (!("error" in calibration)) verify.calibration = calibration;
  return { verify, verdict: regradeVerdict(passes, verdicts.length, [...changed], why, calibration) };
}
