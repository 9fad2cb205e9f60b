/**
 * The base branch's history, read from its bundles (`--baseline B1 --baseline B2`, `--baseline DIR`,
 * `baseline: auto`): each case's runs, newest first, keyed by identity. Bundles come through the one
 * confined reader (bundle/read.ts); this file only turns their rows into gate/history.ts runs.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors.js";
import { type BaseRun, type CaseHistory, comparableRuns } from "../gate/history.js";
import { type Bundle, BundleError, readBundle, rowKey } from "./read.js";
import type { WireIndexRow } from "./wire.js";

/** One run of a case, from its bundle's row: the attempts among the first `min` are its fixed part. */
export function baseRunOf(bundle: Bundle, row: WireIndexRow): BaseRun {
  const min = row.repeat?.min ?? Number.POSITIVE_INFINITY;
  const finals = new Map<number, WireIndexRow["runs"][number]>();
  for (const r of row.runs) {
    const prev = finals.get(r.attempt);
    if (!prev || r.retry > prev.retry) finals.set(r.attempt, r);
  }
  let counted = 0;
  let passed = 0;
  for (const r of finals.values()) {
    if (r.attempt > min || (r.status !== "passed" && r.status !== "failed")) continue;
    counted++;
    if (r.status === "passed") passed++;
  }
  return {
    runId: bundle.summary.run.id,
    gitSha: bundle.summary.git?.sha ?? null,
    startedAt: bundle.summary.run.started_at,
    key: row.history_key ?? null,
    verdict: row.verdict,
    flaky: row.flaky,
    counted: row.attempts.counted,
    passed: row.attempts.passed,
    // A row without runs listed (never written so) keeps its totals.
    first: row.runs.length
      ? { counted, passed }
      : { counted: row.attempts.counted, passed: row.attempts.passed },
  };
}

/** The base runs of every case, newest bundle first. */
export class BaseHistory {
  /** The bundles, newest first (one per run id); an interrupted run is left out. */
  readonly bundles: Bundle[];
  private readonly byCase = new Map<string, BaseRun[]>();

  constructor(bundles: readonly Bundle[]) {
    const seen = new Set<string>();
    this.bundles = [...bundles]
      .filter((b) => b.summary.status !== "interrupted")
      .sort((a, b) => b.summary.run.started_at.localeCompare(a.summary.run.started_at))
      .filter((b) => {
        if (seen.has(b.summary.run.id)) return false;
        seen.add(b.summary.run.id);
        return true;
      });
    for (const b of this.bundles) {
      for (const row of b.rows) {
        const k = rowKey(row);
        const runs = this.byCase.get(k) ?? [];
        runs.push(baseRunOf(b, row));
        this.byCase.set(k, runs);
      }
    }
  }

  /** The newest bundle: what a single baseline was (removed cases, durations, carried rows). */
  get newest(): Bundle | undefined {
    return this.bundles[0];
  }

  /** Whether the case (rowKey / identityKey) has any base run. */
  has(caseKey: string): boolean {
    return this.byCase.has(caseKey);
  }

  /** Every base run of the case, newest first. */
  runsOf(caseKey: string): BaseRun[] {
    return this.byCase.get(caseKey) ?? [];
  }

  /** The runs the case is compared with, for a head of `key`. */
  of(caseKey: string, key: string | null): CaseHistory {
    return comparableRuns(this.runsOf(caseKey), key);
  }
}

/**
 * The bundles under the paths a user gave: each a bundle, or a folder whose sub-folders are bundles
 * (`--baseline DIR`). A folder that is neither, or a bundle that cannot be read, is a UsageError
 * naming it and `label` (how the user spelled the option), with the reader's reason.
 */
export async function readBaselines(paths: readonly string[], cwd: string, label: string): Promise<Bundle[]> {
  const out: Bundle[] = [];
  for (const given of paths) {
    const abs = path.resolve(cwd, given);
    const isBundle = await stat(path.join(abs, "summary.json")).then(
      () => true,
      () => false,
    );
    if (isBundle) {
      out.push(await readOne(abs, given, label));
      continue;
    }
    const names = await readdir(abs).catch(() => [] as string[]);
    const inner: string[] = [];
    for (const name of names.sort()) {
      const sub = path.join(abs, name);
      if (
        await stat(path.join(sub, "summary.json")).then(
          (s) => s.isFile(),
          () => false,
        )
      )
        inner.push(name);
    }
    // Neither a bundle nor a folder of bundles: the reader says why (cut off, empty, not evalgate's).
    if (inner.length === 0) out.push(await readOne(abs, given, label));
    for (const name of inner) out.push(await readOne(path.join(abs, name), path.join(given, name), label));
  }
  return out;
}

async function readOne(abs: string, shown: string, label: string): Promise<Bundle> {
  try {
    return await readBundle(abs);
  } catch (error) {
    if (error instanceof BundleError)
      throw new UsageError(`${label}: ${error.message.replaceAll(abs, shown)}`);
    throw error;
  }
}
