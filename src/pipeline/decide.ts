/**
 * The run's decisions, made from the in-memory results: each case's verdict and its change
 * against the baseline, the scheduler's question for adaptive attempts, and the run gate. The
 * bundle records them; it is never read back to decide.
 */
import type { BaseHistory } from "../bundle/history.js";
import { changeAgainst } from "../bundle/merge-decide.js";
import type { FinishedCase } from "../bundle/write.js";
import { type CaseGate, type CaseSpec, type EvalRoot, identityKey, type Plan } from "../config/types.js";
import { attemptsWanted, CaseSchedule, type Counted } from "../gate/adaptive.js";
import { type Admission, admissionOf } from "../gate/admission.js";
import { type CaseDecision, decideCase, lastTries } from "../gate/case.js";
import { type CaseHistory, pooledSide } from "../gate/history.js";
import { decideRun, type GateCase, type RunGate } from "../gate/run.js";
import type { AttemptResult, CaseRun } from "../run/types.js";
import { totalsOfAttempts } from "../run/usage.js";

/** Each case's base runs, when the run compares with a base: pooled by the case's history key. */
export type BaseOf = (spec: CaseSpec) => CaseHistory;

/** The base runs of the plan's cases in `history`, each case's by its own history key. */
export function baseOf(history: BaseHistory, keys: ReadonlyMap<string, string>): BaseOf {
  const made = new Map<string, CaseHistory>();
  return (spec) => {
    let h = made.get(spec.key);
    if (!h) {
      h = history.of(identityKey(spec.identity), keys.get(spec.key) ?? null);
      made.set(spec.key, h);
    }
    return h;
  };
}

/** Each case's verdict from its tries, and its change against the base when there is one. */
export function finishCases(
  runs: readonly CaseRun[],
  base: BaseOf | undefined,
  schedules: Schedules = schedulesOf([], [], undefined),
  keys: ReadonlyMap<string, string> = new Map(),
): FinishedCase[] {
  return runs.map((r) => {
    const planned = Math.max(r.spec.repeat, ...r.tries.map((t) => t.attempt));
    const decision = decideCase(r.tries, planned, r.spec.gate, schedules(r.spec));
    const history = base?.(r.spec);
    const change = history ? changeAgainst(history, decision) : null;
    const key = keys.get(r.spec.key);
    return {
      spec: r.spec,
      tries: r.tries,
      decision,
      change,
      admission: schedules.admission(r.spec),
      ...(key ? { historyKey: key } : {}),
      ...(history ? { history } : {}),
    };
  });
}

/** A finished case as the gate weighs it. */
export function gateCaseOf(c: FinishedCase): GateCase {
  return {
    identity: c.spec.identity,
    rootEvalPath: c.spec.rootEvalPath,
    suite: c.spec.suite,
    decision: c.decision,
    change: c.change,
    usage: totalsOfAttempts(c.tries),
    ...(c.admission ? { admission: c.admission } : {}),
  };
}

/**
 * The run gate over the finished cases but the `excluded` ones (quarantined) and the proposed ones
 * (new in the pull request, docs/exam.md): they run and are reported, but do not gate.
 */
export function decideRunGate(
  plan: Plan,
  finished: readonly FinishedCase[],
  budgetStops: ReadonlyMap<string, string>,
  excluded: (c: FinishedCase) => boolean = () => false,
): RunGate {
  const gating = finished.filter((c) => !excluded(c) && c.spec.exam?.status !== "proposed");
  return decideRun(plan.roots, gating.map(gateCaseOf), budgetStops);
}

/** Each case's schedule (its looks, rate design and what gives it more attempts) and admission. */
export interface Schedules {
  (spec: CaseSpec): CaseSchedule;
  admission(spec: CaseSpec): Admission;
}

/**
 * The schedules of a plan's cases. A case's verdict gates (and an open rate gets more attempts)
 * unless its history does not admit it (gate/admission.ts). Against a base, with
 * `regressions.evidence: significant`, a drop keeps a case open at the root's α divided by the
 * cases compared (the strictest step of Holm's correction, so a drop decided here stays decided
 * in the gate).
 */
export function schedulesOf(
  roots: readonly EvalRoot[],
  cases: readonly CaseSpec[],
  base: BaseOf | undefined,
): Schedules {
  const byPath = new Map(roots.map((r) => [r.evalPath, r]));
  const compared = new Map<string, number>();
  for (const c of cases) {
    if (base && base(c).runs.length > 0)
      compared.set(c.rootEvalPath, (compared.get(c.rootEvalPath) ?? 0) + 1);
  }
  const range = (spec: CaseSpec) => ({ min: spec.repeat, max: spec.repeatMax ?? spec.repeat });
  const admissions = new Map<string, Admission>();
  const admission = (spec: CaseSpec): Admission => {
    let a = admissions.get(spec.key);
    if (!a) {
      const root = byPath.get(spec.rootEvalPath);
      a = admissionOf(base?.(spec), spec.gate, range(spec), root?.onInconclusive ?? "warn");
      admissions.set(spec.key, a);
    }
    return a;
  };
  const made = new Map<string, CaseSchedule>();
  const schedules = (spec: CaseSpec) => {
    const known = made.get(spec.key);
    if (known) return known;
    const root = byPath.get(spec.rootEvalPath);
    const side = base ? pooledSide(base(spec)) : undefined;
    const tests = root && root.regressions !== "ignore" && root.regressionEvidence === "significant";
    const level = (root?.regressionAlpha ?? 0.05) / Math.max(1, compared.get(spec.rootEvalPath) ?? 1);
    const schedule = new CaseSchedule({
      gate: spec.gate,
      range: range(spec),
      verdictGates: admission(spec).state !== "reported",
      drop: side && tests ? { base: side, level } : undefined,
    });
    made.set(spec.key, schedule);
    return schedule;
  };
  return Object.assign(schedules, { admission });
}

/** The counted outcomes of a case's tries so far, in attempt order. */
export function countedOutcomes(tries: readonly AttemptResult[]): Counted[] {
  return lastTries(tries)
    .filter((t) => t.status === "passed" || t.status === "failed")
    .map((t) => ({
      passed: t.status === "passed",
      passRate: t.grading?.passRate ?? (t.status === "passed" ? 1 : 0),
    }));
}

/**
 * Whether a case's `error` verdict is one that more attempts cannot change: an attempt cancelled, or
 * errored for good under `on_error: fail | retry` (it makes the case `error` whatever the others
 * do), or, under `exclude`, no attempt counted at all (an agent that cannot start fails the same way
 * every time: more tries would only repeat it).
 */
function errorSettled(d: CaseDecision, gate: CaseGate): boolean {
  if (d.verdict !== "error") return false;
  if (d.counts.cancelled > 0 || d.counts.counted === 0) return true;
  return d.counts.errored > 0 && gate.onError !== "exclude";
}

/**
 * The scheduler's question before a retry: whether the case's verdict is already settled as
 * `error` by the attempts whose tries are over, so that no retry can change it.
 */
export function caseErrorSettled(spec: CaseSpec, settledTries: readonly AttemptResult[]): boolean {
  if (settledTries.length === 0) return false;
  const planned = Math.max(...settledTries.map((t) => t.attempt));
  return errorSettled(decideCase(settledTries, planned, spec.gate), spec.gate);
}

/** The scheduler's question for adaptive attempts, answered by the case's schedule. */
export function adaptiveAttempts(
  schedules: Schedules,
): (spec: CaseSpec, tries: readonly AttemptResult[], planned: number) => number {
  return (spec, tries, planned) => {
    if (errorSettled(decideCase(tries, planned, spec.gate), spec.gate)) return 0;
    return attemptsWanted(schedules(spec), planned, countedOutcomes(tries));
  };
}
