import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FORK,
  filesOf,
  MARKER,
  MERGE_SHA,
  openScenario,
  prPayload,
  prRun,
  REPO,
  type Repo,
  WORKFLOW,
} from "../github/fixture.js";
import { examplePayload, NODE24, requireBuiltAction, runStep } from "../github/harness.js";
import type { FakeGitHub } from "../github/server.js";
import { makeZip } from "../github/zip.js";
import { readJson, tempDir } from "../helpers.js";
import { checkComment, outsideFences } from "../report/markdown-check.js";

requireBuiltAction();

describe("workflows around the action", () => {
  let gh: FakeGitHub;
  let repo: Repo;
  let writer: string;
  beforeAll(async () => {
    ({ gh, repo, writer } = await openScenario());
  });
  afterAll(() => gh.close());

  it("shards upload their bundles; a merge job downloads them, compares with the baseline, gates and comments", async () => {
    repo.checkout(repo.broken);
    const run = prRun(gh, repo.broken);
    const step = (inputs: Record<string, string>) =>
      runStep({
        server: gh,
        run,
        event: "pull_request",
        payload: prPayload(repo, repo.broken, REPO),
        workspace: repo.dir,
        token: writer,
        sha: MERGE_SHA,
        ref: "refs/pull/2/merge",
        inputs,
      });
    const shards = await Promise.all([step({ shard: "1/2" }), step({ shard: "2/2" })]);
    for (const s of shards) {
      expect(s.code).toBe(0);
      expect(s.outputs).toMatchObject({ verdict: "pending", cases: "1", "comment-id": "" });
      expect(s.summary).toMatch(/^> \[!NOTE\]\n> Shard [12] of 2: this job does not gate/);
    }
    expect(
      gh.artifacts
        .filter((a) => a.runId === run.id)
        .map((a) => a.name)
        .sort(),
    ).toEqual(["evalgate-shard-1-of-2", "evalgate-shard-2-of-2"]);
    expect(gh.comments.some((c) => c.body.startsWith(MARKER))).toBe(false);

    const merged = await step({ merge: "artifacts", "check-name": "evals" });
    expect(merged.code).toBe(1);
    expect(merged.stdout).toContain(
      "merging 2 shard artifacts: evalgate-shard-1-of-2, evalgate-shard-2-of-2",
    );
    expect(merged.outputs).toMatchObject({ verdict: "fail", cases: "2", passed: "1", regressions: "1" });
    const summary = readJson<{ run: { merged_from: string[] }; git: { sha: string } }>(
      path.join(merged.outputs["bundle-path"]!, "summary.json"),
    );
    expect(summary.run.merged_from).toHaveLength(2);
    expect(summary.git.sha).toBe(repo.broken);
    expect(gh.artifacts.filter((a) => a.runId === run.id).map((a) => a.name)).toContain("evalgate");
    expect(gh.comments.filter((c) => c.body.startsWith(MARKER))).toHaveLength(1);
    expect(gh.checkRuns.at(-1)).toMatchObject({
      name: "evals",
      head_sha: repo.broken,
      conclusion: "failure",
    });
  });

  it("merges shard bundles from folders (as actions/download-artifact lays them out), and publishes a bundle", async () => {
    repo.checkout(repo.fixed);
    const shardsDir = tempDir("evalgate-shards-");
    const run = prRun(gh, repo.fixed);
    const step = (inputs: Record<string, string>) =>
      runStep({
        server: gh,
        run,
        event: "pull_request",
        payload: prPayload(repo, repo.fixed, REPO),
        workspace: repo.dir,
        token: writer,
        sha: MERGE_SHA,
        ref: "refs/pull/2/merge",
        noRuntime: true,
        inputs: { comment: "off", ...inputs },
      });
    await step({ shard: "1/2", out: path.join(shardsDir, "evalgate-shard-1-of-2") });
    await step({ shard: "2/2", out: path.join(shardsDir, "evalgate-shard-2-of-2") });
    const merged = await step({ merge: shardsDir, baseline: "off" });
    expect(merged.code).toBe(0);
    expect(merged.outputs).toMatchObject({ verdict: "pass", cases: "2", passed: "2" });
    // A bundle made elsewhere (here: the merge) is published as it is: no evals run, no upload.
    const published = await step({ bundle: merged.outputs["bundle-path"]!, comment: "always" });
    expect(published.code).toBe(0);
    expect(published.stdout).not.toContain("attempts planned");
    expect(published.outputs).toMatchObject({ verdict: "pass", cases: "2", "artifact-id": "" });
    expect(published.outputs["comment-id"]).not.toBe("");
    // baseline: a bundle folder on disk instead of the base branch's artifact.
    const compared = await step({ baseline: merged.outputs["bundle-path"]! });
    expect(compared.code).toBe(0);
    const cmp = readJson<{ comparison: { baseline_run_id: string; unchanged: number } }>(
      path.join(compared.outputs["bundle-path"]!, "summary.json"),
    ).comparison;
    expect(cmp).toMatchObject({ baseline_run_id: merged.outputs["run-id"], unchanged: 2 });
    const nowhere = await step({ baseline: "no/such/bundle" });
    expect(nowhere.code).toBe(2);
    expect(nowhere.stdout).toMatch(
      /::error::evalgate: input baseline: \/\S+\/no\/such\/bundle does not exist/,
    );
    const missing = await step({ merge: path.join(shardsDir, "evalgate-shard-1-of-2") });
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain("shard 2/2 missing: a merged verdict needs every shard");
    // Mistakes in a merge name the inputs the step was given, not the CLI's flags.
    const over = await step({ merge: shardsDir, baseline: "off", out: shardsDir });
    expect(over.code).toBe(2);
    expect(over.stdout).toContain(`::error::evalgate: input out: ${shardsDir} exists and is not empty`);
    const whole = await step({ merge: merged.outputs["bundle-path"]!, baseline: "off" });
    expect(whole.code).toBe(2);
    expect(whole.stdout).toMatch(/::error::evalgate: \S+: not a shard \(run with input shard: I\/N\)/);
  });

  it("in a merge queue, reports on the queue's head commit and comments on the PR named by the queue ref", async () => {
    repo.checkout(repo.fixed);
    gh.pulls.set(104, {
      number: 104,
      headSha: repo.fixed,
      headRef: "queue",
      headRepo: REPO,
      baseRef: "main",
    });
    const payload = examplePayload("merge_group") as { merge_group: Record<string, string> };
    payload.merge_group.head_sha = repo.fixed;
    const run = gh.addRun({
      workflowPath: WORKFLOW,
      head_branch: "gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64",
      head_sha: repo.fixed,
      event: "merge_group",
      headRepo: REPO,
    });
    const r = await runStep({
      node: NODE24,
      server: gh,
      run,
      event: "merge_group",
      payload,
      workspace: repo.dir,
      token: writer,
      sha: repo.fixed,
      ref: payload.merge_group.head_ref!,
      inputs: { "check-name": "evals" },
    });
    expect(r.code).toBe(0);
    expect(r.outputs.verdict).toBe("pass");
    expect(gh.comments.filter((c) => c.issue === 104 && c.body.startsWith(MARKER))).toHaveLength(1);
    expect(gh.checkRuns.at(-1)).toMatchObject({ head_sha: repo.fixed, conclusion: "success" });
    // The baseline is main's latest successful run.
    expect(r.summary).toContain(`base \`${repo.main.slice(0, 7)}\` → head \`${repo.fixed.slice(0, 7)}\``);
  });

  it("fork recipe: a workflow_run workflow publishes the fork PR's bundle, and only on the PR whose head it is", async () => {
    gh.pulls.set(3, { number: 3, headSha: repo.broken, headRef: "patch-1", headRepo: FORK, baseRef: "main" });
    repo.checkout(repo.broken);
    const forkRun = prRun(gh, repo.broken, FORK);
    const readOnly = gh.token({ "pull-requests": "read", actions: "read" });
    const untrusted = await runStep({
      server: gh,
      run: forkRun,
      event: "pull_request",
      payload: prPayload(repo, repo.broken, REPO, 3, FORK),
      workspace: repo.dir,
      token: readOnly,
      sha: MERGE_SHA,
      ref: "refs/pull/3/merge",
    });
    expect(untrusted.code).toBe(1);
    Object.assign(forkRun, { status: "completed", conclusion: "failure" });

    const publish = () => {
      const payload = examplePayload("workflow_run", "completed") as {
        workflow_run: Record<string, unknown>;
      };
      Object.assign(payload.workflow_run, {
        id: forkRun.id,
        head_sha: repo.broken,
        event: "pull_request",
        head_repository: { full_name: FORK },
        pull_requests: [],
        conclusion: "failure",
      });
      repo.checkout(repo.main);
      return runStep({
        server: gh,
        run: gh.addRun({
          workflowPath: ".github/workflows/evalgate-comment.yml",
          head_branch: "main",
          head_sha: repo.main,
          event: "workflow_run",
          headRepo: REPO,
        }),
        event: "workflow_run",
        payload,
        workspace: repo.dir,
        token: writer,
        sha: repo.main,
        ref: "refs/heads/main",
        inputs: { bundle: "workflow-run", "check-name": "evals" },
      });
    };
    const r = await publish();
    expect(r.code).toBe(1);
    const ours = gh.comments.filter((c) => c.issue === 3 && c.body.startsWith(MARKER));
    expect(ours).toHaveLength(1);
    expect(ours[0]!.body).toContain("gate failed");
    expect(gh.checkRuns.at(-1)).toMatchObject({
      name: "evals",
      head_sha: repo.broken,
      conclusion: "failure",
    });
    // No evals ran in the trusted workflow: it only published.
    expect(r.stdout).not.toContain("attempts planned");

    // The fork pushed again: the bundle is no longer of the PR's head, so nothing is posted.
    // before: the check run ("evals (fork)" in the recipe) still went onto the old commit.
    gh.pulls.get(3)!.headSha = repo.fixed;
    const updatesBefore = gh.requests.filter((q) => q.method === "PATCH").length;
    const checksBefore = gh.checkRuns.length;
    const stale = await publish();
    expect(stale.stdout).toMatch(
      /::notice::PR #3's head is [0-9a-f]{7}, but the bundle is of [0-9a-f]{7} .*: no comment or check run was posted/,
    );
    expect(gh.requests.filter((q) => q.method === "PATCH").length).toBe(updatesBefore);
    expect(gh.checkRuns.length).toBe(checksBefore);

    // A fork can upload any artifact under the name: a forged bundle claims a pass with markup in
    // its numbers. It is published as data: no markup, no ping, and a verdict that is not "pass" fails.
    gh.pulls.get(3)!.headSha = repo.broken;
    const HOSTILE = "<img src=x onerror=alert(1)> @octocat";
    const files = filesOf(untrusted.outputs["bundle-path"]!);
    const summary = JSON.parse(files.get("summary.json")!);
    // The forger leaves the seal out (an edited bundle that keeps its seal is refused).
    delete summary.seal;
    summary.gate.verdict = `${HOSTILE} pass`;
    summary.counts.passed = HOSTILE;
    files.set("summary.json", JSON.stringify(summary));
    files.set(
      "index.jsonl",
      files
        .get("index.jsonl")!
        .trim()
        .split("\n")
        .map((l) => JSON.stringify({ ...JSON.parse(l), attempts: { passed: HOSTILE, counted: HOSTILE } }))
        .join("\n"),
    );
    const artifact = gh.artifacts.find((a) => a.runId === forkRun.id && a.name === "evalgate")!;
    artifact.zip = makeZip([...files].map(([name, data]) => ({ name, data })));
    const forged = await publish();
    expect(forged.stderr).toBe("");
    expect(forged.code).toBe(1);
    expect(forged.outputs).toMatchObject({ verdict: "fail", passed: "0" });
    const body = gh.comments.find((c) => c.issue === 3 && c.body.startsWith(MARKER))!.body;
    expect(outsideFences(body).join("\n")).not.toMatch(/<img/i);
    const facts = checkComment(body);
    expect(facts.foreign).toEqual([]);
    expect(facts.mentions).toEqual([]);
    expect(gh.checkRuns.at(-1)!.conclusion).toBe("failure");
  });
});
