/** The run-level gate: every root eval file's rules over the cases it brought. Pure. */
import type { EvalRoot, Identity } from "../config/types.js";
import type { CaseDecision } from "./case.js";

export interface GateCase {
  identity: Identity;
  rootEvalPath: string;
  suite: string;
  decision: CaseDecision;
}

export interface RunGate {
  verdict: "pass" | "fail";
  /** Sentences a reviewer understands; the failing rules first. */
  reasons: string[];
}

export function caseLabel(c: Pick<GateCase, "suite" | "identity">): string {
  return `${c.suite}/${c.identity.testId} on ${c.identity.target}`;
}

function percent(x: number): string {
  return `${Math.round(x * 100)} %`;
}

export function decideRun(roots: readonly EvalRoot[], cases: readonly GateCase[]): RunGate {
  const failing: string[] = [];
  const passing: string[] = [];
  for (const root of roots) {
    const mine = cases.filter((c) => c.rootEvalPath === root.evalPath);
    if (mine.length === 0) continue;
    const errors = mine.filter((c) => c.decision.verdict === "error");
    for (const c of errors) failing.push(`${caseLabel(c)}: ${c.decision.reason}`);
    const passed = mine.filter((c) => c.decision.verdict === "pass").length;
    const rate = passed / mine.length;
    const needed = root.minCasePassRate;
    const summary = `${root.name}: ${passed} of ${mine.length} cases passed (${percent(rate)})`;
    if (rate + 1e-9 < needed) {
      const fails = mine.filter((c) => c.decision.verdict === "fail");
      if (needed >= 1) {
        for (const c of fails) failing.push(`${caseLabel(c)}: ${c.decision.reason}`);
      } else {
        failing.push(`${summary}; the gate needs at least ${percent(needed)} (gate.min_case_pass_rate)`);
      }
    } else if (needed < 1 && passed < mine.length) {
      passing.push(`${summary}; the gate needs at least ${percent(needed)}`);
    } else if (errors.length === 0) {
      passing.push(`${summary}`);
    }
  }
  return failing.length > 0 ? { verdict: "fail", reasons: failing } : { verdict: "pass", reasons: passing };
}
