/** The report of `evalgate validate --solvable`: text for people, JSON for tools. Pure. */
import type { SideOutcome, SolvabilityProblemKind, TestSolvability } from "../gate/solvability.js";

export const SOLVABILITY_SCHEMA = "evalgate.solvability/v1";

const LABEL: Record<SolvabilityProblemKind, string> = {
  unsolvable: "unsolvable",
  trivially_passing: "trivially passing",
  flaky_verifier: "flaky verifier",
  verifier_error: "verifier error",
};

function sideText(name: string, s: SideOutcome | null): string {
  if (!s) return `${name}: none`;
  return `${name} passed ${s.passed}/${s.attempts}`;
}

export function renderSolvabilityText(tests: readonly TestSolvability[], attempts: number): string {
  const bad = tests.filter((t) => t.problems.length > 0);
  const lines: string[] = [];
  for (const t of tests) {
    const name = `${t.suite}/${t.testId}`;
    const sides = `(${sideText("reference", t.reference)}, ${sideText("noop", t.noop)})`;
    if (t.problems.length === 0) {
      lines.push(`✓ solvable  ${name} ${sides}`);
      continue;
    }
    lines.push(`✗ ${t.problems.map((p) => LABEL[p.kind]).join(", ")}  ${name} ${sides}`);
    for (const p of t.problems) lines.push(`    - ${p.detail}`);
  }
  const n = tests.length;
  const each = `${attempts} attempt${attempts === 1 ? "" : "s"} each of reference and noop`;
  lines.push("");
  lines.push(
    bad.length === 0
      ? `✓ ${n === 1 ? "the test is" : `all ${n} tests are`} solvable (${each})`
      : `✗ ${bad.length} of ${n} test${n === 1 ? "" : "s"} ${bad.length === 1 ? "is" : "are"} not solvable as written (${each})`,
  );
  return `${lines.join("\n")}\n`;
}

const wireSide = (s: SideOutcome | null) =>
  s && { attempts: s.attempts, passed: s.passed, failed: s.failed, errored: s.errored, messages: s.messages };

export function solvabilityJson(tests: readonly TestSolvability[], attempts: number, bundle: string | null) {
  return {
    schema: SOLVABILITY_SCHEMA,
    attempts,
    tests: tests.length,
    solvable: tests.filter((t) => t.problems.length === 0).length,
    results: tests.map((t) => ({
      eval_path: t.evalPath,
      test_id: t.testId,
      suite: t.suite,
      solvable: t.problems.length === 0,
      reference: wireSide(t.reference),
      noop: wireSide(t.noop),
      problems: t.problems,
    })),
    bundle,
  };
}
