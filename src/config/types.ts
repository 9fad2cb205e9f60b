/**
 * The resolved Plan: what `config/` hands to the rest of the pipeline. Every relative path is
 * already absolute, every default applied, every cross-reference checked.
 */

import type { AllowedHost, EnvironmentSpec, NetworkPolicy, ResourceSpec } from "../environment/types.js";
import type { SandboxSpec } from "../sandbox/bwrap.js";
import type { Command } from "../sandbox/commands.js";
import type { GATE_POLICIES } from "./schema/gate.js";
import type { ScorerInput } from "./schema/scorers.js";
import type { PROVIDERS } from "./schema/targets.js";

export type GatePolicy = (typeof GATE_POLICIES)[number];
export type ProviderName = (typeof PROVIDERS)[number];

/** The identity of a case across runs, shards and baselines: eval file, test id and target. */
export interface Identity {
  /** Path of the eval file that owns the test, relative to the project root, with `/`. */
  evalPath: string;
  testId: string;
  target: string;
}

export function identityKey(id: Identity): string {
  return `${id.evalPath}\u0000${id.testId}\u0000${id.target}`;
}

export interface GitSeed {
  kind: "git";
  /** An absolute local path, or a URL (file://, https://, http:// on loopback, ssh). */
  url: string;
  ref?: string;
  /** A folder of the repository (relative, `/`-separated, normalized) where setup and the agent run. */
  subdir?: string;
  /**
   * The environment variable holding the fetch token. Its value is used for the fetch only (through
   * git's environment-scoped configuration), never passed to setup, agents or scorers, and never
   * written anywhere; it is a secret to redact wherever redaction applies.
   */
  tokenEnv?: string;
}

export interface ArchiveLimits {
  /** Largest archive file, in bytes. */
  maxSize: number;
  /** Largest total of unpacked file data, in bytes. */
  maxUnpackedSize: number;
  /** Most entries (files and folders). */
  maxEntries: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxSize: 100e6,
  maxUnpackedSize: 500e6,
  maxEntries: 100_000,
};

export type SeedSpec =
  | { kind: "path"; path: string; exclude?: string[] }
  | GitSeed
  | { kind: "archive"; path: string; limits: ArchiveLimits }
  | { kind: "empty" };

/** Where a seed is written, for errors found while preparing it (a ref that does not exist, ...). */
export interface SeedOrigin {
  file: string;
  line?: number;
  /** Dotted path of the seed key, e.g. `workspace.seed` or `tests[2].workspace.seed`. */
  key: string;
  /** Lines of the keys under the seed (`git.ref`, `archive`, ...), for errors about one of them. */
  lines: Record<string, number>;
}

export interface SetupSpec {
  command?: Command;
  /** Folder of the eval file that declared the setup (for {EVAL_DIR}). */
  evalDir: string;
  instructions?: string;
  envPassthrough: string[];
  /** Whether setup may reach the network under bubblewrap (default true: it installs dependencies). */
  network?: boolean;
}

/** A hidden verifier: `from` (absolute) is copied to `to` (relative to the workspace) for scoring. */
export interface VerifierSpec {
  from: string;
  to: string;
}

/** `protected` (the default): checked after the agent and put back; `writable`: the agent's to change. */
export type GuardMode = "protected" | "writable";

/** What the scorers see besides the agent's work: protected paths and hidden verifiers. */
export interface ScoringGuards {
  /** Globs relative to the workspace, restored from the start tree before scoring. */
  protected: string[];
  verifiers: VerifierSpec[];
  /** The trees setup built (what the start tree ignores): absent means protected. */
  setupTrees?: GuardMode;
  /** Test configuration files (package.json scripts, conftest.py, ...): absent means protected. */
  testConfig?: GuardMode;
}

export interface WorkspaceSpec extends ScoringGuards {
  seed: SeedSpec;
  setup: SetupSpec;
  /** Where the seed is written (not part of the prepared start's identity). */
  seedOrigin?: SeedOrigin;
}

/** The folder of a workspace where setup and the agent run: its subdir, or the root. */
export function agentFolder(workspaceRoot: string, subdir: string | undefined): string {
  return subdir ? `${workspaceRoot}/${subdir}` : workspaceRoot;
}

export interface ScorerSpec {
  name: string;
  type: ScorerInput["type"];
  /** Resolved weight: as given, or 1/n when no scorer of the test has one. */
  weight: number;
  required: boolean;
  timeoutMs: number;
  /** The folder of the eval file that declared this scorer (for {EVAL_DIR}). */
  evalDir: string;
  /** The scorer's own options, as validated. */
  options: ScorerInput;
  /** verify_repeats of this scorer: its reruns on the final workspace (overrides the test's). */
  verifyRepeats?: number;
}

export interface TargetSpec {
  name: string;
  provider: ProviderName;
  command?: Command;
  model?: string;
  args: string[];
  env: Record<string, string>;
  envPassthrough: string[];
  timeoutMs?: number;
  sandbox?: SandboxSpec;
  /** `sandbox.network: { allow: [...] }`: the only hosts the agent may reach (in an environment). */
  networkAllow?: AllowedHost[];
  /** Presets: the agent's program (absolute, or a name looked up on PATH). */
  bin?: string;
  /** Presets: the agent CLI version to install from npm before the run (then `bin` is set to it). */
  version?: string;
  /** USD per million tokens, for a cost the agent does not report. */
  price?: { inputPerMtok: number; cachedPerMtok: number; outputPerMtok: number };
}

export interface TestSpec {
  id: string;
  description?: string;
  instruction: string;
  /** Absolute path of the reference patch, when the test has one. */
  reference?: string;
  /** "script": `reference` is a script run in the workspace instead of a patch applied. */
  referenceKind?: "script";
  threshold: number;
  /**
   * verify_repeats: the scorers run this many more times on the final workspace; disagreement is a
   * verifier flake. Unset: automatic reruns for an attempt that disagrees with its case (run/verify.ts); 0: none.
   */
  verifyRepeats?: number;
  tags: string[];
  workspace: WorkspaceSpec;
  scorers: ScorerSpec[];
}

export interface Timeouts {
  setupMs: number;
  agentMs: number;
  scorerMs: number;
}

/** Sizes of the evidence an attempt keeps. */
export interface Limits {
  diffBytes: number;
  logBytes: number;
}

export const DEFAULT_LIMITS: Limits = { diffBytes: 10 * 1024 * 1024, logBytes: 5 * 1024 * 1024 };

export type OnError = "fail" | "exclude" | "retry";
export type RegressionRule = "fail" | "warn" | "ignore";
/** `repeat: N`, or `repeat: {min, max}` (adaptive attempts). */
export type RepeatSetting = number | { min: number; max: number };

export interface CaseGate {
  policy: GatePolicy;
  threshold?: number;
  onError: OnError;
  /** Extra tries for an errored attempt (on_error: retry). */
  retries: number;
}

export interface Budget {
  costUsd?: number;
  tokens?: number;
  durationMs?: number;
}

/** One root eval file of the run: its run-level policy applies to the cases it brought. */
export interface EvalRoot {
  path: string;
  evalPath: string;
  name: string;
  description?: string;
  tags: Record<string, string>;
  minCasePassRate: number;
  regressions: RegressionRule;
  /** significant: a flip fails only on a drop significant after Holm's correction; any: every flip (older bundles). */
  regressionEvidence?: "significant" | "any";
  /** Family-wise significance level of regressions (default 0.05). */
  regressionAlpha?: number;
  /** What an inconclusive case does to the gate (default warn). */
  onInconclusive?: "pass" | "warn" | "fail";
  budget: Budget;
  concurrency?: number;
  /** `paths:` globs (relative to the repository root): a pull request touching none skips the suite. */
  paths?: string[];
}

/**
 * How a case stands to the exam when the exam comes from another commit (docs/exam.md):
 * `proposed` — new in the checkout, run from its own definition and never gating; `changed` — the
 * checkout changes its definition (`changes` says what), judged by the exam's; `removed` — the
 * checkout no longer has it, run from the exam's all the same.
 */
export interface CaseExam {
  status: "proposed" | "changed" | "removed";
  /** What the checkout changes in the case's exam ("scorer unit", "verifiers", "instruction", ...). */
  changes: string[];
}

/** An eval file the checkout adds, removes or changes (its gate, its paths) against the exam. */
export interface ExamFileChange {
  evalPath: string;
  change: "added" | "removed" | "changed";
  changes: string[];
}

/** Where the exam came from, and what the checkout changes in it at file level. */
export interface PlanExam {
  /** The commit the exam was read from. */
  sha: string;
  /** The ref as given (`--exam-from`, or the pull request's base commit). */
  ref: string;
  files: ExamFileChange[];
}

/** One case: a test run by one target, `repeat` times. */
export interface CaseSpec {
  identity: Identity;
  key: string;
  /** evalPath of the root eval file whose policy governs this case. */
  rootEvalPath: string;
  /** Display name of the eval file (its `name`, or the file name). */
  suite: string;
  /** Folder of the eval file that owns the test. */
  evalDir: string;
  test: TestSpec;
  target: TargetSpec;
  /** Attempts every case gets (the `min` of adaptive attempts). */
  repeat: number;
  /** Adaptive attempts: the most an undecided case may get (absent: a fixed `repeat`). */
  repeatMax?: number;
  gate: CaseGate;
  timeouts: Timeouts;
  limits: Limits;
  /** The image the case's agent, setup and scorers run in; absent: the runner's own system. */
  environment?: EnvironmentSpec;
  /** Per-attempt limits. */
  resources?: ResourceSpec;
  /** Set when the exam comes from another commit and this case is not as the exam has it. */
  exam?: CaseExam;
}

/** What a target's agent may reach: its allow-list, else its sandbox's switch, else everything. */
export function networkPolicyOf(target: TargetSpec): NetworkPolicy {
  if (target.networkAllow) return { allow: target.networkAllow };
  return target.sandbox ? target.sandbox.network : true;
}

export interface Plan {
  projectRoot: string;
  roots: EvalRoot[];
  cases: CaseSpec[];
  concurrency: number;
  /** Notes for the user (suites that run through a wrapper, filters that matched nothing). */
  notes: string[];
  /** Set when the exam was read from another commit (docs/exam.md). */
  exam?: PlanExam;
  /**
   * Answer keys no case of the plan names but an agent must not read either: the checkout's copies
   * of the exam's verifiers and references, and those of the checkout's own definitions.
   */
  answerKeys?: string[];
  /** Advice for the eval file's author that `validate` shows (a scorer that would say more). */
  tips?: string[];
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  setupMs: 10 * 60_000,
  agentMs: 20 * 60_000,
  scorerMs: 10 * 60_000,
};
