/**
 * The quarantine file as a step reads it (config/quarantine.ts reads and checks it; the CLI reads it
 * the same way). On a pull request the base commit's file applies unless the PR's rules are trusted;
 * a problem the PR brings into the file fails the PR (exit 2, naming file and line), a problem the
 * base already has is reported and its entry ignored. Anywhere else (a push, the merge queue) the
 * checkout's file is the base branch's: its bad entries are reported and ignored, never a reason to
 * stop every run (decision 0200).
 */
import path from "node:path";
import {
  parseQuarantine,
  pullRequestQuarantine,
  type Quarantine,
  type QuarantineText,
  quarantineText,
} from "../config/quarantine.js";
import { ConfigError, UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import { type FileAtCommit, showAtCommit } from "./trusted.js";

export interface StepQuarantine {
  quarantine: Quarantine | null;
  /** What the pull request changes in the file, to show (applies after merge); [] elsewhere. */
  changes: string[];
}

/**
 * The quarantine of a step: `rel` is the file's path in the repository at `root`; `baseSha` the
 * pull request's base commit (null off pull requests); `trustPr` applies the PR's own file.
 */
export async function stepQuarantine(o: {
  root: string;
  rel: string;
  today: Date;
  baseSha: string | null;
  trustPr: boolean;
  remote?: FileAtCommit;
  logger: Logger;
}): Promise<StepQuarantine> {
  const headText = await quarantineText(path.join(o.root, o.rel), o.rel);
  const head: QuarantineText | null = headText === null ? null : { text: headText, display: o.rel };
  let result: StepQuarantine;
  if (o.baseSha) {
    const sha = o.baseSha;
    let base: QuarantineText | null | undefined;
    try {
      const text = await showAtCommit(o.root, sha, o.rel, o.remote);
      base = text === null ? null : { text, display: `${o.rel} at the base commit ${sha.slice(0, 7)}` };
    } catch (error) {
      // The PR's own file is trusted: without the base to compare with, it is read strictly.
      if (!(o.trustPr && error instanceof UsageError)) throw error;
    }
    if (base === undefined) {
      result = { quarantine: head && parseQuarantine(head.text, head.display, o.today), changes: [] };
    } else {
      const pr = pullRequestQuarantine(base, head, o.today, o.trustPr ? "head" : "base");
      if (pr.introduced.length > 0) throw new ConfigError(pr.introduced);
      result = { quarantine: pr.quarantine, changes: o.trustPr ? [] : pr.changes };
    }
  } else {
    result = {
      quarantine: head && parseQuarantine(head.text, head.display, o.today, "lenient"),
      changes: [],
    };
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
