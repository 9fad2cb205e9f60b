/**
 * One side of a plan: the root eval files found, read with their includes, and the tests they
 * bring. A plan has one side (the checkout's files), or two when the exam comes from another
 * commit (exam.ts): the exam's files and the checkout's.
 */
import path from "node:path";
import type { EvalRoot } from "../types.js";
import type { PlanContext } from "./context.js";
import { evalRootOf } from "./gate.js";
import type { EvalFiles } from "./includes.js";
import type { LoadedEval, TestRecord } from "./records.js";

export interface Side {
  ctx: PlanContext;
  files: EvalFiles;
  roots: EvalRoot[];
  records: TestRecord[];
  notes: string[];
}

/** Reads the root eval files `found` (absolute) and the tests each brings, but `skipEvals`'. */
export async function loadSide(
  ctx: PlanContext,
  files: EvalFiles,
  found: readonly string[],
  skipEvals?: ReadonlySet<string>,
): Promise<Side> {
  const loadedRoots = (await Promise.all(found.map((f) => files.load(f)))).filter(
    (l): l is LoadedEval => !!l,
  );
  const testsOfRoot = new Map<string, TestRecord[]>();
  for (const loaded of loadedRoots) testsOfRoot.set(loaded.src.path, await files.testsOf(loaded));

  const notes: string[] = [];
  const records: TestRecord[] = [];
  const roots: EvalRoot[] = [];
  for (const loaded of loadedRoots) {
    if (files.suiteFiles.has(path.resolve(loaded.src.path))) {
      notes.push(`${loaded.src.display} runs as a suite of the eval files that include it, not on its own`);
      continue;
    }
    if (skipEvals?.has(loaded.evalPath)) continue;
    records.push(...(testsOfRoot.get(loaded.src.path) ?? []));
    roots.push(evalRootOf(loaded));
  }
  return { ctx, files, roots, records, notes };
}
