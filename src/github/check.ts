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
export function checkTitle(summary: Outcome & { run?: { interrupted: string | null } }): string {
  if (summary.run?.interrupted) return `cancelled: ${summary.run.interrupted}`.slice(0, 250);
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

export type CheckConclusion = "success" | "failure" | "cancelled" | "skipped" | "neutral";

/**
 * A completed check run: `existing` (one a command opened in progress when it started) is
 * concluded, else a new one is created.
 */
export async function completeCheckRun(
  client: GitHubClient,
  o: {
    owner: string;
    repo: string;
    name: string;
    headSha: string;
    conclusion: CheckConclusion;
    title: string;
    body: string;
    detailsUrl?: string;
    existing?: number;
  },
): Promise<{ id: number; url: string }> {
  const fields = {
    status: "completed" as const,
    conclusion: o.conclusion,
    completed_at: new Date().toISOString(),
    ...(o.detailsUrl ? { details_url: o.detailsUrl } : {}),
    output: { title: o.title, summary: o.body },
  };
  const { data } = o.existing
    ? await client.rest.checks.update({ owner: o.owner, repo: o.repo, check_run_id: o.existing, ...fields })
    : await client.rest.checks.create({
        owner: o.owner,
        repo: o.repo,
        name: o.name,
        head_sha: o.headSha,
        ...fields,
      });
  return { id: data.id, url: data.html_url ?? "" };
}

/** A check run in progress on `headSha` (a command's run, from its start): concluded by completeCheckRun. */
export async function startCheckRun(
  client: GitHubClient,
  o: { owner: string; repo: string; name: string; headSha: string; title: string; detailsUrl?: string },
): Promise<number> {
  const { data } = await client.rest.checks.create({
    owner: o.owner,
    repo: o.repo,
    name: o.name,
    head_sha: o.headSha,
    status: "in_progress",
    started_at: new Date().toISOString(),
    ...(o.detailsUrl ? { details_url: o.detailsUrl } : {}),
    output: { title: o.title, summary: o.title },
  });
  return data.id;
}

export async function publishCheckRun(
  client: GitHubClient,
  opts: {
    owner: string;
    repo: string;
    name: string;
    headSha: string;
    summary: Outcome & { run?: { interrupted: string | null } };
    body: string;
    detailsUrl?: string;
    existing?: number;
  },
): Promise<{ id: number; url: string }> {
  const conclusion = opts.summary.run?.interrupted
    ? "cancelled"
    : opts.summary.gate.verdict === "pass"
      ? "success"
      : "failure";
  return completeCheckRun(client, {
    owner: opts.owner,
    repo: opts.repo,
    name: opts.name,
    headSha: opts.headSha,
    conclusion,
    title: checkTitle(opts.summary),
    body: opts.body,
    ...(opts.detailsUrl ? { detailsUrl: opts.detailsUrl } : {}),
    ...(opts.existing ? { existing: opts.existing } : {}),
  });
}
