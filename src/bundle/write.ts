/** Writing the run bundle: attempt records as they finish, then case summaries, index and summary. */
import { createHash } from "node:crypto";
import { mkdir, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { OptionNaming } from "../config/options.js";
import type { CaseSpec, Identity } from "../config/types.js";
import { UsageError } from "../errors.js";
import type { Admission } from "../gate/admission.js";
import type { CaseDecision } from "../gate/case.js";
import type { CaseChange } from "../gate/compare.js";
import type { CaseHistory } from "../gate/history.js";
import type { AttemptResult } from "../run/types.js";
import { totalsOfAttempts } from "../run/usage.js";
import { NO_REDACTION, type Redactor } from "../sandbox/redact.js";
import { type WireCaseSummary, type WireIndexRow, type WireSummary, wireUsageTotals } from "./wire.js";
import { wireAttempt, wireGrading } from "./wire-attempt.js";
import { wireCaseSummary, wireIndexRow } from "./wire-case.js";

/**
 * Each identity's folder name, made once: a run asks for it about three times per attempt (the
 * evidence folder, the setup log, the case's files), each time a sha256 and two regular expressions.
 */
const dirNames = new Map<string, string>();

/** A readable slug plus a hash of the identity: unique per identity, stable across runs. */
export function resultDirName(id: Identity): string {
  const key = `${id.evalPath}\n${id.testId}\n${id.target}`;
  let name = dirNames.get(key);
  if (name === undefined) {
    name = dirNameOf(id, key);
    dirNames.set(key, name);
  }
  return name;
}

function dirNameOf(id: Identity, key: string): string {
  const slug = (s: string) =>
    s
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 48) || "x";
  const hash = createHash("sha256").update(key).digest("hex").slice(0, 8);
  return `${slug(id.testId)}--${slug(id.target)}-${hash}`;
}

/**
 * The default bundle folder, `.evalgate/results/<run_id>` under `cwd`. `.evalgate/` gets a
 * `.gitignore` of `*` the first time, so that git ignores evalgate's output without an edit to the
 * repository's own `.gitignore`: a later `git add -A` or auto-commit step in a workflow cannot pick
 * the bundle up.
 */
export async function defaultBundleDir(cwd: string, runId: string): Promise<string> {
  const root = path.resolve(cwd, ".evalgate");
  await mkdir(root, { recursive: true });
  await writeFile(
    path.join(root, ".gitignore"),
    "# written by evalgate: its run bundles are not source\n*\n",
    {
      flag: "wx",
    },
  ).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  return path.join(root, "results", runId);
}

export async function writeJson(file: string, value: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
}

export interface FinishedCase {
  spec: CaseSpec;
  tries: AttemptResult[];
  decision: CaseDecision;
  change: CaseChange | null;
  /** What makes the case's attempts comparable across runs (config/fingerprint.ts). */
  historyKey?: string;
  /** The base runs it was compared with (the pooled baseline), when there was a base. */
  history?: CaseHistory;
  /** Whether its verdict gates: admitted by its history, reported, or unproven (gate/admission.ts). */
  admission?: Admission;
}

/**
 * A bundle is written into a new or empty folder only: written over an earlier bundle it would mix
 * the two runs' evidence (an old run-3/ beside a new run-1/), and --out . would litter a checkout.
 */
export async function checkNewBundleFolder(dir: string, shown: string, naming: OptionNaming): Promise<void> {
  let entries: string[];
  try {
    if (!(await stat(dir)).isDirectory())
      throw new UsageError(`${naming.given("out", shown)} is a file, not a folder`);
    entries = await readdir(dir);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    return;
  }
  if (entries.length > 0) {
    throw new UsageError(
      `${naming.given("out", shown)} exists and is not empty (a bundle is never written over another): give a new folder, or remove this one`,
    );
  }
}

/**
 * The string values of evalgate's records that are its own structure, not text: enum values
 * (verdicts, statuses, kinds), identities and names from the eval file, paths and file names of the
 * bundle, run ids, commits and timestamps. They are never redacted: a secret that happens to be a
 * word evalgate uses (`MODE=pass`) would otherwise turn a verdict into `***` and a result folder
 * into one that does not exist (docs/decisions/0131). Everything else (messages, reasons, warnings,
 * diff paths, usage, scorer details) is redacted. Named by the value's own key, in the wire
 * (snake_case) and the in-memory (camelCase) spelling; inside a scorer's `details` (what its
 * command or the agent's tests printed) nothing is structure.
 */
const STRUCTURE = new Set([
  // enums
  "schema",
  "status",
  "verdict",
  "classification",
  "failure_stage",
  "failureStage",
  "failure_kind",
  "failureKind",
  "evidence",
  "on_error",
  "onError",
  "base_verdict",
  "baseVerdict",
  "change",
  "level",
  "cost_source",
  "costSource",
  "state",
  "type",
  "regressions",
  "regression_evidence",
  "regressionEvidence",
  "on_inconclusive",
  "onInconclusive",
  "index",
  "algorithm",
  "policy",
  // identities and names from the eval file
  "eval_path",
  "evalPath",
  "root_eval_path",
  "rootEvalPath",
  "test_id",
  "testId",
  "target",
  "suite",
  "provider",
  "model",
  "name",
  "tags",
  "targets",
  "tests",
  "caseKey",
  // the bundle's own paths and files
  "result_dir",
  "summary_path",
  "dir",
  "dirName",
  "result_path",
  "grading_path",
  "diff_path",
  "log",
  "prompt",
  "agent_log",
  "setup_log",
  "diff",
  "grading",
  "transcript",
  "agent_output",
  "agentOutput",
  // the run
  "id",
  "run_id",
  "baseline_run_id",
  "started_at",
  "startedAt",
  "finished_at",
  "finishedAt",
  "sha",
  "startSha",
  "baseline_git_sha",
  "merged_from",
  "evalgate_version",
  "node_version",
  "platform",
]);
/** Objects whose string values are all evalgate's (file names of an attempt's scorer logs). */
const STRUCTURE_UNDER = new Set(["scorer_logs"]);
/** A scorer's own output and what an agent reported (its model, its version): not evalgate's. */
const FREE_UNDER = new Set(["details", "usage"]);

/** Whether the string value at `keys` is evalgate's structure (kept as it is by redaction). */
export function structural(keys: readonly string[]): boolean {
  const last = keys.at(-1) ?? "";
  if (last === "cost_source" || last === "costSource") return true;
  if (keys.some((k) => FREE_UNDER.has(k))) return false;
  return STRUCTURE.has(last) || keys.some((k) => STRUCTURE_UNDER.has(k));
}

/**
 * Everything a run writes into its bundle goes through here, and so through the run's redactor:
 * the files an attempt left in its folder (logs, diff, transcripts) are redacted in place when the
 * attempt is recorded, and every JSON record is redacted before it is written. What the writer
 * returns is the redacted record, which is what the console and reports show.
 */
export class BundleWriter {
  constructor(
    readonly dir: string,
    readonly redactor: Redactor = NO_REDACTION,
  ) {}

  caseDir(spec: CaseSpec): string {
    return path.join(this.dir, resultDirName(spec.identity));
  }

  evidenceDir(spec: CaseSpec, dirName: string): string {
    return path.join(this.caseDir(spec), dirName);
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  /**
   * Redacts the files of one finished attempt's folder and writes its result.json (and
   * grading.json). Returns the attempt record as written (redacted).
   */
  async writeAttempt(spec: CaseSpec, r: AttemptResult, hasSetupLog: boolean): Promise<AttemptResult> {
    const dir = this.evidenceDir(spec, r.dirName);
    await this.redactor.files(dir);
    const safe = this.redactor.deep(r, structural);
    await writeJson(
      path.join(dir, "result.json"),
      this.redactor.deep(wireAttempt(spec, safe, hasSetupLog), structural),
    );
    if (safe.grading)
      await writeJson(path.join(dir, "grading.json"), this.redactor.deep(wireGrading(safe), structural));
    return safe;
  }

  /** Writes each case's summary.json and the index; returns both as written (redacted), in case order. */
  async writeCases(
    cases: readonly FinishedCase[],
  ): Promise<{ rows: WireIndexRow[]; summaries: WireCaseSummary[] }> {
    const rows: WireIndexRow[] = [];
    const summaries: WireCaseSummary[] = [];
    for (const c of cases) {
      const resultDir = resultDirName(c.spec.identity);
      const usage = wireUsageTotals(totalsOfAttempts(c.tries));
      const summary = this.redactor.deep(wireCaseSummary(c, usage), structural);
      await writeJson(path.join(this.dir, resultDir, "summary.json"), summary);
      summaries.push(summary);
      rows.push(this.redactor.deep(wireIndexRow(c, resultDir, usage), structural));
    }
    await writeFile(
      path.join(this.dir, "index.jsonl"),
      rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length ? "\n" : ""),
    );
    return { rows, summaries };
  }

  /** Writes summary.json; returns it as written (redacted). */
  async writeSummary(summary: WireSummary): Promise<WireSummary> {
    const safe = this.redactor.deep(summary, structural);
    await writeJson(path.join(this.dir, "summary.json"), safe);
    return safe;
  }
}
