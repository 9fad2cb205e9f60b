/**
 * Verifier reruns (`verify_repeats`, docs/gate.md "Verifier flakes"): which scorers run again on an
 * attempt's final workspace, and how often. Pure: the attempt (run/attempt.ts) asks while the
 * workspace still exists, before it is discarded.
 */
import type { AttemptResult } from "./types.js";

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
