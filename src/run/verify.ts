/**
 * Verifier reruns (`verify_repeats`, docs/gate.md "Verifier flakes"): which scorers run again on an
 * attempt's final workspace, and how often, and what a disagreement means once the verifier is
 * calibrated (run/calibrate.ts). Pure: the attempt (run/attempt.ts) asks while the workspace still
 * exists, before it is discarded.
 */
import type { Grading } from "../scorers/grading.js";
import type { AttemptResult, Calibration } from "./types.js";

/** Reruns of every scorer of an attempt that disagrees with the rest of its case, unless set. */
export const AUTO_VERIFY_REPEATS = 2;

/** Other counted attempts an attempt must disagree with, all of them, to be rerun automatically. */
export const AUTO_VERIFY_PEERS = 2;

/**
 * Whether an attempt that just finished disagrees with the rest of its case so far: at least
 * AUTO_VERIFY_PEERS other attempts of the case had a counted outcome (passed or failed) when its
 * scorers finished, and every one of them had the other verdict (the only failure among passes,
 * or the only pass among failures). Errored tries and other verifier flakes are not peers.
 */
export function disagreesWithCase(
  passed: boolean,
  peers: readonly AttemptResult[],
  attempt: number,
): boolean {
  const counted = peers.filter(
    (p) => p.attempt !== attempt && (p.status === "passed" || p.status === "failed"),
  );
  if (counted.length < AUTO_VERIFY_PEERS) return false;
  return counted.every((p) => (p.status === "passed") !== passed);
}

export interface VerifyPlan {
  /** Reruns per scorer, in the test's scorer order (0: not rerun). */
  repeats: number[];
  /** The reruns come from the automatic rule only (no setting asked for them). */
  automatic: boolean;
}

/**
 * Each scorer's reruns: its own `verify_repeats`, else the test's, else AUTO_VERIFY_REPEATS when
 * the attempt disagrees with the rest of its case. An explicit 0 (scorer or test) turns reruns off.
 */
export function verifyPlan(
  scorers: readonly { verifyRepeats?: number }[],
  testRepeats: number | undefined,
  disagrees: boolean,
): VerifyPlan {
  const auto = disagrees ? AUTO_VERIFY_REPEATS : 0;
  const repeats = scorers.map((s) => s.verifyRepeats ?? testRepeats ?? auto);
  const explicit = scorers.some((s, i) => s.verifyRepeats !== undefined && repeats[i]! > 0);
  return { repeats, automatic: !explicit && (testRepeats ?? 0) === 0 && repeats.some((n) => n > 0) };
}

/** The scorers whose result differs between two gradings: state, verdict or score. */
export function changedScorers(first: Grading, again: Grading): string[] {
  return again.scorers
    .filter((s, j) => {
      const was = first.scorers[j]!.result;
      const now = s.result;
      if (now.state !== was.state) return true;
      return (
        now.state === "complete" &&
        was.state === "complete" &&
        (now.passed !== was.passed || now.score !== was.score)
      );
    })
    .map((s) => s.name);
}

export interface RegradeVerdict {
  status: "failed" | "error";
  failureStage: "scorer";
  failureKind: "quality" | "verifier_flake";
  message: string;
}

const gradings = (n: number) => `${n} grading${n === 1 ? "" : "s"}`;

/**
 * The outcome of an attempt whose gradings disagreed (`passes` of `runs`, `changed` scorers): a
 * verifier flake only when the same scorer also disagrees with itself on the reference or start
 * tree (`calibration`); otherwise the agent's code is what varies, and the attempt fails, counted
 * (docs/decisions/0193). Without a calibration (it could not be made), the benefit of the doubt:
 * a verifier flake.
 */
export function regradeVerdict(
  passes: number,
  runs: number,
  changed: readonly string[],
  why: string,
  calibration: Calibration | { error: string },
): RegradeVerdict {
  const which = changed.length > 0 ? ` (${changed.join(", ")} changed)` : "";
  const flake = (tail: string): RegradeVerdict => ({
    status: "error",
    failureStage: "scorer",
    failureKind: "verifier_flake",
    message: `the scorers disagreed with themselves on the same workspace: passed ${passes} of ${runs} runs${which} (${why})${tail}; not counted for the agent`,
  });
  if ("error" in calibration)
    return flake(`, and the verifier could not be calibrated: ${calibration.error}`);
  const where = calibration.on === "reference" ? "the reference" : "the start tree";
  const shared = changed.filter((n) => calibration.changed.includes(n));
  const alsoFlaky = shared.length > 0 || (changed.length === 0 && calibration.changed.length > 0);
  if (alsoFlaky) {
    const names = (shared.length > 0 ? shared : calibration.changed).join(", ");
    return flake(
      `, and on ${where} too (${names} changed; passed ${calibration.passed} of ${calibration.runs})`,
    );
  }
  return {
    status: "failed",
    failureStage: "scorer",
    failureKind: "quality",
    message: `the agent's code passed ${passes} of ${gradings(runs)}${which} (${why}) while the verifier is stable on ${where} (${calibration.passed} of ${gradings(calibration.runs)} passed, every scorer the same each time): its code is what varies, so the attempt fails`,
  };
}

/** Scorers that run the workspace's code (the agent's): their error may be that code's doing. */
const RUNS_THE_CODE: ReadonlySet<string> = new Set(["command", "script", "tests"]);

/**
 * Whether a grading where scorers could not run (`first.errored`) is worth calibrating: every one
 * of them runs the workspace's code, so the code under test may have broken it (exited before the
 * report, written a bad one, killed itself, never returned, removed the runner), or its error says
 * it may be the attempt's doing (`fromAttempt`: a judge's unreadable answer about the diff, 0249).
 * Any other error (a judge that cannot be reached, a diff or file check) is the scorer's own.
 */
export function erroredByCode(first: Grading): boolean {
  return (
    first.errored.length > 0 &&
    first.scorers.every(
      (s) => s.result.state !== "error" || RUNS_THE_CODE.has(s.type) || s.result.fromAttempt === true,
    )
  );
}

/**
 * The outcome of an attempt whose scorers could not run, once the same scorers graded the reference
 * or the start tree (`calibration`): if every one of them ran there, the agent's code is what broke
 * them and the attempt fails, counted (docs/decisions/0247); if any could not run there either (the
 * eval file's scorer is wrong, the runner is in trouble), undefined: it stays an error.
 */
export function erroredVerdict(first: Grading, calibration: Calibration): RegradeVerdict | undefined {
  if (first.errored.some((n) => calibration.errored?.includes(n))) return undefined;
  const broken = first.scorers.find((s) => s.result.state === "error")!;
  const reason = broken.result.state === "error" ? broken.result.reason : "";
  const where = calibration.on === "reference" ? "the reference" : "the start tree";
  const there = calibration.passed > 0 ? "passed" : "failed";
  return {
    status: "failed",
    failureStage: "scorer",
    failureKind: "quality",
    message: `scorer ${broken.name} could not run on the agent's code: ${reason}; on ${where} it ran (${there}), so the agent's code is what stopped it`,
  };
}

/**
 * Whether regrading decides the attempt's status (run/attempt.ts): never over tampering, nor over an
 * error other than a scorer's that the calibration blames on the agent's code (0247); a failure the
 * calibration confirms keeps its own kind (an agent_exit stays one), with the calibration's message
 * when the kinds agree.
 */
export function overridable(r: AttemptResult, verdict: RegradeVerdict): boolean {
  if (r.status === "passed") return true;
  if (r.status === "error" && r.failureStage === "scorer") return verdict.status === "failed";
  if (r.status !== "failed" || r.failureKind === "tampered") return false;
  return verdict.failureKind === "verifier_flake" || verdict.failureKind === r.failureKind;
}
