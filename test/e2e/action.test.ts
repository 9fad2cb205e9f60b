/**
 * The built action (dist/index.js) run as GitHub runs it, under Node 20 and Node 24, against a
 * local GitHub: a push on main makes the baseline artifact; a pull request compares with it, posts
 * one sticky comment (found again across pages of other comments) and updates it on the next push.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MARKER,
  MERGE_SHA,
  makeRepo,
  prPayload,
  prRun,
  pushOnMain,
  REPO,
  type Repo,
} from "../github/fixture.js";
import { type ActionRun, NODE20, NODE24, requireBuiltAction, runStep } from "../github/harness.js";
import { FakeGitHub } from "../github/server.js";
import { readJson } from "../helpers.js";

requireBuiltAction();

describe.each([
  ["Node 20", NODE20],
  ["Node 24", NODE24],
])("the action on a pull request (%s)", (_label, node) => {
  let gh: FakeGitHub;
  let repo: Repo;
  let token: string;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    repo = makeRepo();
    token = gh.token({ "pull-requests": "write", actions: "read", checks: "write" });
    gh.pulls.set(2, { number: 2, headSha: repo.broken, headRef: "feature", headRepo: REPO, baseRef: "main" });
    // 150 comments by people before evalgate's: its own lands on the second page of 100.
    for (let i = 0; i < 150; i++) gh.addComment(2, i === 7 ? `> ${MARKER}\n> quoted` : `comment ${i}`);
  });
  afterAll(() => gh.close());

  it("runs the bundle on the Node it says", () => {
    const major = Number(/^v(\d+)/.exec(execFileSync(node, ["--version"], { encoding: "utf8" }))![1]);
    // The Node 20 leg is the Node running the tests (the runner's own); it must not be the 24 one.
    if (node === NODE24) expect(major).toBe(24);
    else expect(major).toBeLessThan(24);
  });

  let push: ActionRun;
  it("a push on main passes, uploads the bundle, and has no baseline yet", async () => {
    push = await pushOnMain(gh, repo, token, node);
    expect(push.stderr).toBe("");
    expect(push.code).toBe(0);
    expect(push.outputs).toMatchObject({
      verdict: "pass",
      cases: "2",
      passed: "2",
      failed: "0",
      regressions: "0",
    });
    const artifact = gh.artifacts.find((a) => String(a.id) === push.outputs["artifact-id"])!;
    expect(artifact.name).toBe("evalgate");
    expect(push.stdout).toContain("no baseline: the base branch main has no successful run of evals.yml");
    // The summary and comment.md were rendered from the same bundle.
    const bundle = push.outputs["bundle-path"]!;
    expect(push.summary).toContain("gate passed");
    expect(readFileSync(path.join(bundle, "comment.md"), "utf8")).toContain(MARKER);
    expect(gh.comments.filter((c) => c.body.startsWith(MARKER))).toHaveLength(0);
  });

  let first: ActionRun;
  it("a PR that breaks a test fails the gate against the baseline and posts one comment", async () => {
    // GitHub answers the first comment POST with a 502: the client retries it.
    gh.fail({ method: "POST", path: /\/issues\/2\/comments$/, status: 502, times: 1 });
    repo.checkout(repo.broken);
    first = await runStep({
      node,
      server: gh,
      run: prRun(gh, repo.broken),
      event: "pull_request",
      payload: prPayload(repo, repo.broken, REPO),
      workspace: repo.dir,
      token,
      sha: MERGE_SHA,
      ref: "refs/pull/2/merge",
      inputs: { "check-name": "evalgate / demo" },
    });
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/::error::evalgate: gate failed/);
    // The attempts and the upload are collapsible groups in the job log; the verdict is outside.
    expect(first.stdout).toMatch(/::group::evalgate: running \.\n[\s\S]*demo\/farewell[\s\S]*::endgroup::/);
    expect(first.stdout).toMatch(/::group::evalgate: uploading the bundle as artifact evalgate\n/);
    expect(first.outputs).toMatchObject({ verdict: "fail", passed: "1", failed: "1", regressions: "1" });
    // The PR head, not the merge commit GITHUB_SHA points at.
    const summary = readJson<{ git: { sha: string }; comparison: { baseline_git_sha: string } }>(
      path.join(first.outputs["bundle-path"]!, "summary.json"),
    );
    expect(summary.git.sha).toBe(repo.broken);
    expect(summary.comparison.baseline_git_sha).toBe(repo.main);
    const ours = gh.comments.filter((c) => c.body.startsWith(MARKER));
    expect(ours).toHaveLength(1);
    expect(String(ours[0]!.id)).toBe(first.outputs["comment-id"]);
    expect(ours[0]!.body.length).toBeLessThanOrEqual(65_536);
    // The posted body is the bundle's comment.md, with links to the run and the artifact.
    const posted = readFileSync(path.join(first.outputs["bundle-path"]!, "comment.md"), "utf8");
    expect(posted).toBe(ours[0]!.body);
    expect(posted).toContain(`/actions/runs/`);
    expect(posted).toContain(`/artifacts/${first.outputs["artifact-id"]}`);
    const posts = gh.requests.filter((q) => q.method === "POST" && q.path.endsWith("/issues/2/comments"));
    expect(posts.map((q) => q.status)).toEqual([502, 201]);
    const check = gh.checkRuns.at(-1)!;
    expect(check).toMatchObject({ name: "evalgate / demo", head_sha: repo.broken, conclusion: "failure" });
    expect(check.output.summary).toContain("gate failed");
  });

  it("the next push updates the same comment in place, found on page 2 of the comments", async () => {
    gh.pulls.get(2)!.headSha = repo.fixed;
    const before = gh.requests.length;
    repo.checkout(repo.fixed);
    const second = await runStep({
      node,
      server: gh,
      run: prRun(gh, repo.fixed),
      event: "pull_request",
      payload: prPayload(repo, repo.fixed, REPO),
      workspace: repo.dir,
      token,
      sha: MERGE_SHA,
      ref: "refs/pull/2/merge",
    });
    expect(second.code).toBe(0);
    expect(second.outputs).toMatchObject({ verdict: "pass", regressions: "0" });
    expect(second.outputs["comment-id"]).toBe(first.outputs["comment-id"]);
    const ours = gh.comments.filter((c) => c.body.startsWith(MARKER));
    expect(ours).toHaveLength(1);
    expect(ours[0]!.body).toContain("gate passed");
    const mine = gh.requests.slice(before);
    const listed = mine.filter((q) => q.method === "GET" && q.path.endsWith("/issues/2/comments"));
    expect(listed.map((q) => [q.query.get("per_page"), q.query.get("page") ?? "1"])).toEqual([
      ["100", "1"],
      ["100", "2"],
    ]);
    expect(mine.filter((q) => q.method === "PATCH").map((q) => q.path)).toEqual([
      `/repos/${REPO}/issues/comments/${first.outputs["comment-id"]}`,
    ]);
    expect(mine.some((q) => q.method === "POST" && q.path.endsWith("/comments"))).toBe(false);
  });
});
