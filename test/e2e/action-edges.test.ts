/**
 * Issue 28: the edges where the required check said something untrue, each reproduced against the
 * local GitHub as the runner drives the action (lib/index.js, real @octokit/webhooks-examples
 * payloads): a labelled workflow's vacuous green, the files API's 3,000-file cap, a sticky comment
 * hijacked by a member's marker, a bot reply that echoed a link and a ping, re-runs that lost the
 * bundle (409), a cancel that read as a failed gate, and an error that left a green comment behind.
 * Each test says what happened before.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  demoRepo,
  EVAL,
  GOOD_AGENT,
  headOf,
  MARKER,
  openPull,
  prPayload,
  prRun,
  pushOnMain,
  REPO,
  type Repo,
} from "../github/fixture.js";
import { examplePayload, LIB_ACTION, runStep, type StepOptions } from "../github/harness.js";
import { FakeGitHub } from "../github/server.js";
import { sh, writeFiles } from "../helpers.js";
import { checkComment } from "../report/markdown-check.js";

const head = headOf;
const WRITER = { "pull-requests": "write", actions: "read", checks: "write", statuses: "write" } as const;
const sticky = (gh: FakeGitHub, issue = 2) =>
  gh.comments.filter((c) => c.issue === issue && c.body.startsWith(MARKER));

const repoWith = demoRepo;

function onPr(
  gh: FakeGitHub,
  repo: Repo,
  token: string,
  inputs: Record<string, string> = {},
  extra: Partial<StepOptions> = {},
) {
  repo.checkout(repo.broken);
  return runStep({
    server: gh,
    run: prRun(gh, repo.broken),
    event: "pull_request",
    payload: prPayload(repo, repo.broken, REPO),
    workspace: repo.dir,
    token,
    sha: "a".repeat(40),
    ref: "refs/pull/2/merge",
    entry: LIB_ACTION,
    inputs: { evals: "evals/", ...inputs },
    ...extra,
  });
}

describe("a required check that never lies", () => {
  let gh: FakeGitHub;
  let token: string;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    token = gh.token(WRITER);
  });
  afterAll(() => gh.close());

  const openPr = (repo: Repo, files: string[] = ["evals/agent.sh"]) => {
    openPull(gh, repo);
    gh.pullFiles.set(2, files);
    gh.checkRuns.length = 0;
  };

  it("labels: a PR without the label concludes the check skipped and says so, with head SHA and run link", async () => {
    // before: exit 0, no comment, no check run and an empty job summary: a required job went green
    // without evals
    const repo = repoWith({}, { "evals/agent.sh": GOOD_AGENT.replace("env", "true") });
    openPr(repo);
    const payload = prPayload(repo, repo.broken, REPO) as { pull_request: Record<string, unknown> };
    payload.pull_request.labels = [{ name: "bug" }];
    const r = await onPr(
      gh,
      repo,
      token,
      { labels: "run-evals", "check-name": "evals", baseline: "off" },
      {
        payload: payload as Record<string, unknown>,
      },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.outputs).toMatchObject({ ran: "false", verdict: "skipped" });
    expect(r.outputs["skipped-reason"]).toBe("the pull request has none of the labels run-evals");
    expect(gh.checkRuns).toEqual([
      expect.objectContaining({ name: "evals", head_sha: repo.broken, conclusion: "skipped" }),
    ]);
    expect(gh.checkRuns[0]!.output.title).toBe("skipped: the pull request has none of the labels run-evals");
    const body = sticky(gh)[0]!.body;
    expect(body).toContain(`No evals ran on \`${repo.broken.slice(0, 7)}\``);
    expect(body).toContain("Add the label run-evals to run them.");
    expect(body).toMatch(
      /\[run #\d+\]\(https:\/\/github\.com\/Codertocat\/Hello-World\/actions\/runs\/\d+\)/,
    );
    expect(r.summary).toContain("No evals ran");

    // Another label added is not about the evals: nothing is posted, the skip above stays.
    const labeled = examplePayload("pull_request", "labeled") as Record<string, unknown> & {
      pull_request: Record<string, unknown>;
    };
    labeled.label = { name: "docs" };
    labeled.number = 2;
    labeled.pull_request = { ...payload.pull_request, labels: [{ name: "bug" }, { name: "docs" }] };
    const other = await onPr(
      gh,
      repo,
      token,
      { labels: "run-evals", "check-name": "evals" },
      { payload: labeled },
    );
    expect(other.outputs.ran).toBe("false");
    expect(gh.checkRuns).toHaveLength(1);
    expect(sticky(gh)).toHaveLength(1);
  });

  it("a PR changing more files than GitHub lists (3,000) runs every suite", async () => {
    // before: the files API's first 3,000 files held none of the suite's paths, so every suite was
    // skipped: a green check, no evals, though file 3,001 was the agent
    const withPaths = EVAL.replace("tests:", "paths: [evals/agent.sh]\ntests:");
    const repo = repoWith(
      { "evals/demo.eval.yaml": withPaths },
      { "evals/agent.sh": GOOD_AGENT.replace("env", "true") },
    );
    const many = Array.from({ length: 3_000 }, (_, i) => `docs/page-${i}.md`);
    openPr(repo, [...many, "evals/agent.sh"]);
    const payload = prPayload(repo, repo.broken, REPO) as { pull_request: Record<string, unknown> };
    payload.pull_request.changed_files = 3_001;
    const r = await onPr(
      gh,
      repo,
      token,
      { "check-name": "evals", baseline: "off" },
      {
        payload: payload as Record<string, unknown>,
      },
    );
    expect(r.stdout).toContain(
      "running every suite: PR #2 changes 3001 files, and GitHub lists only the first 3000",
    );
    expect(r.outputs).toMatchObject({ ran: "true", verdict: "pass", cases: "2" });
    expect(gh.checkRuns.at(-1)).toMatchObject({ conclusion: "success" });
  });

  it("a marker in a read-only member's comment is not evalgate's: the report goes into its own comment", async () => {
    // before: the marker was trusted by author association, so a member who posted it first had every
    // later report written into a comment they can edit
    const repo = repoWith({}, { "evals/agent.sh": GOOD_AGENT.replace("env", "true") });
    openPr(repo);
    const planted = gh.addComment(2, `${MARKER}\n## ✅ evalgate — gate passed`, "member-reader", "MEMBER");
    const r = await onPr(gh, repo, token, { baseline: "off" });
    expect(r.code).toBe(0);
    expect(planted.body).toBe(`${MARKER}\n## ✅ evalgate — gate passed`);
    const ours = sticky(gh).filter((c) => c.id !== planted.id);
    expect(ours).toHaveLength(1);
    expect(ours[0]!.user).toBe("github-actions[bot]");
    expect(r.outputs["comment-id"]).toBe(String(ours[0]!.id));
    // The token's identity was asked, as GitHub answers a workflow token.
    expect(gh.requests.some((q) => q.path === "/graphql")).toBe(true);
  });

  it("a writer's invalid command with a link, a ping and HTML gets a reply that shows them as text", async () => {
    // before: the reply echoed the parse error unescaped: a live link, an @everyone ping, raw <img>
    const repo = repoWith({}, { "README.md": "a change\n" });
    openPr(repo);
    gh.roles.set("octocat", "write");
    const body = '/evalgate run "--x [link](https://evil.example/x) @everyone <img src=x onerror=alert(1)>"';
    const c = gh.addComment(2, body, "octocat", "OWNER");
    const p = examplePayload("issue_comment", "created") as {
      issue: Record<string, unknown>;
      comment: Record<string, unknown>;
    };
    p.issue.number = 2;
    p.issue.pull_request = { url: `https://api.github.com/repos/${REPO}/pulls/2` };
    Object.assign(p.comment, { id: c.id, body, user: { login: "octocat", type: "User" } });
    repo.checkout(repo.main);
    const r = await runStep({
      server: gh,
      run: gh.addRun({
        workflowPath: ".github/workflows/evals-commands.yml",
        head_branch: "main",
        head_sha: repo.main,
        event: "issue_comment",
        headRepo: REPO,
      }),
      event: "issue_comment",
      payload: p as unknown as Record<string, unknown>,
      workspace: repo.dir,
      token,
      sha: repo.main,
      ref: "refs/heads/main",
      entry: LIB_ACTION,
    });
    expect(r.outputs["skipped-reason"]).toContain("invalid command");
    const reply = gh.comments.at(-1)!;
    expect(reply.user).toBe("github-actions[bot]");
    const facts = checkComment(reply.body);
    expect(facts.foreign).toEqual([]);
    expect(facts.hrefs).toEqual([]);
    expect(facts.mentions).toEqual(["@octocat"]);
    expect(facts.text).toContain("unknown option");
  });

  it("a re-run uploads under NAME-attempt-N, and the baseline is the newest attempt's bundle", async () => {
    // before: "Re-run jobs" uploaded under the same name: 409, a warning, no bundle; the first
    // attempt's bundle stayed the baseline
    const repo = repoWith({}, { "evals/agent.sh": GOOD_AGENT.replace("env", "true") });
    openPr(repo);
    const first = await pushOnMain(gh, repo, token, undefined, { evals: "evals/" }, LIB_ACTION);
    expect(first.outputs["artifact-id"]).not.toBe("");
    const run = gh.runs.at(-1)!;
    // The same run id, attempt 2 (the runner's variables for a re-run).
    repo.checkout(repo.main);
    const payload = { ...examplePayload("push"), ref: "refs/heads/main", after: repo.main };
    const again = await runStep({
      server: gh,
      run,
      event: "push",
      payload,
      workspace: repo.dir,
      token,
      sha: repo.main,
      ref: "refs/heads/main",
      entry: LIB_ACTION,
      inputs: { evals: "evals/" },
      env: { GITHUB_RUN_ATTEMPT: "2" },
    });
    expect(again.stdout).not.toContain("could not be uploaded");
    const names = gh.artifacts.filter((a) => a.runId === run.id).map((a) => a.name);
    expect(names).toEqual(["evalgate", "evalgate-attempt-2"]);
    const secondRunId = JSON.parse(
      readFileSync(path.join(again.outputs["bundle-path"]!, "summary.json"), "utf8"),
    ).run.id;
    const pr = await onPr(gh, repo, token);
    const summary = JSON.parse(readFileSync(path.join(pr.outputs["bundle-path"]!, "summary.json"), "utf8"));
    expect(summary.comparison.baseline_run_id).toBe(secondRunId);
  });

  it("a configuration error sets every output and replaces the green comment; the check run fails", async () => {
    // before: no output was set (ran, verdict absent) and the earlier "gate passed" comment stayed
    // beside the red check
    const repo = repoWith({}, { "evals/agent.sh": GOOD_AGENT.replace("env", "true") });
    openPr(repo);
    const green = await onPr(gh, repo, token, { baseline: "off", "check-name": "evals" });
    expect(green.code).toBe(0);
    expect(sticky(gh)[0]!.body).toContain("gate passed");
    writeFiles(repo.dir, { "evals/demo.eval.yaml": EVAL.replace("tests:", "tests:\n  - { id: nope }\n") });
    sh("git commit -qam 'break the eval file'", repo.dir);
    const broken = head(repo.dir);
    repo.broken = broken;
    gh.pulls.get(2)!.headSha = broken;
    const r = await onPr(gh, repo, token, { baseline: "off", "check-name": "evals" });
    expect(r.code).toBe(2);
    expect(Object.keys(r.outputs).sort()).toEqual(Object.keys(green.outputs).sort());
    expect(r.outputs).toMatchObject({ ran: "false", verdict: "error", cases: "" });
    expect(r.outputs["skipped-reason"]).toMatch(/^error: /);
    const comments = sticky(gh);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("## ❌ evalgate — configuration error");
    expect(comments[0]!.body).not.toContain("gate passed");
    expect(comments[0]!.body).toContain(`\`${broken.slice(0, 7)}\``);
    expect(gh.checkRuns.at(-1)).toMatchObject({ head_sha: broken, conclusion: "failure" });
    expect(gh.checkRuns.at(-1)!.output.title).toMatch(/^configuration error: /);
  });

  it("a cancelled run concludes the check cancelled and says what finished; no attempt reads as (budget)", async () => {
    // before: the comment and check said "gate failed: N errored cases" with conclusion failure, and
    // the reasons said "(budget)" for the attempts the cancel stopped
    const slow = "echo hello > hello.txt\nsleep 600\n";
    // The slow suite is on the base already: a suite new in the PR would be proposed, not gating.
    const repo = repoWith(
      {
        "evals/slow.eval.yaml": EVAL.replace("name: demo", "name: slow").replace(
          "{EVAL_DIR}/agent.sh",
          "{EVAL_DIR}/slow.sh",
        ),
        "evals/slow.sh": slow,
      },
      { "evals/agent.sh": GOOD_AGENT.replace("env", "true") },
    );
    openPr(repo);
    let sent = false;
    const r = await onPr(
      gh,
      repo,
      token,
      { baseline: "off", "check-name": "evals", concurrency: "1" },
      {
        onStdout: (out, child) => {
          // Once the fast suite's cases finished, a slow agent is at work: the runner's cancel.
          if (!sent && (out.match(/✓ demo\//g) ?? []).length >= 2) {
            sent = true;
            setTimeout(() => child.kill("SIGINT"), 2_000);
          }
        },
      },
    );
    expect(sent).toBe(true);
    expect(r.outputs.verdict).toBe("cancelled");
    const check = gh.checkRuns.at(-1)!;
    expect(check.conclusion).toBe("cancelled");
    expect(check.output.title).toMatch(
      /^cancelled: the run was interrupted \(SIGINT\): \d+ of \d+ attempts finished/,
    );
    const body = sticky(gh)[0]!.body;
    expect(body).toMatch(/^## ⏹️ evalgate — cancelled: the run was interrupted \(SIGINT\)/m);
    expect(body, body).not.toContain("gate failed");
    expect(body).not.toContain("(budget)");
    expect(body).toContain("**What did not finish**");
    expect(body).toContain("slow/greet on agent: 1 of 1 attempts were stopped: the run was cancelled");
    expect(body).toContain("slow/farewell on agent: 1 of 1 attempts were stopped: the run was cancelled");
    expect(existsSync(path.join(r.outputs["bundle-path"]!, "summary.json"))).toBe(true);
  });
});
