/**
 * The attempt's scoring step (run/attempt.ts): the scorers on the guarded workspace, each contained
 * to it, then the verifier reruns and calibration that disagreeing gradings ask for (run/regrade.ts).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CaseSpec } from "../config/types.js";
import { buildEnv } from "../sandbox/env.js";
import type { OverlayMount } from "../sandbox/overlay.js";
import type { ProcessRunner } from "../sandbox/process.js";
import { type Grading, grade } from "../scorers/grading.js";
import { scorerFor } from "../scorers/index.js";
import type { ScorerResult } from "../scorers/types.js";
import { RefusedPath } from "../scorers/workspace-path.js";
import { type CapturedDiff, freshFolder } from "../workspace/attempt.js";
import { SCORER_GIT_ENV } from "../workspace/git-guard.js";
import type { PreparedStart } from "../workspace/start.js";
import type { AttemptInput } from "./attempt.js";
import { calibrationFor, type GradeIn } from "./calibrate.js";
import { type ScorerProcesses, scorerProcesses } from "./contain.js";
import { referenceRunnerFor, scorerPlacement } from "./environment.js";
import { regrade } from "./regrade.js";

export interface ScoreStep {
  input: AttemptInput;
  start: PreparedStart;
  /** The run's runner with the case's log cap. */
  runner: ProcessRunner;
  ws: string;
  /** The attempt's shared setup-built trees (a calibration's workspace is a full copy without them). */
  overlays: readonly OverlayMount[];
  diff: CapturedDiff;
}

export interface Scored {
  /** The attempt's own grading. */
  grading: Grading;
  /** The reruns and calibration, when the grading asked for them. */
  regraded: Awaited<ReturnType<typeof regrade>>;
}

/** Grades the attempt's workspace, then reruns or calibrates its verifiers where run/regrade.ts asks. */
export async function scoreAttempt(step: ScoreStep): Promise<Scored> {
  const { input, runner, ws, diff } = step;
  const { spec, evidenceDir } = input;
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
    const overlays = g.ws === ws ? step.overlays : [];
    const dirs = { workspace: g.ws, attempt: input.workDir, home: g.home, tmp: g.tmp, overlays };
    const procs: ScorerProcesses = scorerProcesses(scorerRunner, containment, spec, dirs, placed);
    return runScorers(spec, g.ws, g.diff, g.evidenceDir, procs, g.home, g.tmp, g.rerun);
  };
  const grading = await gradeIn({ ws, diff, evidenceDir, home: scorerHome, tmp: scorerTmp });
  const regraded = await regrade(
    { spec, attempt: input.attempt, peers: input.peers?.() ?? [] },
    grading,
    (i, only, first) =>
      gradeIn({
        ws,
        diff,
        evidenceDir: path.join(evidenceDir, `verify-${i}`),
        home: scorerHome,
        tmp: scorerTmp,
        rerun: { only, first },
      }),
    (repeats, rounds) =>
      calibrationFor({
        spec,
        start: step.start,
        referenceRunner: (refWs, refDir) => referenceRunnerFor(runner, input, refWs, refDir),
        workDir: `${input.workDir}-calibration`,
        evidenceDir,
        dirName: input.dirName,
        repeats,
        rounds,
        grade: gradeIn,
      }),
  );
  return { grading, regraded };
}
/** One grading of workspace `ws`: each scorer in turn, its log and report in `evidenceDir`/scorers. */
async function runScorers(
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
