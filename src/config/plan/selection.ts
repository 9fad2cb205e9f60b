/**
 * The run's filters (`--target`, `--test`, `--tag`, or the action's inputs): which cases run. The
 * messages spell the options as the user gave them (the `OptionNaming` the edge passed in).
 */
import picomatch from "picomatch";
import { UsageError } from "../../errors.js";
import type { OptionNaming } from "../options.js";
import type { CaseSpec } from "../types.js";
import type { Expansion } from "./cases.js";
import type { PlanContext } from "./context.js";

export interface Filters {
  /** Run only these targets. */
  targets?: ReadonlySet<string>;
  /** Run only tests whose id (or `suite/id`) matches one of these globs. */
  tests?: readonly string[];
  /** Run only tests carrying one of these tags. */
  tags?: readonly string[];
}

/**
 * The cases the filters select. An unknown target is a UsageError, unless the files have problems
 * of their own (which come first: the target may be in the part that did not load).
 */
export function selectCases(
  ctx: PlanContext,
  expansion: Expansion,
  filters: Filters,
  naming: OptionNaming,
): CaseSpec[] {
  const { targets } = filters;
  if (targets) {
    const unknown = [...targets].filter((t) => !expansion.targetNames.has(t));
    if (unknown.length > 0 && ctx.problems.empty) {
      const known = [...expansion.targetNames];
      throw new UsageError(
        `${naming.given("target", unknown.join(", "))}: no such target${unknown.length > 1 ? "s" : ""} (targets: ${known.join(", ")})`,
      );
    }
  }
  return expansion.cases.filter((c) => {
    if (targets && !targets.has(c.target.name)) return false;
    if (filters.tests?.length) {
      const names = [c.identity.testId, `${c.suite}/${c.identity.testId}`];
      if (!filters.tests.some((g) => names.some((n) => picomatch.isMatch(n, g)))) return false;
    }
    if (filters.tags?.length && !filters.tags.some((t) => c.test.tags.includes(t))) return false;
    return true;
  });
}

/** Nothing to run: the files define no case, or the filters matched none. */
export function noCasesError(expansion: Expansion, naming: OptionNaming): UsageError {
  return new UsageError(
    expansion.cases.length === 0 ? "the eval files define no cases" : `no case matches ${naming.filters}`,
  );
}
