/**
 * Calibrating a case's verifier: when an attempt's gradings disagree, the same scorers grade the
 * test's reference (applied to a fresh copy of the start tree) or, without one, the start tree as
 * it is, as many times and with the same reruns. Their agreement tells a flaky verifier from code
 * that is flaky itself (run/verify.ts, `regradeVerdict`). Made once per case and run, the first time
 * an attempt of the case needs it; its logs go to that attempt's `calibration/` folder
 * (docs/decisions/0193).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { agentFolder, type CaseSpec } from "../config/types.js";
import { referenceProvider } from "../providers/reference.js";
import { buildEnv } from "../sandbox/env.js";
import type { ProcessRunner } from "../sandbox/process.js";
import type { Grading } from "../scorers/grading.js";
import { type CapturedDiff, captureDiff, materializeAttempt } from "../workspace/attempt.js";
import { discardTree } from "../workspace/discard.js";
import { installVerifiers } from "../workspace/protect.js";
import type { PreparedStart } from "../workspace/start.js";
import type { Calibration } from "./types.js";
import { changedScorers } from "./verify.js";

/** One grading of a calibration workspace, as the attempt grades its own (its scorer runner). */
export type GradeIn = (g: {
  ws: string;
  diff: CapturedDiff;
  evidenceDir: string;
  home: string;
  tmp: string;
  /** A rerun: only these scorers run again; the others keep the first grading's result. */
  rerun?: { only: readonly boolean[]; first: Grading };
}) => Promise<Grading>;

export interface CalibrationRequest {
  spec: CaseSpec;
  start: PreparedStart;
  /** The runner of a reference script applied to `workspace` in `workDir` (the case's image, when it has one). */
  referenceRunner: (workspace: string, workDir: string) => ProcessRunner;
  /** A folder of evalgate's for the calibration's workspace, out of every agent's reach. */
  workDir: string;
  /** The asking attempt's evidence folder and its name in the case's result directory. */
  evidenceDir: string;
  dirName: string;
  /** Reruns per scorer (the attempt's verify plan) and how many rounds of them. */
  repeats: readonly number[];
  rounds: number;
  grade: GradeIn;
}

/** Calibrations made in this run, per prepared start, case and rerun plan. */
const made = new WeakMap<PreparedStart, Map<string, Promise<Calibration>>>();

/** The case's calibration for this rerun plan: made on the first request, shared afterwards. */
export function calibrationFor(req: CalibrationRequest): Promise<Calibration> {
  const byCase = made.get(req.start) ?? new Map<string, Promise<Calibration>>();
  made.set(req.start, byCase);
  const key = `${req.spec.key}\u0000${req.repeats.slice(0, req.spec.test.scorers.length).join(",")}\u0000${req.rounds}`;
  let p = byCase.get(key);
  if (!p) {
    p = calibrate(req);
    byCase.set(key, p);
    // A calibration that could not be made is tried again by the next attempt that needs one.
    p.catch(() => byCase.delete(key));
  }
  return p;
}

/**
 * Applies the test's reference to `ws` as the `reference` target does; undefined when it applied,
 * else why not.
 */
async function applyReference(req: CalibrationRequest, ws: string, dir: string): Promise<string | undefined> {
  const { spec, start } = req;
  const home = path.join(dir, "ref-home");
  const tmp = path.join(dir, "ref-tmp");
  await mkdir(home, { recursive: true });
  await mkdir(tmp, { recursive: true });
  const logFile = path.join(req.evidenceDir, "calibration", "reference.log");
  await writeFile(logFile, "");
  const outcome = await referenceProvider.run({
    target: spec.target,
    test: spec.test,
    workspace: agentFolder(ws, start.subdir),
    repoRoot: ws,
    attemptDir: dir,
    evidenceDir: path.join(req.evidenceDir, "calibration"),
    prompt: "",
    promptFile: path.join(dir, "prompt.md"),
    outputFile: path.join(dir, "output.json"),
    attempt: 0,
    evalDir: spec.evalDir,
    timeoutMs: spec.timeouts.agentMs,
    logFile,
    env: buildEnv({ passthrough: [], home, tmp }),
    runner: req.referenceRunner(ws, dir),
  });
  if (outcome.timedOut) return "the reference did not finish in time";
  return outcome.error;
}

async function calibrate(req: CalibrationRequest): Promise<Calibration> {
  const { spec, start } = req;
  const dir = req.workDir;
  const ws = path.join(dir, "ws");
  await discardTree(dir);
  await mkdir(path.join(req.evidenceDir, "calibration"), { recursive: true });
  try {
    await materializeAttempt(start, ws);
    let on: Calibration["on"] = "start";
    let note: string | undefined;
    if (spec.test.reference) {
      note = await applyReference(req, ws, dir);
      if (note === undefined) on = "reference";
      else {
        // What a failed reference left is neither the reference nor the start tree.
        await discardTree(ws);
        await materializeAttempt(start, ws);
      }
    }
    const diff = await captureDiff(start, ws, path.join(dir, "capture.index"), spec.limits.diffBytes);
    await installVerifiers(ws, spec.test.workspace.verifiers);
    const home = path.join(dir, "home");
    const tmp = path.join(dir, "tmp");
    await mkdir(home, { recursive: true });
    await mkdir(tmp, { recursive: true });
    const evidence = (i: number) => path.join(req.evidenceDir, "calibration", `grading-${i}`);
    const first = await req.grade({ ws, diff, evidenceDir: evidence(1), home, tmp });
    let passed = first.passed ? 1 : 0;
    const changed = new Set<string>();
    for (let i = 1; i <= req.rounds; i++) {
      const only = req.repeats.map((n) => n >= i);
      const again = await req.grade({
        ws,
        diff,
        evidenceDir: evidence(i + 1),
        home,
        tmp,
        rerun: { only, first },
      });
      if (again.passed) passed++;
      for (const name of changedScorers(first, again)) changed.add(name);
    }
    const calibration: Calibration = {
      on,
      runs: req.rounds + 1,
      passed,
      changed: [...changed],
      dir: req.dirName,
    };
    if (note) calibration.note = `the reference could not be applied (${note}): calibrated on the start tree`;
    if (first.errored.length > 0) calibration.errored = first.errored;
    return calibration;
  } finally {
    await discardTree(dir);
  }
}
