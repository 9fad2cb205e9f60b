/**
 * What of a case is its answer key: the files no agent (nor the code it leaves, which the scorers
 * run) may read. Its verifiers and its reference; for a reference script, also the folder it lies
 * in, because a script reads what it applies from beside itself (`solution/solve.sh` with
 * `solution/fix.patch`), unless that folder holds more than the answer key (docs/exam.md).
 */
import path from "node:path";
import type { CaseSpec } from "./types.js";

export function answerKeyOf(c: CaseSpec, all: readonly CaseSpec[]): string[] {
  const folder = referenceFolder(c, all);
  return [
    ...c.test.workspace.verifiers.map((v) => v.from),
    ...(c.test.reference ? [c.test.reference] : []),
    ...(folder ? [folder] : []),
  ];
}

/**
 * The folder of a case's reference script when it can be masked whole: it is not, nor holds, any
 * case's eval file folder, and nothing that runs needs a path inside it (a target's program, a
 * scorer's files, a seed, setup). Otherwise undefined: only the script itself is masked.
 */
export function referenceFolder(c: CaseSpec, all: readonly CaseSpec[]): string | undefined {
  if (c.test.referenceKind !== "script" || !c.test.reference) return undefined;
  const folder = path.dirname(c.test.reference);
  const within = (p: string) => p === folder || p.startsWith(`${folder}${path.sep}`);
  for (const other of all) {
    if (within(other.evalDir)) return undefined;
    if (namesPathIn(other, folder)) return undefined;
  }
  return folder;
}

/** Whether what runs for a case (target, scorers, seed, setup) names a path inside `folder`. */
function namesPathIn(c: CaseSpec, folder: string): boolean {
  const { verifiers: _verifiers, ...workspace } = c.test.workspace;
  const text = JSON.stringify([c.target, c.test.scorers, workspace]).replaceAll("{EVAL_DIR}", c.evalDir);
  const inside = JSON.stringify(`${folder}${path.sep}`).slice(1, -1);
  const exact = JSON.stringify(folder);
  return text.includes(inside) || text.includes(exact);
}
