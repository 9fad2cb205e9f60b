/**
 * `gate:` → a case's gate (policy, min_rate, errors and retries) and a root eval file's run-level
 * rules (pass rate of cases, regressions, inconclusive cases, budget).
 */
import { parseDuration } from "../duration.js";
import type { GateInput } from "../schema/gate.js";
import type { Budget, CaseGate, EvalRoot } from "../types.js";
import { prunedUnder, type YamlSource } from "../yaml.js";
import type { PlanContext } from "./context.js";
import type { LoadedEval, Policy } from "./records.js";

/** The gate of a case under `policy`; `src` is the root eval file whose `gate:` it comes from. */
export function caseGate(ctx: PlanContext, policy: Policy, src: YamlSource): CaseGate {
  const given = policy.gate ?? {};
  const minRate = ctx.renamed(src, ["gate"], given, "threshold", "min_rate", "the rate a case needs");
  const gate = { ...given, threshold: minRate };
  const p = gate.policy ?? "all_attempts_successful";
  const needsThreshold = p === "attempt_success_rate_at_least" || p === "mean_pass_rate_at_least";
  // A policy or threshold dropped for a schema error was reported; their pairing is checked next time.
  const unsure = prunedUnder(src, ["gate"]);
  if (!unsure && needsThreshold && gate.threshold === undefined) {
    ctx.problem(
      src,
      ["gate", "policy"],
      `policy ${p} needs a min_rate`,
      "add gate.min_rate: a number in [0, 1], e.g. 0.67",
    );
  }
  if (!unsure && !needsThreshold && gate.threshold !== undefined) {
    ctx.problem(
      src,
      ["gate", given.min_rate !== undefined ? "min_rate" : "threshold"],
      `policy ${p} takes no min_rate`,
      "remove it, or use attempt_success_rate_at_least / mean_pass_rate_at_least",
    );
  }
  const onError = gate.on_error ?? "fail";
  if (gate.retries !== undefined && onError !== "retry") {
    ctx.problem(
      src,
      ["gate", "retries"],
      `retries only applies with on_error: retry (on_error is ${onError})`,
      "add on_error: retry, or remove retries",
    );
  }
  const out: CaseGate = { policy: p, onError, retries: onError === "retry" ? (gate.retries ?? 1) : 0 };
  if (needsThreshold && gate.threshold !== undefined) out.threshold = gate.threshold;
  return out;
}

/** A root eval file with its run-level rules. */
export function evalRootOf(loaded: LoadedEval): EvalRoot {
  const gate = loaded.file.gate;
  const root: EvalRoot = {
    path: loaded.src.path,
    evalPath: loaded.evalPath,
    name: loaded.name,
    tags: loaded.file.tags ?? {},
    minCasePassRate: gate?.min_case_pass_rate ?? 1,
    ...regressionRule(gate?.regressions),
    onInconclusive: gate?.on_inconclusive ?? "warn",
    budget: budgetOf(gate?.budget),
  };
  if (loaded.file.description) root.description = loaded.file.description;
  if (loaded.file.concurrency) root.concurrency = loaded.file.concurrency;
  if (loaded.file.paths) root.paths = loaded.file.paths;
  return root;
}

function budgetOf(b: GateInput["budget"]): Budget {
  const out: Budget = {};
  if (b?.cost_usd !== undefined) out.costUsd = b.cost_usd;
  if (b?.tokens !== undefined) out.tokens = b.tokens;
  if (b?.duration !== undefined) out.durationMs = parseDuration(b.duration);
  return out;
}

/** The plain `regressions: fail` or `{on, evidence, alpha}`; a new file's default needs evidence. */
function regressionRule(
  r: GateInput["regressions"],
): Pick<EvalRoot, "regressions" | "regressionEvidence" | "regressionAlpha"> {
  const rule = typeof r === "object" ? r : { on: r };
  return {
    regressions: rule.on ?? "fail",
    regressionEvidence: (typeof r === "object" ? r.evidence : undefined) ?? "significant",
    regressionAlpha: (typeof r === "object" ? r.alpha : undefined) ?? 0.05,
  };
}
