/**
 * The attempt lifecycle: fresh workspace → agent → capture diff → restore protected paths and copy
 * in hidden verifiers → scorers → status.
 * Evidence (logs, patch) goes straight into the attempt's folder of the bundle.
 */
import { chmod, copyFile, mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { formatSize } from "../config/size.js";
import { agentFolder, type CaseSpec } from "../config/types.js";
import { agentFilledDisk, freeBytes } from "../environment/disk.js";
import type { HostLimits } from "../environment/limits.js";
import { providerFor } from "../providers/index.js";
import type { Usage } from "../providers/types.js";
import type { Containment } from "../sandbox/bwrap.js";
import { buildEnv } from "../sandbox/env.js";
import { type ProcessRunner, runnerWith } from "../sandbox/process.js";
import { type Grading, grade } from "../scorers/grading.js";
import { scorerFor } from "../scorers/index.js";
import type { ScorerResult } from "../scorers/types.js";
import { RefusedPath } from "../scorers/workspace-path.js";
import { type CapturedDiff, captureDiff, freshFolder, workspaceIsFolder } from "../workspace/attempt.js";
import { type ChangeMark, clockSetBack } from "../workspace/change-mark.js";
import { discardTree } from "../workspace/discard.js";
import { restoreWorkspaceGit, SCORER_GIT_ENV } from "../workspace/git-guard.js";
import { restoreGradingInputs } from "../workspace/grading-inputs.js";
import { nestedRepositoryWarning } from "../workspace/nested-repos.js";
import { installVerifiers, restoreProtected } from "../workspace/protect.js";
import { scanWorkspace } from "../workspace/scan.js";
import type { FailedStart, PreparedStart } from "../workspace/start.js";
import { calibrationFor, type GradeIn } from "./calibrate.js";
import { type ScorerProcesses, scorerProcesses } from "./contain.js";
import {
  agentRunnerFor,
  type CasePlace,
  limitWatch,
  placeFacts,
  referenceRunnerFor,
  scorerPlacement,
} from "./environment.js";
import { regrade } from "./regrade.js";
import { type AttemptTrees, discardLayers, markForGuards, materializeWorkspace } from "./share.js";
import { allTampered, decideStatus, type StageFacts, WORKSPACE_REPLACED } from "./status.js";
import type { AgentRecord, AttemptResult } from "./types.js";
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
  const startedAt = new Date();
  const t0 = performance.now();
  const phases = { workspaceMs: 0, agentMs: 0, diffMs: 0, scorersMs: 0 };
  await mkdir(evidenceDir, { recursive: true });
  const facts: StageFacts = {};
  let usage: Usage | undefined;
  let transcript: string | undefined;
  let agentOutput: string | undefined;
  const warnings: string[] = [];
  let trees: AttemptTrees | undefined; // read by result(), also when the start failed
  const result = (): AttemptResult => {
    const decision = decideStatus(facts);
    const r: AttemptResult = {
      caseKey: spec.key,
      attempt: input.attempt,
      retry: input.retry,
      ...decision,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      durationMs: Math.round(performance.now() - t0),
      phases,
      ...(input.start.setup ? { setup: input.start.setup } : {}),
      dirName: input.dirName,
    };
    if ("sha" in input.start) r.startSha = input.start.sha;
    if (facts.agent) r.agent = facts.agent;
    if (usage) r.usage = usage;
    if (transcript) r.transcript = transcript;
    if (agentOutput) r.agentOutput = agentOutput;
    const allWarnings = [...warnings, ...(decision.warnings ?? [])];
    if (allWarnings.length > 0) r.warnings = allWarnings;
    const tampered = allTampered(facts);
    if (tampered.length > 0) r.tampered = tampered;
    if (facts.grading) r.grading = facts.grading;
    if (trees?.mode) r.setupTrees = { mode: trees.mode, ...(trees.reason ? { reason: trees.reason } : {}) };
    Object.assign(r, placeFacts(spec, input.place, input.hostLimits));
    return r;
  };

  const b = input.start;
  if ("failure" in b) {
    if (b.setupLog) await copyFile(b.setupLog, path.join(evidenceDir, "setup.log")).catch(() => undefined);
    if (b.failure === "setup") facts.setupError = b.message;
    else facts.workspaceError = b.message;
    return result();
  }
  if (b.setupLog) await copyFile(b.setupLog, path.join(evidenceDir, "setup.log"));

  const ws = path.join(input.workDir, "ws");
  const home = path.join(input.workDir, "home");
  const tmp = path.join(input.workDir, "tmp");
  let diff: CapturedDiff | undefined;
  try {
    const w0 = performance.now();
    await discardTree(input.workDir);
    await mkdir(home, { recursive: true });
    await mkdir(tmp, { recursive: true });
    let mark: ChangeMark | undefined;
    try {
      trees = await materializeWorkspace(input, b, ws);
      mark = await markForGuards(spec, input.workDir);
    } catch (error) {
      facts.workspaceError = (error as Error).message;
      return result();
    }
    phases.workspaceMs = Math.round(performance.now() - w0);
    const freeBefore = await freeBytes(input.workDir); // evidence for a disk the agent fills
    const prompt = promptFor(spec);
    const promptFile = path.join(input.workDir, "prompt.md");
    await writeFile(promptFile, prompt);
    await writeFile(path.join(evidenceDir, "prompt.md"), prompt);
    const agentLog = path.join(evidenceDir, "agent.log");
    await writeFile(agentLog, "");
    const target = spec.target;
    // In the case's image, under bubblewrap, or under the run's reaper; within the case's resources.
    const agentLimit = limitWatch(
      agentRunnerFor(runner, { ...input, workspace: ws, overlays: trees.overlays }),
    );
    const outputFile = path.join(input.workDir, "output.json");
    const a0 = performance.now();
    const outcome = await providerFor(target.provider).run({
      target,
      test: spec.test,
      workspace: agentFolder(ws, b.subdir),
      repoRoot: ws,
      attemptDir: input.workDir,
      evidenceDir,
      prompt,
      promptFile,
      outputFile,
      attempt: input.attempt,
      evalDir: spec.evalDir,
      timeoutMs: spec.timeouts.agentMs,
      logFile: agentLog,
      env: buildEnv({
        passthrough: target.envPassthrough,
        values: {
          ...target.env,
          EVALGATE_ATTEMPT: String(input.attempt),
          EVALGATE_RETRY: String(input.retry),
          EVALGATE_TEST_ID: spec.test.id,
          EVALGATE_OUTPUT_FILE: outputFile,
        },
        home,
        tmp,
      }),
      runner: agentLimit.runner,
      ...(input.place ? { inEnvironment: true } : {}),
    });
    phases.agentMs = Math.round(performance.now() - a0);
    const agent: AgentRecord = {
      exitCode: outcome.exitCode,
      signal: outcome.signal,
      timedOut: outcome.timedOut,
      durationMs: outcome.durationMs,
    };
    if (outcome.error) agent.error = outcome.error;
    if (outcome.stopped) agent.stopped = outcome.stopped;
    if (outcome.activity) agent.activity = outcome.activity;
    if (outcome.infrastructure) agent.infrastructure = outcome.infrastructure;
    const limit = agentLimit.hit();
    if (limit) agent.limit = limit;
    if (outcome.usage) usage = outcome.usage;
    if (outcome.transcript) transcript = outcome.transcript;
    if (outcome.agentOutput) agentOutput = outcome.agentOutput;
    warnings.push(...(outcome.warnings ?? []));
    facts.agent = agent;
    facts.agentTail = outcome.tail;
    facts.agentTimeoutMs = spec.timeouts.agentMs;

    const d0 = performance.now();
    // Nothing of what follows may happen in a folder the agent's workspace now links to.
    if (!(await workspaceIsFolder(ws))) {
      facts.tampered = [WORKSPACE_REPLACED];
      await rm(ws, { force: true }).catch(() => undefined);
      return result();
    }
    let changed: Buffer[] | undefined;
    try {
      await chmod(ws, 0o755).catch(() => undefined);
      // The one pass over the workspace (scan.ts) also lists what changed after the copy.
      const since = mark && !clockSetBack(mark) ? mark.sinceNs : undefined;
      // Shared trees are left out: their changes are in their upper layers (docs/performance.md).
      const scan = await scanWorkspace(ws, spec.limits.diffBytes, since, trees.shared);
      changed = scan.changed;
      diff = await captureDiff(b, ws, path.join(input.workDir, "capture.index"), spec.limits.diffBytes, scan);
    } catch (error) {
      facts.diskFilled = await agentFilledDisk(error, input.workDir, freeBefore);
      if (!facts.diskFilled)
        facts.workspaceError = `cannot capture the agent's changes: ${(error as Error).message}`;
      return result();
    }
    await writeFile(path.join(evidenceDir, "diff.patch"), diff.patch);
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
    facts.diffEmpty = diff.files.length === 0;
    // The diff keeps what the agent did to protected paths (evidence); the scorers see them restored,
    // and the hidden verifiers appear only now.
    const guards = spec.test.workspace;
    try {
      const tampered = await restoreProtected(b, ws, guards.protected, trees.shared);
      if (tampered.length > 0) facts.tampered = tampered;
      // What setup built and the test configuration: put back too (docs/decisions/0190, 0191).
      const inputs = await restoreGradingInputs(b, ws, guards, changed, {
        trees: trees.shared,
        overlays: trees.overlays,
      });
      if (inputs.setupTrees.length > 0) facts.tamperedSetup = inputs.setupTrees;
      if (inputs.testConfig.length > 0) facts.tamperedConfig = inputs.testConfig;
      warnings.push(...inputs.warnings);
      await installVerifiers(ws, guards.verifiers);
      await restoreWorkspaceGit(b, ws);
    } catch (error) {
      facts.diskFilled = await agentFilledDisk(error, input.workDir, freeBefore);
      if (!facts.diskFilled)
        facts.workspaceError = `cannot prepare the workspace for scoring: ${(error as Error).message}`;
      return result();
    }
    phases.diffMs = Math.round(performance.now() - d0);

    const s0 = performance.now();
    // Scorers get a HOME and TMPDIR of their own: nothing the agent left there can steer them.
    const scorerHome = path.join(input.workDir, "scorer-home");
    const scorerTmp = path.join(input.workDir, "scorer-tmp");
    await freshFolder(scorerHome);
    await freshFolder(scorerTmp);
    const containment = input.containment ?? { hidden: [] };
    // In the case's image, or on the host within the case's resources (run/environment.ts).
    const { scorerRunner, placed } = scorerPlacement(runner, input, ws);
    // Each grading's scorers are contained to its own workspace (the attempt's, or a calibration's).
    const gradeIn: GradeIn = (g) => {
      // A calibration's workspace is a full copy: only the attempt's own has overlays.
      const overlays = g.ws === ws ? trees!.overlays : [];
      const dirs = { workspace: g.ws, attempt: input.workDir, home: g.home, tmp: g.tmp, overlays };
      const procs: ScorerProcesses = scorerProcesses(scorerRunner, containment, spec, dirs, placed);
      return scoreAttempt(spec, g.ws, g.diff, g.evidenceDir, procs, g.home, g.tmp, g.rerun);
    };
    facts.grading = await gradeIn({ ws, diff, evidenceDir, home: scorerHome, tmp: scorerTmp });
    const regraded = await regrade(
      { spec, attempt: input.attempt, peers: input.peers?.() ?? [] },
      facts.grading,
      (i, only, first) =>
        gradeIn({
          ws,
          diff: diff!,
          evidenceDir: path.join(evidenceDir, `verify-${i}`),
          home: scorerHome,
          tmp: scorerTmp,
          rerun: { only, first },
        }),
      (repeats, rounds) =>
        calibrationFor({
          spec,
          start: b,
          referenceRunner: (refWs, refDir) => referenceRunnerFor(runner, input, refWs, refDir),
          workDir: `${input.workDir}-calibration`,
          evidenceDir,
          dirName: input.dirName,
          repeats,
          rounds,
          grade: gradeIn,
        }),
    );
    phases.scorersMs = Math.round(performance.now() - s0);
    const r = result();
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
    await discardLayers(trees);
  }
}

async function scoreAttempt(
  spec: CaseSpec,
  ws: string,
  diff: CapturedDiff,
  evidenceDir: string,
  procs: ScorerProcesses,
  home: string,
  tmp: string,
  /** A rerun: only these scorers (by index) run again; the others keep the first grading's result. */
  rerun?: { only: readonly boolean[]; first: Grading },
): Promise<Grading> {
  const results: { result: ScorerResult; durationMs: number }[] = [];
  const scorersDir = path.join(evidenceDir, "scorers");
  await mkdir(scorersDir, { recursive: true });
  for (const [index, s] of spec.test.scorers.entries()) {
    if (rerun && !rerun.only[index]) {
      const kept = rerun.first.scorers[index]!;
      results.push({ result: kept.result, durationMs: kept.durationMs });
      continue;
    }
    const started = performance.now();
    let result: ScorerResult;
    const logFile = path.join(scorersDir, `${s.name}.log`);
    try {
      await writeFile(logFile, "");
      const { runner, reportDir } = await procs.forScorer(s);
      result = await scorerFor(s.type).run({
        spec: s,
        test: spec.test,
        workspace: ws,
        diff,
        logFile,
        runner,
        ...(reportDir ? { reportDir } : {}),
        env: (passthrough) =>
          buildEnv({
            passthrough,
            // The scorer's git never runs what the agent could have configured (0186).
            values: { ...SCORER_GIT_ENV, EVALGATE_WORKSPACE: ws, EVALGATE_TEST_ID: spec.test.id },
            home,
            tmp,
          }),
      });
    } catch (error) {
      // A path the agent made lead out of its workspace (or a FIFO) is never followed: the check it
      // stood for fails (docs/decisions/0072), so planting one earns nothing, not even a retry.
      result =
        error instanceof RefusedPath
          ? { state: "complete", score: 0, passed: false, reason: error.message }
          : { state: "error", reason: `the scorer failed inside evalgate: ${(error as Error).message}` };
    }
    results.push({ result, durationMs: Math.round(performance.now() - started) });
  }
  return grade(spec.test.scorers, results, spec.test.threshold);
}
