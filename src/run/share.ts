/**
 * How an attempt gets what setup built (docs/decisions/0230): shared through an overlay whose upper
 * layer is the attempt's own where this machine and the attempt allow it, else copied (by reflinks
 * where the filesystem has them). Decided per attempt; the probe of the machine runs once.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import type { CaseSpec } from "../config/types.js";
import { type OverlayMount, probeOverlay } from "../sandbox/overlay.js";
import { materializeAttempt } from "../workspace/attempt.js";
import { type ChangeMark, markCopy } from "../workspace/change-mark.js";
import { copyTree } from "../workspace/copy.js";
import { discardTree } from "../workspace/discard.js";
import { setupTreesOf } from "../workspace/setup-trees.js";
import { leanStartOf, overlaysFor, type SharingMode, shareableTrees } from "../workspace/share.js";
import type { PreparedStart } from "../workspace/start.js";
import { runTool } from "../workspace/tool.js";
import type { AttemptInput } from "./attempt.js";

export interface AttemptTrees {
  /** How the attempt got what setup built; absent when setup built nothing. */
  mode?: SharingMode;
  /** Why trees that could be shared were copied. */
  reason?: string;
  /** The shared trees (relative to the workspace root), and their overlays, in the same order. */
  shared: string[];
  overlays: OverlayMount[];
  /** evalgate's folder for the overlays' layers, outside the agent's view; removed with the attempt. */
  scratch?: string;
}

const probes = new Map<string, Promise<string | undefined>>();

/** Whether overlays work under `bwrap` on the filesystem of `parent` (once per run): undefined if so. */
export function overlayProbe(bwrap: string, parent: string): Promise<string | undefined> {
  const k = `${bwrap}\0${parent}`;
  let p = probes.get(k);
  if (!p) {
    const scratch = path.join(parent, `.evalgate-overlay-probe-${process.pid}`);
    p = mkdir(parent, { recursive: true }).then(() =>
      probeOverlay(bwrap, scratch, (argv) => runTool(argv[0]!, argv.slice(1))),
    );
    probes.set(k, p);
  }
  return p;
}

/** Whether a path or glob (relative to the workspace root) could name something inside `trees`. */
function reaches(globOrPath: string, trees: readonly string[]): boolean {
  const base = picomatch.scan(globOrPath.replace(/^\.\/+/, "")).base.replace(/\/+$/, "");
  return trees.some((t) => base === "" || base === t || base.startsWith(`${t}/`) || t.startsWith(`${base}/`));
}

/** Strings anywhere in a scorer's options (its paths and globs, among others). */
function strings(v: unknown): string[] {
  if (typeof v === "string") return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === "object") return Object.values(v).flatMap(strings);
  return [];
}

/**
 * Why the attempt's trees are copied although the machine could share them, or undefined. Every
 * process that sees the workspace must see the overlay: the agent and the scorers under bubblewrap,
 * no verifier installed into a tree and no scorer reading one from evalgate's own process.
 */
export function copiedBecause(
  spec: CaseSpec,
  input: Pick<AttemptInput, "bwrap" | "containment" | "place">,
  trees: readonly string[],
): string | undefined {
  const guards = spec.test.workspace;
  if (guards.setupTrees === "writable") return "setup_trees: writable";
  if (input.place) return "the case runs in an environment";
  if (!(spec.target.sandbox && input.bwrap)) return "the agent does not run under bubblewrap";
  if (!input.containment?.bwrap) return "the scorers do not run under bubblewrap";
  if (guards.verifiers.some((v) => reaches(v.to, trees))) return "a verifier is installed into one";
  const inProcess = spec.test.scorers.filter((s) => s.type === "file" || s.type === "ast-grep");
  if (inProcess.some((s) => strings(s.options).some((x) => reaches(x, trees)))) {
    return "a file or ast-grep scorer may read one";
  }
  return undefined;
}

/** Makes the attempt's workspace `ws`: the start tree with its setup-built trees shared or copied. */
export async function materializeWorkspace(
  input: Pick<AttemptInput, "spec" | "bwrap" | "containment" | "place" | "workDir">,
  start: PreparedStart,
  ws: string,
): Promise<AttemptTrees> {
  const copied = async (reason?: string): Promise<AttemptTrees> => {
    await materializeAttempt(start, ws);
    const built = (await setupTreesOf(start)).size > 0;
    if (!built) return { shared: [], overlays: [] };
    return { shared: [], overlays: [], mode: start.copyMethod ?? "copy", ...(reason ? { reason } : {}) };
  };
  const trees = await shareableTrees(start);
  if (trees.length === 0) return copied();
  const because = copiedBecause(input.spec, input, trees);
  if (because) return copied(because);
  const probe = await overlayProbe(input.bwrap!, path.dirname(input.workDir));
  if (probe) return copied(`no overlay on this machine: ${probe}`);
  let lean: string;
  try {
    lean = await leanStartOf(start, trees);
  } catch (error) {
    return copied(`cannot share: ${(error as Error).message}`);
  }
  await copyTree(lean, ws, start.copyMethod ?? "copy");
  // Beside the attempt folder, in the run's work folder, which no contained process sees.
  const scratch = `${input.workDir}-overlay`;
  await discardTree(scratch);
  const overlays = await overlaysFor(start, ws, scratch, trees);
  return { mode: "overlay", shared: trees, overlays, scratch };
}

/** Removes the overlays' layers of an attempt. */
export async function discardLayers(trees: AttemptTrees | undefined): Promise<void> {
  if (trees?.scratch) await discardTree(trees.scratch);
}

/** The attempt's change mark, unless the test leaves both setup-built trees and test configuration writable. */
export async function markForGuards(spec: CaseSpec, workDir: string): Promise<ChangeMark | undefined> {
  const g = spec.test.workspace;
  if (g.setupTrees === "writable" && g.testConfig === "writable") return undefined;
  return markCopy(workDir);
}
