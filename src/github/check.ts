/**
 * The optional check run (input check-name): a completed check on the evaluated commit with the
 * gate's conclusion and the report as its summary. The job's exit status stays the primary signal;
 * this is a second place to see the result, named as the user wants it in branch protection.
 */
import { type VerdictFacts, verdictText } from "../report/comment-head.js";
import type { GitHubClient } from "./client.js";

/** GitHub's limit for a check run's output.summary. */
export const CHECK_SUMMARY_LIMIT = 65_535;

/** The run as the report view read it (types checked, so a bundle from elsewhere cannot smuggle text). */
type Outcome = VerdictFacts;

/** The comment headline's verdict and reason first, then the counts. */
export function checkTitle(summary: Outcome): string {
  const c = summary.counts;
  const extra = [
    c.failed && `${c.failed} failed`,
    c.errored && `${c.errored} errored`,
    c.flaky && `${c.flaky} flaky`,
  ]
    .filter(Boolean)
    .join(", ");
  return `${verdictText(summary)} · ${c.passed} of ${c.cases} cases passed${extra ? ` (${extra})` : ""}`;
}

export async function publishCheckRun(
  client: GitHubClient,
  opts: {
    owner: string;
    repo: string;
    name: string;
    headSha: string;
    summary: Outcome;
    body: string;
    detailsUrl?: string;
  },
): Promise<{ id: number; url: string }> {
  const { data } = await client.rest.checks.create({
    owner: opts.owner,
    repo: opts.repo,
    name: opts.name,
    head_sha: opts.headSha,
    status: "completed",
    conclusion: opts.summary.gate.verdict === "pass" ? "success" : "failure",
    completed_at: new Date().toISOString(),
    ...(opts.detailsUrl ? { details_url: opts.detailsUrl } : {}),
    output: { title: checkTitle(opts.summary), summary: opts.body },
  });
  return { id: data.id, url: data.html_url ?? "" };
}
