/**
 * The quarantine applied to a run's cases, for both edges: which rows leave the gate (the run's
 * `gateExclude`), and the report of it (quarantined cases with owner and expiry, cases whose entry
 * expired, entries ignored as invalid). The file is read by config/quarantine.ts.
 */
import { rowKey } from "../bundle/read.js";
import type { WireIndexRow } from "../bundle/wire.js";
import { activeEntry, expiredEntry, type Quarantine, type QuarantineEntry } from "../config/quarantine.js";
import { formatProblem } from "../errors.js";
import type { QuarantineBlock } from "../report/bot.js";

/** A quarantined case of this run: the entry that covers it, and whether it has become stable. */
export interface QuarantinedCase {
  row: WireIndexRow;
  entry: QuarantineEntry;
  /** Passed on every attempt here and in the baseline: the quarantine can be lifted. */
  stable: boolean;
}

export interface QuarantineOutcome {
  file: string;
  /** Cases under a live entry: reported, not gating. */
  quarantined: QuarantinedCase[];
  /** Cases whose only entries have expired: they gate again. */
  expired: { row: WireIndexRow; entry: QuarantineEntry }[];
}

/** The run option that leaves quarantined cases out of the gate. */
export function gateExcludeOf(q: Quarantine): (row: WireIndexRow) => boolean {
  return (row) => activeEntry(q, row) !== undefined;
}

const passedAll = (r: WireIndexRow) =>
  r.verdict === "pass" && r.attempts.counted > 0 && r.attempts.passed === r.attempts.counted;

/** Sorts this run's rows into quarantined and expired-quarantine cases. */
export function applyQuarantine(
  q: Quarantine,
  rows: readonly WireIndexRow[],
  baseline?: readonly WireIndexRow[],
): QuarantineOutcome {
  const base = new Map((baseline ?? []).map((r) => [rowKey(r), r]));
  const quarantined: QuarantinedCase[] = [];
  const expired: QuarantineOutcome["expired"] = [];
  for (const row of rows) {
    const entry = activeEntry(q, row);
    if (entry) {
      const b = base.get(rowKey(row));
      quarantined.push({ row, entry, stable: passedAll(row) && (baseline ? !!b && passedAll(b) : true) });
      continue;
    }
    const old = expiredEntry(q, row);
    if (old) expired.push({ row, entry: old });
  }
  return { file: q.file, quarantined, expired };
}

/** What the reports show of the quarantine (report/bot.ts renders it for the comment and the console). */
export function quarantineBlock(
  q: Quarantine,
  rows: readonly WireIndexRow[],
  baseline?: readonly WireIndexRow[],
): QuarantineBlock {
  const o = applyQuarantine(q, rows, baseline);
  const name = (r: WireIndexRow) => ({
    suite: r.suite,
    testId: r.test_id,
    target: r.target,
    verdict: r.verdict,
  });
  return {
    file: o.file,
    quarantined: o.quarantined.map((c) => ({
      ...name(c.row),
      owner: c.entry.owner,
      expires: c.entry.expires,
      reason: c.entry.reason,
      stable: c.stable,
    })),
    expired: o.expired.map((c) => ({ ...name(c.row), owner: c.entry.owner, expires: c.entry.expires })),
    ignored: q.ignored.map((p) => ({
      line: p.line ?? null,
      message: formatProblem({ ...p, file: undefined, line: undefined }),
    })),
  };
}
