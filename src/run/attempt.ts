/**
 * The attempt lifecycle: fresh workspace → agent → capture diff → restore protected paths and copy
 * in hidden verifiers → scorers → status.
 * Evidence (logs, patch) goes straight into the attempt's folder of the bundle.
 * Each step has its name: the agent in agent.ts, the capture in capture.ts, the scorers in score.ts;
 * what they learn is gathered in one `AttemptState` (attempt-result.ts) whichever step the attempt ends at.
 */
import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import type { CaseSpec } from "../config/types.js";
import { agentFilledDisk, freeBytes } from "../environment/disk.js";
import type { HostLimits } from "../environment/limits.js";
import type { Containment } from "../sandbox/bwrap.js";
import { type ProcessRunner, runnerWith } from "../sandbox/process.js";
import type { ChangeMark } from "../workspace/change-mark.js";
import { discardTree } from "../workspace/discard.js";
import { restoreWorkspaceGit } from "../workspace/git-guard.js";
import { restoreGradingInputs } from "../workspace/grading-inputs.js";
import { installVerifiers, restoreProtected } from "../workspace/protect.js";
import type { FailedStart, PreparedStart } from "../workspace/start.js";
import { type AttemptDirs, runAgent } from "./agent.js";
import { type AttemptState, attemptResult, newAttemptState } from "./attempt-result.js";
import { captureChanges } from "./capture.js";
import type { CasePlace } from "./environment.js";
import { scoreAttempt } from "./score.js";
import { type AttemptTrees, discardLayers, markForGuards, materializeWorkspace } from "./share.js";
import type { AttemptResult } from "./types.js";
import { overridable } from "./verify.js";

export interface AttemptInput {
  spec: CaseSpec;
  attempt: number;
  retry: number;
  /** The prepared start (tree and commit), or why it could not be prepared. */
  start: PreparedStart | FailedStart;
  /** Private scratch folder of this attempt (workspace, HOME, TMPDIR, prompt). */
  workDir: string;
  /** The attempt's folder in the bundle. */
  evidenceDir: string;
  dirName: string;
  runner: ProcessRunner;
  keepWorkspace: boolean;
  /** The bubblewrap program, checked before the run, for targets that run under it. */
  bwrap?: string;
  /** What a sandboxed agent may not read wherever it lies (verifiers, references, the bundle). */
  hidden?: readonly string[];
  /** How the scorers are contained: bubblewrap when the run has it, whatever the target's sandbox. */
  containment?: Containment;
  /** The case's image, when it has an environment: every process of the attempt runs in it. */
  place?: CasePlace;
  /** Where the case's resources are applied on the host (a case without an environment). */
  hostLimits?: HostLimits;
  /** The tries of this case finished so far (for the automatic verifier rerun, run/verify.ts). */
  peers?: () => readonly AttemptResult[];
}

export const PROMPT_SEPARATOR = "\n\n";

export function promptFor(spec: CaseSpec): string {
  const setup = spec.test.workspace.setup.instructions;
  return setup ? `${setup.trim()}${PROMPT_SEPARATOR}${spec.test.instruction}` : spec.test.instruction;
}

export async function runAttempt(input: AttemptInput): Promise<AttemptResult> {
  const { spec, evidenceDir } = input;
  // Agent and scorer logs keep what this case's limits.log allows.
  const runner = runnerWith(input.runner, { logCapBytes: spec.limits.logBytes });
  const s = newAttemptState();
  await mkdir(evidenceDir, { recursive: true });
  const result = (): AttemptResult => attemptResult(input, s);

  const b = input.start;
  if ("failure" in b) {
    if (b.setupLog) await copyFile(b.setupLog, path.join(evidenceDir, "setup.log")).catch(() => undefined);
    if (b.failure === "setup") s.facts.setupError = b.message;
    else s.facts.workspaceError = b.message;
    return result();
  }
  if (b.setupLog) await copyFile(b.setupLog, path.join(evidenceDir, "setup.log"));

  const dirs: AttemptDirs = {
    ws: path.join(input.workDir, "ws"),
    home: path.join(input.workDir, "home"),
    tmp: path.join(input.workDir, "tmp"),
  };
  const { ws } = dirs;
  try {
    const w0 = performance.now();
    const prepared = await prepareWorkspace(input, b, dirs, s);
    if (!prepared) return result();
    const { trees, mark } = prepared;
    s.phases.workspaceMs = Math.round(performance.now() - w0);
    s.freeBefore = await freeBytes(input.workDir); // evidence for a disk the agent fills
    await runAgent({ input, start: b, runner, dirs, overlays: trees.overlays }, s);

    const d0 = performance.now();
    const captured = await captureChanges({ input, start: b, ws, trees, mark }, s);
    if (!captured) return result();
    if (!(await guardForScoring(input, b, ws, trees, captured.changed, s))) return result();
    s.phases.diffMs = Math.round(performance.now() - d0);

    const s0 = performance.now();
    const { diff } = captured;
    const scored = await scoreAttempt({ input, start: b, runner, ws, overlays: trees.overlays, diff });
    s.facts.grading = scored.grading;
    s.phases.scorersMs = Math.round(performance.now() - s0);
    const r = result();
    const { regraded } = scored;
    if (regraded.verify) r.verify = regraded.verify;
    if (regraded.verdict && overridable(r, regraded.verdict)) Object.assign(r, regraded.verdict);
    r.diff = {
      files: diff.files,
      fileCount: diff.files.length,
      additions: diff.additions,
      deletions: diff.deletions,
      bytes: diff.patchBytes,
      truncated: diff.truncated,
    };
    return r;
  } finally {
    if (!input.keepWorkspace) await discardTree(input.workDir);
    await discardLayers(s.trees);
  }
}

/**
 * A fresh attempt folder: the workspace made from the start (its setup-built trees shared or
 * copied, kept in `s.trees` for the cleanup), HOME and TMPDIR, and the change mark the guards read.
 * Undefined when the workspace cannot be made (`s.facts.workspaceError` says why).
 */
async function prepareWorkspace(
  input: AttemptInput,
  start: PreparedStart,
  dirs: AttemptDirs,
  s: AttemptState,
): Promise<{ trees: AttemptTrees; mark: ChangeMark | undefined } | undefined> {
  await discardTree(input.workDir);
  await mkdir(dirs.home, { recursive: true });
  await mkdir(dirs.tmp, { recursive: true });
  try {
    const trees = await materializeWorkspace(input, start, dirs.ws);
    s.trees = trees;
    const mark = await markForGuards(input.spec, input.workDir);
    return { trees, mark };
  } catch (error) {
    s.facts.workspaceError = (error as Error).message;
    return undefined;
  }
}

/**
 * The workspace as the scorers see it: protected paths, what setup built and the test configuration
 * put back, the hidden verifiers installed, the workspace's git restored. The diff keeps what the
 * agent did to them (evidence); the tampering is recorded in `s`. False when the workspace cannot be
 * prepared (`s.facts.workspaceError` says why).
 */
async function guardForScoring(
  input: AttemptInput,
  start: PreparedStart,
  ws: string,
  trees: AttemptTrees,
  changed: Buffer[] | undefined,
  s: AttemptState,
): Promise<boolean> {
  const guards = input.spec.test.workspace;
  const { facts } = s;
  try {
    const tampered = await restoreProtected(start, ws, guards.protected, trees.shared);
    if (tampered.length > 0) facts.tampered = tampered;
    // What setup built and the test configuration: put back too (docs/decisions/0190, 0191).
    const inputs = await restoreGradingInputs(start, ws, guards, changed, {
      trees: trees.shared,
      overlays: trees.overlays,
    });
    if (inputs.setupTrees.length > 0) facts.tamperedSetup = inputs.setupTrees;
    if (inputs.testConfig.length > 0) facts.tamperedConfig = inputs.testConfig;
    s.warnings.push(...inputs.warnings);
    await installVerifiers(ws, guards.verifiers);
    await restoreWorkspaceGit(start, ws);
  } catch (error) {
    facts.diskFilled = await agentFilledDisk(error, input.workDir, s.freeBefore);
    if (!facts.diskFilled)
      facts.workspaceError = `cannot prepare the workspace for scoring: ${(error as Error).message}`;
    return false;
  }
  return true;
}
