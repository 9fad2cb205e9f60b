/**
 * `evalgate validate --solvable`: every test is run through the real pipeline (fresh workspaces,
 * setup, scorers) with two built-in targets, `reference` (the test's known-good patch) and `noop`
 * (no change), N attempts each, whatever targets the eval files declare. A test is solvable when
 * the reference passes and noop fails every time. The bundle goes to a temporary folder unless
 * `--out` asks for it, so the user's .evalgate is left alone.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { OptionNaming } from "../config/options.js";
import type { PlanOptions } from "../config/plan/index.js";
import { type CaseSpec, identityKey, type Plan, type TargetSpec } from "../config/types.js";
import { judgeSolvability, sideOutcome, type TestSolvability } from "../gate/solvability.js";
import { checkedPlan } from "./plan.js";
import { type RunDeps, runPlan } from "./run.js";

export interface SolvableOptions extends PlanOptions {
  /** Attempts per test and side (reference, noop). */
  attempts: number;
  /** Keep the bundle here; default: a temporary folder, removed afterwards. */
  out?: string;
  workDir?: string;
  /** How the edge spells the options, for messages about them. */
  naming: OptionNaming;
}

export interface SolvabilityReport {
  tests: TestSolvability[];
  /** The bundle folder, when --out kept it. */
  bundleDir: string | null;
}

const builtin = (provider: "reference" | "noop"): TargetSpec => ({
  name: provider,
  provider,
  args: [],
  env: {},
  envPassthrough: [],
});

/** The plan of the check: per distinct test, a reference case (when it has a patch) and a noop case. */
export function solvabilityPlan(plan: Plan, attempts: number): Plan {
  const seen = new Set<string>();
  const cases: CaseSpec[] = [];
  for (const c of plan.cases) {
    const testKey = `${c.identity.evalPath}\u0000${c.identity.testId}`;
    if (seen.has(testKey)) continue;
    seen.add(testKey);
    for (const provider of ["reference", "noop"] as const) {
      if (provider === "reference" && !c.test.reference) continue;
      const identity = { ...c.identity, target: provider };
      cases.push({
        ...c,
        identity,
        key: identityKey(identity),
        target: builtin(provider),
        repeat: attempts,
        // Every attempt is evidence: no retries, no exclusion.
        gate: { policy: "all_attempts_successful", onError: "fail", retries: 0 },
      });
    }
  }
  // The check is not the run: no budgets stop it.
  return { ...plan, cases, roots: plan.roots.map((r) => ({ ...r, budget: {} })) };
}

export async function checkSolvability(opts: SolvableOptions, deps: RunDeps): Promise<SolvabilityReport> {
  // The eval files' own agents do not run here, so they need not be installed.
  const plan = solvabilityPlan(
    await checkedPlan(opts, { agentPrograms: false, variables: true }),
    opts.attempts,
  );
  for (const note of plan.notes) deps.logger.info(`note: ${note}`);
  const temp = opts.out ? undefined : await mkdtemp(path.join(os.tmpdir(), "evalgate-solvable-"));
  try {
    const run = await runPlan(plan, { ...opts, out: opts.out ?? temp! }, deps);
    const byTest = new Map<string, TestSolvability>();
    for (const c of run.cases) {
      const { evalPath, testId } = c.spec.identity;
      const key = `${evalPath}\u0000${testId}`;
      let t = byTest.get(key);
      if (!t) {
        t = { evalPath, testId, suite: c.spec.suite, reference: null, noop: sideOutcome([]), problems: [] };
        byTest.set(key, t);
      }
      if (c.spec.target.provider === "reference") t.reference = sideOutcome(c.tries);
      else t.noop = sideOutcome(c.tries);
    }
    const tests = [...byTest.values()];
    for (const t of tests) t.problems = judgeSolvability(t.reference, t.noop);
    return { tests, bundleDir: opts.out ? run.bundleDir : null };
  } finally {
    if (temp) await rm(temp, { recursive: true, force: true }).catch(() => undefined);
  }
}
