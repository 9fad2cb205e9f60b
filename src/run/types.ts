/** What the run stage produces: one record per attempt (and per retry of an attempt). */
import type { CaseSpec } from "../config/types.js";
import type { LimitHit, ResourceApplied } from "../environment/types.js";
import type { Usage } from "../providers/types.js";
import type { Grading } from "../scorers/grading.js";
import type { ChangedFile } from "../workspace/attempt.js";
import type { SharingMode } from "../workspace/share.js";
import type { SetupRecord } from "../workspace/start.js";

export type AttemptStatus = "passed" | "failed" | "timeout" | "error";
export type FailureStage = "workspace" | "setup" | "agent" | "scorer" | "budget";
export type FailureKind =
  | "quality"
  | "empty_diff"
  | "tampered"
  | "agent_timeout"
  | "agent_exit"
  | "scorer_error"
  | "scorer_timeout"
  | "verifier_flake"
  | "setup_error"
  | "workspace_error"
  | "budget_exceeded"
  | "cancelled"
  | "memory_limit"
  | "pids_limit"
  | "disk_limit";

export interface AgentRecord {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  error?: string;
  /** The agent's own reason for stopping when its non-zero exit is its outcome (max turns). */
  stopped?: string;
  /** On a timeout: what the agent was doing last. */
  activity?: string;
  /**
   * Evidence of infrastructure trouble (the model API answered 429, 5xx or refused the credential;
   * the program could not start): only then is a timeout or a failed run an error, not a failure.
   */
  infrastructure?: string;
  /** A resource limit of the case the agent ran into (it was stopped there). */
  limit?: LimitHit;
}

/** The environment an attempt ran in: the image by reference and digest, where the workspace was. */
export interface EnvironmentRecord {
  image: string;
  digest: string;
  workdir: string;
  engine: string;
}

export interface DiffRecord {
  /**
   * The changed files, until the attempt's result.json (which lists them) is written: the run then
   * keeps `fileCount` alone (keptAttempt), so agents that touch thousands of files do not have every
   * list held until the run ends.
   */
  files?: ChangedFile[];
  fileCount: number;
  additions: number;
  deletions: number;
  /** The size of the whole patch (diff.patch holds less when it is truncated). */
  bytes: number;
  /** diff.patch was cut at limits.diff. */
  truncated: boolean;
}

export interface AttemptResult {
  caseKey: string;
  /** 1-based attempt number. */
  attempt: number;
  /** 0 for the first try; 1.. for retries of an errored attempt. */
  retry: number;
  status: AttemptStatus;
  failureStage?: FailureStage;
  failureKind?: FailureKind;
  /** One sentence for reviewers: why the attempt did not pass. */
  message?: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  phases: { workspaceMs: number; agentMs: number; diffMs: number; scorersMs: number };
  /** The start commit the attempt began from (the diff is against it). */
  startSha?: string;
  agent?: AgentRecord;
  diff?: DiffRecord;
  grading?: Grading;
  /** What the agent used, when its provider could tell. */
  usage?: Usage;
  /** Protected files the agent changed (restored before scoring). */
  tampered?: string[];
  /** The agent's normalized transcript in the attempt's folder, when its provider wrote one. */
  transcript?: string;
  /** The copy of the agent's {OUTPUT_FILE}, when it wrote one. */
  agentOutput?: string;
  /** Problems that did not change the status (a malformed agent output file). */
  warnings?: string[];
  /** The scorers' reruns on the final workspace (verify_repeats, or automatic), when there were any. */
  verify?: VerifyRecord;
  /** The attempt's folder inside the case's result directory (`run-1`, `run-2-retry-1`). */
  dirName: string;
  /** The environment its processes ran in, when the case has one. */
  environment?: EnvironmentRecord;
  /** How each of the case's resources was applied, or why it could not be. */
  resources?: ResourceApplied[];
  /** How the attempt got what setup built (run/share.ts), when setup built anything; why not shared. */
  setupTrees?: { mode: SharingMode; reason?: string };
  /** The setup its start was made by (shared by every attempt from that start), when one ran. */
  setup?: SetupRecord;
}

/** Reruns of the scorers on one attempt's final workspace (run/verify.ts). */
export interface VerifyRecord {
  /** Gradings in all: the first and the reruns. */
  runs: number;
  /** Gradings that passed the attempt. */
  passed: number;
  /** Asked for by no setting: the attempt disagreed with every other attempt of its case so far. */
  automatic: boolean;
  /** The scorers that were rerun. */
  scorers: string[];
  /** When the gradings disagreed: how the verifier graded the reference or start tree (calibrate.ts). */
  calibration?: Calibration;
}

/** How the verifier graded the reference (or the start tree) of a case, as often as an attempt. */
export interface Calibration {
  /** What was graded: the test's reference applied to a fresh copy, or the start tree as it is. */
  on: "reference" | "start";
  runs: number;
  passed: number;
  /** Scorers whose result changed between these gradings. */
  changed: string[];
  /** The attempt folder (in the case's result directory) that holds the gradings' logs. */
  dir: string;
  /** Why a test with a reference was calibrated on the start tree instead. */
  note?: string;
  /** Scorers that could not run on it either (its first grading): their error is not the agent's doing. */
  errored?: string[];
}

/** All tries of one case. */
export interface CaseRun {
  spec: CaseSpec;
  /** Every try, retries included, in the order they finished. */
  tries: AttemptResult[];
}

/**
 * What the run keeps of an attempt once its records are in the bundle (result.json, grading.json):
 * what the gate, the case summaries, the console and the verifier and adaptive decisions read. Left
 * to the files: the changed-file list and each scorer's details, which grow with what the agent did
 * and what its tests printed. Without this, memory grew with every attempt of the run.
 */
export function keptAttempt(r: AttemptResult): AttemptResult {
  const kept: AttemptResult = { ...r };
  if (r.diff) {
    const { files: _files, ...diff } = r.diff;
    kept.diff = diff;
  }
  if (r.grading) {
    kept.grading = {
      ...r.grading,
      scorers: r.grading.scorers.map((s) => {
        const { details: _details, ...result } = s.result;
        return { ...s, result };
      }),
    };
  }
  return kept;
}

export function attemptDirName(attempt: number, retry: number): string {
  return retry === 0 ? `run-${attempt}` : `run-${attempt}-retry-${retry}`;
}
