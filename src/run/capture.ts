/** The attempt's capture step (run/attempt.ts): what the agent changed, as diff.patch and the warnings it needs. */
import { chmod, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { formatSize } from "../config/size.js";
import { agentFilledDisk } from "../environment/disk.js";
import { type CapturedDiff, captureDiff, workspaceIsFolder } from "../workspace/attempt.js";
import { type ChangeMark, clockSetBack } from "../workspace/change-mark.js";
import { nestedRepositoryWarning } from "../workspace/nested-repos.js";
import { scanWorkspace } from "../workspace/scan.js";
import type { PreparedStart } from "../workspace/start.js";
import type { AttemptInput } from "./attempt.js";
import type { AttemptState } from "./attempt-result.js";
import type { AttemptTrees } from "./share.js";
import { WORKSPACE_REPLACED } from "./status.js";

export interface CaptureStep {
  input: AttemptInput;
  start: PreparedStart;
  ws: string;
  trees: AttemptTrees;
  /** The change mark made with the workspace, when the guards need one (run/share.ts). */
  mark: ChangeMark | undefined;
}

export interface Captured {
  diff: CapturedDiff;
  /** What changed after the copy (the grading-input guards read it); undefined when no mark was usable. */
  changed: Buffer[] | undefined;
}

/**
 * Captures the agent's changes and writes diff.patch; undefined when the attempt ends here (its
 * workspace was replaced, or cannot be read), with the fact that says why in `s`.
 */
export async function captureChanges(step: CaptureStep, s: AttemptState): Promise<Captured | undefined> {
  const { input, ws, mark } = step;
  const { spec, evidenceDir } = input;
  // Nothing of what follows may happen in a folder the agent's workspace now links to.
  if (!(await workspaceIsFolder(ws))) {
    s.facts.tampered = [WORKSPACE_REPLACED];
    await rm(ws, { force: true }).catch(() => undefined);
    return undefined;
  }
  let changed: Buffer[] | undefined;
  let diff: CapturedDiff;
  try {
    await chmod(ws, 0o755).catch(() => undefined);
    // The one pass over the workspace (scan.ts) also lists what changed after the copy.
    const since = mark && !clockSetBack(mark) ? mark.sinceNs : undefined;
    // Shared trees are left out: their changes are in their upper layers (docs/performance.md).
    const scan = await scanWorkspace(ws, spec.limits.diffBytes, since, step.trees.shared);
    changed = scan.changed;
    diff = await captureDiff(
      step.start,
      ws,
      path.join(input.workDir, "capture.index"),
      spec.limits.diffBytes,
      scan,
    );
  } catch (error) {
    s.facts.diskFilled = await agentFilledDisk(error, input.workDir, s.freeBefore);
    if (!s.facts.diskFilled)
      s.facts.workspaceError = `cannot capture the agent's changes: ${(error as Error).message}`;
    return undefined;
  }
  await writeFile(path.join(evidenceDir, "diff.patch"), diff.patch);
  s.warnings.push(...captureWarnings(diff));
  s.facts.diffEmpty = diff.files.length === 0;
  return { diff, changed };
}

/** What the capture changed in the workspace to read it, or left out of diff.patch. */
function captureWarnings(diff: CapturedDiff): string[] {
  const warnings: string[] = [];
  for (const f of diff.removedSpecial) {
    warnings.push(
      `${f} was a special file (a FIFO or socket), which git cannot record: removed before scoring`,
    );
  }
  warnings.push(...diff.removedRepositories.map(nestedRepositoryWarning));
  if (diff.unlocked.length > 0) {
    const shown =
      diff.unlocked.slice(0, 5).join(", ") +
      (diff.unlocked.length > 5 ? `, and ${diff.unlocked.length - 5} more` : "");
    warnings.push(
      `the agent made ${shown} unreadable to its owner: made readable again so the diff and the scorers see it`,
    );
  }
  for (const f of diff.oversize) {
    warnings.push(
      `${f.path} (${formatSize(f.bytes)}) is larger than limits.diff: not read, a placeholder stands for it in diff.patch`,
    );
  }
  return warnings;
}
