/**
 * What a pull request is judged by: the exam (its eval files' tests, scorers, verifiers, gate...)
 * and the quarantine file, read from the base commit, not from the PR's head (docs/exam.md). The
 * exam's files are opened by pipeline/exam.ts; this file gives it GitHub's tarball of the commit
 * for a checkout that cannot fetch it; github/quarantine.ts reads the base's quarantine from them. A PR's change to
 * either is shown and applies once it is merged. `trust-pr-gate: true` turns this off.
 */
import { UsageError } from "../errors.js";
import { apiStatus, explainApiError, type GitHubClient } from "./client.js";

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
