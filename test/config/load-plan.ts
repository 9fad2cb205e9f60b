/**
 * The plan as `evalgate validate` loads it: the eval files (config/plan/), checked by the run's
 * preflight in the same pass, with the CLI's spelling of options in messages. The tests of the
 * eval-file stage check what a user sees, whichever stage finds the problem.
 */
import { CLI_NAMING } from "../../src/cli/args.js";
import type { PlanOptions } from "../../src/config/plan/index.js";
import type { Plan } from "../../src/config/types.js";
import { checkedPlan } from "../../src/pipeline/plan.js";

export function loadPlan(opts: Omit<PlanOptions, "naming" | "checks">): Promise<Plan> {
  return checkedPlan({ naming: CLI_NAMING, ...opts });
}
