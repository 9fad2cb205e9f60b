/**
 * Solvability of tests (`evalgate validate --solvable`): for every test, the reference patch must
 * pass and the unchanged workspace (noop) must fail, in every one of N attempts. Pure: it reads the
 * attempts' statuses and messages only.
 *
 *   unsolvable         no reference patch, or the reference never passed (it does not fix the bug,
 *                      does not apply, or the setup fails)
 *   trivially_passing  noop passed every attempt: the verifier does not detect the bug
 *   flaky_verifier     reference or noop attempts disagree: the verifier is not deterministic
 *   verifier_error     the scorers could not run on the unchanged workspace (noop errored)
 */
import type { AttemptResult } from "../run/types.js";

export type SolvabilityProblemKind = "unsolvable" | "trivially_passing" | "flaky_verifier" | "verifier_error";

export interface SolvabilityProblem {
  kind: SolvabilityProblemKind;
  detail: string;
}

export interface SideOutcome {
  attempts: number;
  passed: number;
  failed: number;
  errored: number;
  /** One reason per distinct failure or error message, first seen first. */
  messages: string[];
}

export interface TestSolvability {
  evalPath: string;
  testId: string;
  suite: string;
  /** Null when the test has no reference patch. */
  reference: SideOutcome | null;
  noop: SideOutcome;
  problems: SolvabilityProblem[];
}

export function sideOutcome(tries: readonly AttemptResult[]): SideOutcome {
  const messages: string[] = [];
  for (const t of tries) {
    if (t.status !== "passed" && t.message && !messages.includes(t.message)) messages.push(t.message);
  }
  return {
    attempts: tries.length,
    passed: tries.filter((t) => t.status === "passed").length,
    failed: tries.filter((t) => t.status === "failed").length,
    errored: tries.filter((t) => t.status === "error" || t.status === "timeout").length,
    messages,
  };
}

const of = (n: number, total: number) => `${n} of ${total} attempt${total === 1 ? "" : "s"}`;
const first = (s: SideOutcome) => (s.messages[0] ? `: ${s.messages[0]}` : "");

export function judgeSolvability(reference: SideOutcome | null, noop: SideOutcome): SolvabilityProblem[] {
  const problems: SolvabilityProblem[] = [];
  if (!reference) {
    problems.push({
      kind: "unsolvable",
      detail: "the test has no reference patch, so nothing shows it can be solved (add reference: fix.patch)",
    });
  } else if (reference.passed === 0) {
    problems.push({
      kind: "unsolvable",
      detail: `the reference patch passed ${of(0, reference.attempts)}${first(reference)}`,
    });
  } else if (reference.passed < reference.attempts) {
    problems.push({
      kind: "flaky_verifier",
      detail: `the reference patch passed ${of(reference.passed, reference.attempts)}${first(reference)}`,
    });
  }
  if (noop.passed === noop.attempts && noop.attempts > 0) {
    problems.push({
      kind: "trivially_passing",
      detail: `the unchanged workspace (noop) passed ${of(noop.passed, noop.attempts)}: the scorers do not detect the problem`,
    });
  } else if (noop.passed > 0) {
    problems.push({
      kind: "flaky_verifier",
      detail: `the unchanged workspace (noop) passed ${of(noop.passed, noop.attempts)}`,
    });
  } else if (noop.errored > 0) {
    problems.push({
      kind: "verifier_error",
      detail: `the scorers could not grade the unchanged workspace (noop) in ${of(noop.errored, noop.attempts)}${first(noop)}`,
    });
  }
  return problems;
}
