/**
 * The quarantine file as a step reads it (config/quarantine.ts reads and checks it; the CLI reads it
 * the same way). On a pull request judged by its base commit the base's file (from the exam's
 * files, pipeline/exam.ts) applies: a problem the PR brings into the file fails the PR (exit 2,
 * naming file and line), a problem the base already has is reported and its entry ignored. With
 * trust-pr-gate the PR's own file applies, read strictly: its problems are the PR's. Anywhere else
 * (a push, the merge queue) the checkout's file is the base branch's: its bad entries are reported
 * and ignored, never a reason to stop every run (decision 0200).
 */
import path from "node:path";
import {
  parseQuarantine,
  pullRequestQuarantine,
  type Quarantine,
  type QuarantineText,
  quarantineText,
} from "../config/quarantine.js";
import { ConfigError } from "../errors.js";
import type { Logger } from "../log.js";

export interface StepQuarantine {
  quarantine: Quarantine | null;
  /** What the pull request changes in the file, to show (applies after merge); [] elsewhere. */
  changes: string[];
}

/**
 * The quarantine of a step: `rel` is the file's path in the repository at `root`. `exam`: the base
 * commit's files a pull request is judged by (null off pull requests and with trust-pr-gate);
 * `trustedPr`: a pull request whose own file applies (trust-pr-gate).
 */
export async function stepQuarantine(o: {
  root: string;
  rel: string;
  today: Date;
  exam: { root: string; sha: string } | null;
  trustedPr: boolean;
  logger: Logger;
}): Promise<StepQuarantine> {
  const headText = await quarantineText(path.join(o.root, o.rel), o.rel);
  const head: QuarantineText | null = headText === null ? null : { text: headText, display: o.rel };
  // A file outside the repository is no commit's: the base has none.
  const inRepo = !o.rel.startsWith("..") && !path.isAbsolute(o.rel);
  let result: StepQuarantine;
  if (o.exam) {
    const display = `${o.rel} at the base commit ${o.exam.sha.slice(0, 7)}`;
    const text = inRepo ? await quarantineText(path.join(o.exam.root, o.rel), display) : null;
    const base: QuarantineText | null = text === null ? null : { text, display };
    const pr = pullRequestQuarantine(base, head, o.today, "base");
    if (pr.introduced.length > 0) throw new ConfigError(pr.introduced);
    result = { quarantine: pr.quarantine, changes: pr.changes };
  } else {
    const mode = o.trustedPr ? "strict" : "lenient";
    result = { quarantine: head && parseQuarantine(head.text, head.display, o.today, mode), changes: [] };
  }
  const ignored = result.quarantine?.ignored ?? [];
  if (ignored.length > 0) {
    o.logger.warn(
      `${result.quarantine!.file}: ${ignored.length} quarantine ${ignored.length === 1 ? "entry is" : "entries are"} not valid and ignored (the file is already on the base branch): ${ignored
        .map((p) => `${p.line ? `line ${p.line}: ` : ""}${p.message}`)
        .join("; ")}`,
    );
  }
  return result;
}
