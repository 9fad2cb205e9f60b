/**
 * What the scorers read besides the code under test and the paths a test protects by name: the
 * trees setup built (setup-trees.ts) and the test configuration (test-config.ts). Both are checked
 * after the agent against the start tree and put back before scoring, unless the test makes them
 * `writable` (docs/decisions/0190, 0191).
 */
import type { ScoringGuards } from "../config/types.js";
import type { OverlayMount } from "../sandbox/overlay.js";
import { restoreSetupTrees, setupTreesOf } from "./setup-trees.js";
import { checkShared } from "./share.js";
import type { PreparedStart } from "./start.js";
import { restoreTestConfig } from "./test-config.js";

export interface GradingInputs {
  /** Setup-built entries the agent changed (put back). */
  setupTrees: string[];
  /** Test configuration the agent changed (put back), a file's part named after it. */
  testConfig: string[];
  /** What could not be checked, for the attempt's warnings. */
  warnings: string[];
}

/**
 * Checks and puts back the setup-built trees and the test configuration of the workspace `ws`.
 * `changed` is what changed after the copy (workspace/scan.ts with the attempt's change mark);
 * without it, the trees are put back whole and new configuration files are not looked for.
 */
export async function restoreGradingInputs(
  start: Pick<PreparedStart, "dir" | "copyMethod">,
  ws: string,
  guards: Pick<ScoringGuards, "setupTrees" | "testConfig">,
  changed: readonly Buffer[] | undefined,
  /** Trees shared through overlays (share.ts): checked from their upper layers, which are emptied. */
  shared: { trees: readonly string[]; overlays: readonly OverlayMount[] } = { trees: [], overlays: [] },
): Promise<GradingInputs> {
  const out: GradingInputs = { setupTrees: [], testConfig: [], warnings: [] };
  const treesProtected = guards.setupTrees !== "writable";
  if (treesProtected) {
    const check = await restoreSetupTrees(start, ws, changed, shared.trees);
    const layers = await checkShared(start, shared.trees, shared.overlays);
    out.setupTrees = [...check.tampered, ...layers.tampered].sort();
    if (check.unverified) {
      out.warnings.push(
        "the workspace's changes could not be dated (its filesystem's clock did not move, or the clock was set back): what setup built was put back whole before scoring, unchecked",
      );
    }
  }
  if (guards.testConfig !== "writable") {
    // Setup-built trees that are checked whole are not looked into for configuration files.
    const trees = treesProtected ? await setupTreesOf(start) : new Set<string>();
    const check = await restoreTestConfig(start, ws, changed, trees);
    out.testConfig = check.tampered;
    if (!check.complete) {
      out.warnings.push(
        "the workspace's changes could not be dated: test configuration files of the start tree were compared, but new ones were not looked for",
      );
    }
  }
  return out;
}
