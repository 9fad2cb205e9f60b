import { describe, expect, it } from "vitest";
import { eventContext, mergeQueuePrNumber, runUrl } from "../../src/github/context.js";
import { examplePayload } from "./harness.js";

const env = (event: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  GITHUB_EVENT_NAME: event,
  GITHUB_REPOSITORY: "Codertocat/Hello-World",
  GITHUB_SHA: "f".repeat(40),
  GITHUB_REF: "refs/heads/main",
  GITHUB_RUN_ID: "1234",
  GITHUB_RUN_ATTEMPT: "2",
  GITHUB_WORKFLOW_REF: "Codertocat/Hello-World/.github/workflows/evals.yml@refs/pull/2/merge",
  ...extra,
});

describe("the event context, from real webhook payloads", () => {
  it("pull_request: the PR head, not the merge commit in GITHUB_SHA", () => {
    const ctx = eventContext(
      env("pull_request", { GITHUB_REF: "refs/pull/2/merge" }),
      examplePayload("pull_request", "opened"),
    );
    expect(ctx).toMatchObject({
      sha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
      baseBranch: "master",
      pullRequest: { number: 2, fork: false, headRepo: "Codertocat/Hello-World" },
      workflowPath: ".github/workflows/evals.yml",
      runId: 1234,
    });
    expect(runUrl(ctx)).toBe("https://github.com/Codertocat/Hello-World/actions/runs/1234/attempts/2");
  });

  it("pull_request from a fork, or from a deleted fork", () => {
    const p = examplePayload("pull_request", "opened") as { pull_request: { head: { repo: unknown } } };
    p.pull_request.head.repo = { full_name: "forker/Hello-World" };
    expect(eventContext(env("pull_request"), p).pullRequest).toMatchObject({
      fork: true,
      headRepo: "forker/Hello-World",
    });
    p.pull_request.head.repo = null;
    expect(eventContext(env("pull_request"), p).pullRequest).toMatchObject({ fork: true, headRepo: null });
  });

  it("merge_group: the queue's head commit, the PR from the queue ref, the base branch", () => {
    const ctx = eventContext(
      env("merge_group", { GITHUB_REPOSITORY: "octo-org/octo-repo" }),
      examplePayload("merge_group"),
    );
    expect(ctx).toMatchObject({
      sha: "2ffea6db159f6b6c47a24e778fb9ef40cf6b1c7d",
      baseBranch: "main",
      pullRequest: { number: 104, fork: false },
    });
    expect(mergeQueuePrNumber("refs/heads/gh-readonly-queue/main/pr-7-abc123")).toBe(7);
    expect(mergeQueuePrNumber("refs/heads/main")).toBeNull();
  });

  it("push and workflow_dispatch: the pushed commit and its branch", () => {
    const push = examplePayload("push") as { ref: string; after: string };
    const ctx = eventContext(env("push", { GITHUB_REF: "refs/heads/master" }), push);
    expect(ctx).toMatchObject({ sha: push.after, baseBranch: "master", pullRequest: null });
    const dispatch = eventContext(env("workflow_dispatch"), examplePayload("workflow_dispatch"));
    expect(dispatch).toMatchObject({ sha: "f".repeat(40), baseBranch: "main", pullRequest: null });
  });

  it("workflow_run: the triggering run, its commit and its PRs", () => {
    const ctx = eventContext(
      env("workflow_run", { GITHUB_REPOSITORY: "octo-org/octo-repo" }),
      examplePayload("workflow_run", "completed"),
    );
    expect(ctx.workflowRun).toMatchObject({
      id: 1589141559,
      headSha: "5779607b49aab1200488439f02372c57b4f75444",
      pullRequests: [],
    });
  });

  it("pull_request_target keeps the workflow's own commit for the safety check", () => {
    const ctx = eventContext(env("pull_request_target"), examplePayload("pull_request", "opened"));
    expect(ctx.workflowSha).toBe("f".repeat(40));
    expect(ctx.sha).toBe("ec26c3e57ca3a959ca5aad62de7213c562f8c821");
  });
});
