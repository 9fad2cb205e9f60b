/**
 * What the scorers see besides the agent's work: protected paths (restored before scoring) and
 * hidden verifiers (copied in for scoring). A test's list replaces the eval file's.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { isWithin } from "../../paths.js";
import type { ScoringGuards, SeedSpec, VerifierSpec } from "../types.js";
import type { PlanContext } from "./context.js";
import type { WorkspaceSource } from "./workspace.js";

/**
 * Protected globs and hidden verifiers: a test's list replaces the eval file's. Verifier files
 * must exist and must not be inside a folder seed (the agent would see them there).
 */
export function resolveGuards(
  ctx: PlanContext,
  def: WorkspaceSource,
  over: WorkspaceSource,
  seed: SeedSpec | undefined,
): ScoringGuards {
  const protFrom = over.input?.protected ? over : def;
  const globs = protFrom.input?.protected ?? [];
  globs.forEach((g, i) => {
    const at = [...protFrom.at, "protected", i];
    const problem = workspaceRelativeProblem(g);
    if (problem) {
      ctx.problem(protFrom.src, at, `protected path "${g}" ${problem}`, 'for example "test/**"');
      return;
    }
    try {
      picomatch.makeRe(g, { dot: true, strictBrackets: true });
    } catch (e) {
      ctx.problem(protFrom.src, at, `bad glob "${g}": ${(e as Error).message}`);
    }
  });
  const verFrom = over.input?.verifiers ? over : def;
  const verifiers: VerifierSpec[] = [];
  for (const [i, v] of (verFrom.input?.verifiers ?? []).entries()) {
    const at = [...verFrom.at, "verifiers", i];
    const from = path.resolve(verFrom.dir, v.from);
    // Both ends are checked, so a user fixing one does not meet the other's problem next.
    const toProblem = workspaceRelativeProblem(v.to);
    if (toProblem) {
      ctx.problem(
        verFrom.src,
        [...at, "to"],
        `verifier destination "${v.to}" ${toProblem}`,
        "for example to: test/cart.test.js",
      );
    }
    if (!existsSync(from)) {
      ctx.problem(
        verFrom.src,
        [...at, "from"],
        `verifier ${ctx.display(from)} does not exist`,
        ctx.relativeHint(verFrom.dir),
      );
      continue;
    }
    if (seed?.kind === "path" && isWithin(seed.path, from)) {
      ctx.problem(
        verFrom.src,
        [...at, "from"],
        `verifier ${ctx.display(from)} is inside the seed folder ${ctx.display(seed.path)}, so the agent would see it`,
        "keep hidden verifiers outside the seed, for example in a verifiers/ folder beside the eval file",
      );
      continue;
    }
    if (toProblem) continue;
    verifiers.push({ from, to: path.posix.normalize(v.to.replaceAll("\\", "/")).replace(/\/+$/, "") });
  }
  const guards: ScoringGuards = { protected: [...globs], verifiers };
  // A test's setting replaces the file's; absent everywhere: protected.
  const setupTrees = over.input?.setup_trees ?? def.input?.setup_trees;
  const testConfig = over.input?.test_config ?? def.input?.test_config;
  if (setupTrees) guards.setupTrees = setupTrees;
  if (testConfig) guards.testConfig = testConfig;
  return guards;
}

/** Why `p` is not a plain path inside the workspace, or undefined when it is. */
function workspaceRelativeProblem(p: string): string | undefined {
  const posix = p.replaceAll("\\", "/");
  if (posix.startsWith("/") || /^[A-Za-z]:/.test(posix)) return "must be relative to the workspace";
  const norm = path.posix.normalize(posix);
  if (norm === ".." || norm.startsWith("../")) return "leaves the workspace";
  if (norm === "." || norm === "./") return "is the whole workspace";
  if (norm === ".git" || norm.startsWith(".git/")) return "is inside .git, which evalgate manages";
  return undefined;
}
