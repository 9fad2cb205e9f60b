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
  erroredByCode,
  erroredVerdict,
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
  if (first.errored.length > 0) return erroredRegrade(spec, first, calibrate);
  const disagrees = disagreesWithCase(first.passed, input.peers, input.attempt);
  const plan = verifyPlan(spec.test.scorers, spec.test.verifyRepeats, disagrees);
  const rounds = Math.max(0, ...plan.repeats);
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

/**
 * Scorers that could not run on the agent's code: an error (which on_error may retry or exclude)
 * only when they cannot run on the reference or the start tree either; otherwise the agent's code
 * stopped them and the attempt fails (docs/decisions/0247). One grading of the calibration, shared
 * by the case's attempts.
 */
async function erroredRegrade(
  spec: CaseSpec,
  first: Grading,
  calibrate: (repeats: number[], rounds: number) => Promise<Calibration>,
): Promise<{ verify?: VerifyRecord; verdict?: RegradeVerdict }> {
  if (!erroredByCode(first)) return {};
  const calibration = await calibrate(
    spec.test.scorers.map(() => 0),
    0,
  ).catch(() => undefined);
  const verdict = calibration && erroredVerdict(first, calibration);
  return verdict ? { verdict } : {};
}
