/**
 * What the scorers see besides the agent's work: protected paths (restored before scoring) and
 * hidden verifiers (copied in for scoring). A test's list replaces the eval file's.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { isWithin } from "../../paths.js";
import type { ScoringGuards, SeedSpec, VerifierSpec } from "../types.js";
import type { PathKey, YamlSource } from "../yaml.js";
import type { PlanContext } from "./context.js";
import type { WorkspaceSource } from "./workspace.js";

/**
 * Protected globs and hidden verifiers: a test's list replaces the eval file's. Verifier files
 * must exist; one inside a folder seed is refused by answerKeyInSeed, with the rest of the answer key.
 */
export function resolveGuards(ctx: PlanContext, def: WorkspaceSource, over: WorkspaceSource): ScoringGuards {
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
    const from = ctx.resolve(verFrom.dir, v.from);
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
    // A verifier inside the seed is reported with the rest of the answer key (answerKeyInSeed).
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

/** Names a folder seed leaves out at any depth (workspace/archive.ts SKIPPED_SEED_FOLDERS). */
const SKIPPED = [".git", ".evalgate"];

/** Whether the copy of a folder seed holds `file` (not left out by `exclude:` or by name). */
export function inSeed(seed: SeedSpec, file: string): boolean {
  if (seed.kind !== "path" || !isWithin(seed.path, file)) return false;
  const rel = path.relative(seed.path, file).split(path.sep).join("/");
  if (rel.split("/").some((part) => SKIPPED.includes(part))) return false;
  return !(seed.exclude ?? []).some((e) => rel === e || rel.startsWith(`${e}/`));
}

/** The answer key of one test: what the agent must never see, by the word a message uses. */
export interface AnswerKey {
  evalFiles: string[];
  reference?: string;
  verifiers: string[];
}

/**
 * A folder seed that holds the eval files, a reference or a verifier puts the answer key in every
 * workspace (docs/decisions/0187): refused, with the `exclude:` that leaves them out. `at` is where
 * the seed is written.
 */
export function answerKeyInSeed(
  ctx: PlanContext,
  seed: SeedSpec | undefined,
  src: YamlSource,
  at: PathKey[],
  key: AnswerKey,
): void {
  if (seed?.kind !== "path") return;
  const found: [what: string, file: string][] = [
    ...key.evalFiles.map((f) => ["eval file", f] as [string, string]),
    ...(key.reference ? [["reference", key.reference] as [string, string]] : []),
    ...key.verifiers.map((f) => ["verifier", f] as [string, string]),
  ].filter(([, f]) => inSeed(seed, f));
  if (found.length === 0) return;
  const rel = (f: string) => path.relative(seed.path, f).split(path.sep).join("/");
  // The folder of the eval file, when it is a folder of the seed, takes the most along at once.
  const evalDir = rel(path.dirname(key.evalFiles[0] ?? seed.path));
  const leaveOut = new Set<string>();
  for (const [, f] of found) {
    const r = rel(f);
    leaveOut.add(evalDir && r.startsWith(`${evalDir}/`) ? evalDir : r.split("/")[0]!);
  }
  const what = found.map(([w, f]) => `${w} ${ctx.display(f)}`);
  const folder = path.resolve(seed.path) === path.resolve(ctx.cwd) ? "." : ctx.display(seed.path);
  ctx.problem(
    src,
    at,
    `the seed folder ${folder} holds the answer key (${what.slice(0, 3).join(", ")}${what.length > 3 ? `, and ${what.length - 3} more` : ""}): every agent would see it`,
    `leave it out of the copy with exclude: [${[...leaveOut, ...(seed.exclude ?? [])].join(", ")}] under seed:, or move it outside ${folder}`,
  );
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
