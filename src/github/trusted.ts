/**
 * What a pull request is judged by: the exam (its eval files' tests, scorers, verifiers, gate...)
 * and the quarantine file, read from the base commit, not from the PR's head (docs/exam.md). The
 * exam's files are opened by pipeline/exam.ts; this file gives it GitHub's tarball of the commit
 * for a checkout that cannot fetch it, and reads the base's quarantine from them. A PR's change to
 * either is shown and applies once it is merged. `trust-pr-gate: true` turns this off.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors.js";
import { apiStatus, explainApiError, type GitHubClient } from "./client.js";
import { parseQuarantine, type Quarantine } from "./quarantine.js";

/** The way out when the base commit's files cannot be read, in the action's words. */
export const EXAM_FIX =
  "Check out with fetch-depth: 0 (actions/checkout), or grant the job contents: read so evalgate can download the base commit from GitHub; set trust-pr-gate: true only if every pull request's author is trusted";

/** A commit's files as GitHub's tarball API serves them (`contents: read`), gzipped. */
export function tarballApi(
  client: GitHubClient,
  repo: { owner: string; repo: string },
): (sha: string) => Promise<Buffer> {
  return async (sha) => {
    try {
      const { data } = await client.rest.repos.downloadTarballArchive({
        owner: repo.owner,
        repo: repo.repo,
        ref: sha,
      });
      return Buffer.from(data as ArrayBuffer);
    } catch (error) {
      const why = explainApiError(
        error,
        `downloading the base commit ${sha.slice(0, 7)} from GitHub`,
        "contents: read",
      );
      throw new UsageError(
        apiStatus(error) === 404
          ? `the base commit ${sha.slice(0, 7)} is not on GitHub (or the token cannot read the repository's contents). ${EXAM_FIX}`
          : `${why}. ${EXAM_FIX}`,
      );
    }
  };
}

export interface TrustedQuarantine {
  quarantine: Quarantine | null;
  /** What the PR changes in the file (entries added / removed), to show; applies after merge. */
  changes: string[];
}

/**
 * The quarantine file as the base commit has it (its files opened in `exam.root`), and what the
 * PR's head changes in it.
 */
export async function trustedQuarantine(
  root: string,
  exam: { root: string; sha: string },
  rel: string,
  today: Date,
): Promise<TrustedQuarantine> {
  // A file outside the repository is no commit's: the base has none.
  const inRepo = !rel.startsWith("..") && !path.isAbsolute(rel);
  const baseText = inRepo ? await readFile(path.join(exam.root, rel), "utf8").catch(() => null) : null;
  const quarantine =
    baseText === null
      ? null
      : parseQuarantine(baseText, `${rel} at the base commit ${exam.sha.slice(0, 7)}`, today);
  const headText = await readFile(path.join(root, rel), "utf8").catch(() => null);
  const key = (e: { case: string; target?: string | undefined }) =>
    `${e.case}${e.target ? ` on ${e.target}` : ""}`;
  const baseKeys = new Set((quarantine?.entries ?? []).map(key));
  let headKeys = new Set<string>();
  if (headText !== null) {
    try {
      headKeys = new Set(parseQuarantine(headText, rel, today).entries.map(key));
    } catch (error) {
      return {
        quarantine,
        changes: [`the PR's ${rel} is not valid: ${(error as Error).message.split("\n")[0]}`],
      };
    }
  }
  const changes = [
    ...[...headKeys].filter((k) => !baseKeys.has(k)).map((k) => `adds ${k}`),
    ...[...baseKeys].filter((k) => !headKeys.has(k)).map((k) => `lifts ${k}`),
  ];
  return { quarantine, changes };
}
