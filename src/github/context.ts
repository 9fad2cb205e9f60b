/**
 * What the workflow run is about, from the runner's variables and the event payload
 * (GITHUB_EVENT_PATH). Read explicitly rather than through @actions/github's `context`, which is
 * fixed when the module is imported and reports the merge commit on pull requests.
 */
import { readFileSync } from "node:fs";
import { UsageError } from "../errors.js";

export interface PullRequestInfo {
  number: number;
  /** The branch the PR merges into: its runs give the baseline. */
  baseRef: string | null;
  headSha: string | null;
  /** The base branch's commit the PR is compared with: its gate and quarantine judge the PR (trusted.ts). */
  baseSha?: string | null;
  headRepo: string | null;
  baseRepo: string | null;
  /** The head lives in another repository: the workflow gets a read-only token and no secrets. */
  fork: boolean;
}

export interface WorkflowRunInfo {
  id: number;
  headSha: string;
  /** Empty for pull requests from forks (GitHub leaves the list empty there). */
  pullRequests: number[];
}

export interface EventContext {
  eventName: string;
  owner: string;
  repo: string;
  /** The commit evalgate reports on: the PR head (not the merge commit), the queue's head, the push. */
  sha: string;
  /** The branch whose latest successful run is the baseline. */
  baseBranch: string | null;
  pullRequest: PullRequestInfo | null;
  /** Set under workflow_run: the run that triggered this one. */
  workflowRun: WorkflowRunInfo | null;
  runId: number | null;
  runAttempt: number | null;
  /** `.github/workflows/x.yml`, from GITHUB_WORKFLOW_REF. */
  workflowPath: string | null;
  serverUrl: string;
  apiUrl: string;
  /** The commit the workflow itself was started on (GITHUB_SHA): the base under pull_request_target. */
  workflowSha: string | null;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" ? (v as Json) : {});
const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function branchOf(ref: string | null): string | null {
  return ref?.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : null;
}

/** The PR number in a merge queue ref: `refs/heads/gh-readonly-queue/main/pr-104-<sha>`. */
export function mergeQueuePrNumber(headRef: string | null): number | null {
  const m = headRef ? /\/pr-(\d+)-[0-9a-f]+$/.exec(headRef) : null;
  return m ? Number(m[1]) : null;
}

export function eventContext(env: NodeJS.ProcessEnv, payload: Json): EventContext {
  const eventName = env.GITHUB_EVENT_NAME ?? "";
  const [owner, repo] = (env.GITHUB_REPOSITORY ?? "").split("/");
  const payloadRepo = str(obj(payload.repository).full_name)?.split("/") ?? [];
  const o = owner || payloadRepo[0];
  const r = repo || payloadRepo[1];
  if (!o || !r) {
    throw new UsageError(
      "GITHUB_REPOSITORY is not set: evalgate's action runs inside a GitHub Actions workflow",
    );
  }
  const workflowSha = str(env.GITHUB_SHA);
  let sha = workflowSha;
  let baseBranch = branchOf(str(env.GITHUB_REF)) ?? str(env.GITHUB_REF_NAME);
  let pullRequest: PullRequestInfo | null = null;
  let workflowRun: WorkflowRunInfo | null = null;

  if (eventName === "pull_request" || eventName === "pull_request_target") {
    const pr = obj(payload.pull_request);
    const head = obj(pr.head);
    const base = obj(pr.base);
    const headRepo = str(obj(head.repo).full_name);
    const baseRepo = str(obj(base.repo).full_name) ?? `${o}/${r}`;
    pullRequest = {
      number: num(pr.number) ?? num(payload.number) ?? 0,
      baseRef: str(base.ref),
      headSha: str(head.sha),
      baseSha: str(base.sha),
      headRepo,
      baseRepo,
      // A deleted fork leaves head.repo null: still not this repository.
      fork: headRepo !== baseRepo,
    };
    sha = pullRequest.headSha ?? sha;
    baseBranch = pullRequest.baseRef;
  } else if (eventName === "merge_group") {
    const mg = obj(payload.merge_group);
    sha = str(mg.head_sha) ?? sha;
    baseBranch = branchOf(str(mg.base_ref));
    const n = mergeQueuePrNumber(str(mg.head_ref));
    if (n !== null) {
      pullRequest = {
        number: n,
        baseRef: baseBranch,
        headSha: sha,
        baseSha: str(mg.base_sha),
        headRepo: `${o}/${r}`,
        baseRepo: `${o}/${r}`,
        fork: false,
      };
    }
  } else if (eventName === "push") {
    sha = str(payload.after) ?? sha;
  } else if (eventName === "workflow_run") {
    const wr = obj(payload.workflow_run);
    workflowRun = {
      id: num(wr.id) ?? 0,
      headSha: str(wr.head_sha) ?? "",
      pullRequests: (Array.isArray(wr.pull_requests) ? wr.pull_requests : [])
        .map((p) => num(obj(p).number))
        .filter((n): n is number => n !== null),
    };
    sha = workflowRun.headSha || sha;
  }

  // GITHUB_WORKFLOW_REF: owner/repo/.github/workflows/ci.yml@refs/heads/main
  const workflowRef = str(env.GITHUB_WORKFLOW_REF);
  const workflowPath = workflowRef ? (/^[^/]+\/[^/]+\/(.+?)@/.exec(workflowRef)?.[1] ?? null) : null;
  const runId = Number(env.GITHUB_RUN_ID);
  const runAttempt = Number(env.GITHUB_RUN_ATTEMPT);
  return {
    eventName,
    owner: o,
    repo: r,
    sha: sha ?? "",
    baseBranch,
    pullRequest,
    workflowRun,
    runId: Number.isInteger(runId) && runId > 0 ? runId : null,
    runAttempt: Number.isInteger(runAttempt) && runAttempt > 0 ? runAttempt : null,
    workflowPath,
    serverUrl: (env.GITHUB_SERVER_URL || "https://github.com").replace(/\/+$/, ""),
    apiUrl: (env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, ""),
    workflowSha,
  };
}

/** The context of this step: the variables of `env` and the payload in GITHUB_EVENT_PATH. */
export function readEventContext(env: NodeJS.ProcessEnv): EventContext {
  return eventContext(env, readEventPayload(env));
}

/** The event payload in GITHUB_EVENT_PATH ({} without one). */
export function readEventPayload(env: NodeJS.ProcessEnv): Json {
  const file = env.GITHUB_EVENT_PATH;
  let payload: Json = {};
  if (file) {
    try {
      payload = obj(JSON.parse(readFileSync(file, "utf8")));
    } catch (error) {
      throw new UsageError(`GITHUB_EVENT_PATH ${file} cannot be read: ${(error as Error).message}`);
    }
  }
  return payload;
}

/** The link to this workflow run, when known. */
export function runUrl(ctx: EventContext): string | undefined {
  return ctx.runId
    ? `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}/actions/runs/${ctx.runId}${ctx.runAttempt && ctx.runAttempt > 1 ? `/attempts/${ctx.runAttempt}` : ""}`
    : undefined;
}
