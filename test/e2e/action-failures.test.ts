/**
 * The action when GitHub does not cooperate: fork PRs with read-only tokens, tokens without the
 * permissions a step needs, no or expired baselines, an artifact service that refuses the upload,
 * persistent 5xx, rate limits, and pull_request_target. Each ends with a clear message and the
 * gate's exit status (or 2 for a refused setup), never a crash.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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
} from "../github/fixture.js";
import { NODE24, requireBuiltAction, runStep, type StepOptions } from "../github/harness.js";
import type { FakeGitHub } from "../github/server.js";
import { tempDir } from "../helpers.js";

requireBuiltAction();

describe("the action when GitHub does not cooperate", () => {
  let gh: FakeGitHub;
  let repo: Repo;
  let writer: string;
  beforeAll(async () => {
    ({ gh, repo, writer } = await openScenario());
    gh.pulls.set(3, { number: 3, headSha: repo.broken, headRef: "patch-1", headRepo: FORK, baseRef: "main" });
  });
  afterAll(() => gh.close());

  const pr = (sha: string, o: Partial<StepOptions> & { number?: number; headRepo?: string } = {}) => {
    repo.checkout(sha);
    return runStep({
      server: gh,
      run: prRun(gh, sha, o.headRepo ?? REPO),
      event: "pull_request",
      payload: prPayload(repo, sha, REPO, o.number ?? 2, o.headRepo ?? REPO),
      workspace: repo.dir,
      token: writer,
      sha: MERGE_SHA,
      ref: `refs/pull/${o.number ?? 2}/merge`,
      ...o,
    });
  };
  const posts = () =>
    gh.requests.filter((q) => q.method === "POST" && /\/issues\/\d+\/comments$/.test(q.path));

  it("a fork PR (read-only token) gets the job summary, outputs and a notice; the gate alone sets the exit", async () => {
    const before = posts().length;
    const readOnly = gh.token({ "pull-requests": "read", actions: "read", checks: "read" });
    const r = await pr(repo.broken, {
      number: 3,
      headRepo: FORK,
      token: readOnly,
      inputs: { "check-name": "evals" },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /::notice::this pull request comes from a fork \(forker\/Hello-World\), whose workflow token is read-only: evalgate wrote the job summary and the step outputs, but no PR comment or check run\. To comment on pull requests from forks, use the two-workflow recipe in docs\/fork-pull-requests\.md/,
    );
    expect(posts().length).toBe(before);
    expect(gh.checkRuns).toHaveLength(0);
    expect(r.summary).toContain("gate failed");
    expect(r.outputs).toMatchObject({ verdict: "fail", failed: "1", regressions: "1", "comment-id": "" });
    // The fork's run can still upload its bundle (the recipe's second workflow reads it).
    expect(r.outputs["artifact-id"]).not.toBe("");
  });

  it("a token without pull-requests: write gets a 403, explained in a notice; the step exits by the gate", async () => {
    const noWrite = gh.token({ actions: "read" });
    const r = await pr(repo.fixed, { token: noWrite, inputs: { "check-name": "evals" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /::warning::creating the check run "evals" failed \(403 Resource not accessible by integration\): the token needs checks: write/,
    );
    expect(r.stdout).toMatch(
      /::notice::posting the comment on PR #2 failed \(403 Resource not accessible by integration\): the token needs pull-requests: write; add it to the workflow's or job's `permissions:`/,
    );
    expect(posts().at(-1)!.status).toBe(403);
    expect(r.outputs).toMatchObject({ verdict: "pass", "comment-id": "" });
  });

  it("a token without actions: read: the comment says there is no baseline and why", async () => {
    const noActions = gh.token({ "pull-requests": "write" });
    const r = await pr(repo.fixed, { token: noActions });
    expect(r.code).toBe(0);
    const body = gh.comments.find((c) => c.body.startsWith(MARKER))!.body;
    expect(body).toContain(
      "No baseline: the token cannot read this repository's workflow runs and artifacts: add actions: read to the workflow's permissions.",
    );
    expect(r.summary).toContain("No baseline: the token cannot read");
  });

  it("an expired baseline artifact: no baseline, and the comment says it expired", async () => {
    for (const a of gh.artifacts) a.expired = true;
    try {
      const r = await pr(repo.fixed);
      expect(r.code).toBe(0);
      expect(r.summary).toMatch(
        /No baseline: the evalgate artifact of run 1 on main has expired \(raise retention-days to keep baselines longer\)/,
      );
      expect(r.outputs.regressions).toBe("0");
    } finally {
      for (const a of gh.artifacts) a.expired = false;
    }
  });

  it("an artifact upload the service refuses: a warning, the bundle stays on disk, the verdict is unchanged", async () => {
    gh.fail({
      path: /\/CreateArtifact$/,
      status: 403,
      times: 1,
      body: { code: "permission_denied", msg: "artifact uploads are disabled for this repository" },
    });
    const r = await pr(repo.broken);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /::warning::the bundle could not be uploaded as artifact evalgate: .*artifact uploads are disabled for this repository.*It stays at \/.*; the verdict is unchanged/,
    );
    expect(r.outputs["artifact-id"]).toBe("");
    expect(existsSync(path.join(r.outputs["bundle-path"]!, "summary.json"))).toBe(true);
    expect(r.outputs.verdict).toBe("fail");
  });

  it("uploads the bundle under the artifact-name and retention-days it is given, and links it", async () => {
    const r = await pr(repo.fixed, {
      inputs: { "artifact-name": "evals-bundle", "retention-days": "7", comment: "off", baseline: "off" },
    });
    expect(r.code).toBe(0);
    const a = gh.artifacts.find((x) => String(x.id) === r.outputs["artifact-id"])!;
    expect(a.name).toBe("evals-bundle");
    const days = (Date.parse(a.expires_at!) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6);
    expect(days).toBeLessThanOrEqual(7);
    expect(r.outputs["artifact-url"]).toMatch(new RegExp(`/actions/runs/\\d+/artifacts/${a.id}$`));
    // What was uploaded is the bundle: its summary is in the zip.
    expect(a.zip.includes(Buffer.from("summary.json"))).toBe(true);
  });

  it("outside Actions (no runtime token, no summary file) the bundle stays on disk; no crash", async () => {
    const r = await pr(repo.fixed, { noRuntime: true, env: { GITHUB_STEP_SUMMARY: "" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("GITHUB_STEP_SUMMARY is not set: no job summary");
    expect(r.stdout).toMatch(
      /::warning::the bundle was not uploaded: ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL are not set/,
    );
    expect(existsSync(path.join(r.outputs["bundle-path"]!, "index.jsonl"))).toBe(true);
  });

  it("a primary rate limit is waited out and the request retried", async () => {
    gh.fail({
      method: "GET",
      path: /\/issues\/2\/comments$/,
      status: 403,
      times: 1,
      body: {
        message: "API rate limit exceeded for installation ID 1.",
        documentation_url: "https://docs.github.com",
      },
      headers: {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-limit": "5000",
        "x-ratelimit-reset": String(Math.floor(Date.now() / 1000)),
      },
    });
    const r = await pr(repo.fixed);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /::warning::GitHub rate limit for GET \S+\/issues\/2\/comments\S*: retrying in \d+ s/,
    );
    expect(r.outputs["comment-id"]).not.toBe("");
  });

  it("GitHub answering 502 to every try: a warning after the retries, and the gate's exit status", async () => {
    if (!gh.comments.some((c) => c.body.startsWith(MARKER)))
      gh.addComment(2, `${MARKER}\nearlier`, "github-actions[bot]");
    gh.fail({ method: "PATCH", path: /\/issues\/comments\/\d+$/, status: 502, times: 4 });
    const r = await pr(repo.broken, { node: NODE24 });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /::warning::posting the comment on PR #2 failed: GitHub answered 502 \(Server Error\) and kept failing after retries/,
    );
    expect(gh.requests.filter((q) => q.method === "PATCH" && q.status === 502)).toHaveLength(4);
    expect(r.outputs.verdict).toBe("fail");
    expect(r.summary).toContain("gate failed");
  }, 60_000);

  it("never shows the GitHub token or the runtime token to agents, nor writes them into the bundle", async () => {
    const r = await pr(repo.fixed);
    const bundle = r.outputs["bundle-path"]!;
    const files = filesOf(bundle);
    const diffs = [...files].filter(([name]) => name.endsWith("diff.patch"));
    expect(diffs.length).toBe(2);
    // The agent dumped its whole environment into env.txt: it is in the diff.
    const env = diffs.map(([, text]) => text).join("\n");
    expect(env).toContain("+PATH=");
    expect(env).not.toMatch(/GITHUB_|ACTIONS_|INPUT_|RUNNER_/);
    const runtime = gh.requests.find((q) => q.path.includes("/twirp/"))!.auth!.replace("Bearer ", "");
    for (const [name, text] of files) {
      expect(text.includes(writer), name).toBe(false);
      expect(text.includes(runtime), name).toBe(false);
    }
    expect(readFileSync(path.join(bundle, "github.json"), "utf8")).not.toContain(writer);
  });

  it("refuses pull_request_target on the PR's code unless allowed, and says why", async () => {
    const target = (o: Partial<StepOptions>) => {
      const payload = prPayload(repo, repo.fixed, REPO);
      return runStep({
        server: gh,
        run: prRun(gh, repo.fixed),
        event: "pull_request_target",
        payload,
        workspace: repo.dir,
        token: writer,
        sha: repo.main,
        ref: "refs/heads/main",
        ...o,
      });
    };
    repo.checkout(repo.fixed);
    const refused = await target({});
    expect(refused.code).toBe(2);
    expect(refused.stdout).toContain(
      `::error::evalgate: refusing to run under pull_request_target on commit ${repo.fixed.slice(0, 7)}, which is not the base branch's commit ${repo.main.slice(0, 7)}: this event gives the workflow your secrets and a write token`,
    );
    expect(refused.stdout).not.toContain("attempts planned");
    // Every output is set on an error (before: none), and says why nothing ran.
    expect(refused.outputs).toMatchObject({ ran: "false", verdict: "error", "bundle-path": "" });
    expect(refused.outputs["skipped-reason"]).toMatch(/^error: refusing to run under pull_request_target/);
    const allowed = await target({ inputs: { "allow-pull-request-target": "true" } });
    expect(allowed.code).toBe(0);
    // On the base branch's own code (the safe use of the event) it runs.
    repo.checkout(repo.main);
    const base = await target({});
    expect(base.code).toBe(0);
    // What was evaluated is the checkout (the base commit), not the PR head the event names.
    const sha = JSON.parse(readFileSync(path.join(base.outputs["bundle-path"]!, "summary.json"), "utf8")).git
      .sha;
    expect(sha).toBe(repo.main);
  });

  it("comment: changes stays quiet while nothing changed, posts on a regression, then keeps it current", async () => {
    gh.pulls.set(5, { number: 5, headSha: repo.fixed, headRef: "quiet", headRepo: REPO, baseRef: "main" });
    const ours = () => gh.comments.filter((c) => c.issue === 5 && c.body.startsWith(MARKER));
    const quiet = await pr(repo.fixed, { number: 5, inputs: { comment: "changes" } });
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toContain(
      "no PR comment: comment: changes, and nothing changed against the baseline",
    );
    expect(ours()).toHaveLength(0);
    const regressed = await pr(repo.broken, { number: 5, inputs: { comment: "changes" } });
    expect(regressed.code).toBe(1);
    expect(ours()).toHaveLength(1);
    expect(ours()[0]!.body).toContain("gate failed");
    const fixedAgain = await pr(repo.fixed, { number: 5, inputs: { comment: "changes" } });
    expect(fixedAgain.code).toBe(0);
    expect(ours()).toHaveLength(1);
    expect(ours()[0]!.body).toContain("gate passed");
  });

  it("comment: failures stays quiet while the gate passes and posts when it fails; comment: off never touches it", async () => {
    gh.pulls.set(6, { number: 6, headSha: repo.fixed, headRef: "loud", headRepo: REPO, baseRef: "main" });
    const ours = () => gh.comments.filter((c) => c.issue === 6 && c.body.startsWith(MARKER));
    const passing = await pr(repo.fixed, { number: 6, inputs: { comment: "failures" } });
    expect(passing.code).toBe(0);
    expect(passing.stdout).toContain("no PR comment: comment: failures, and the gate passed");
    expect(passing.outputs["comment-id"]).toBe("");
    expect(ours()).toHaveLength(0);
    const failing = await pr(repo.broken, { number: 6, inputs: { comment: "failures" } });
    expect(failing.code).toBe(1);
    expect(ours()).toHaveLength(1);
    expect(ours()[0]!.body).toContain("gate failed");
    expect(failing.outputs["comment-id"]).toBe(String(ours()[0]!.id));
    // off: the earlier comment is left as it was, and no request touches the PR's comments.
    const before = gh.requests.length;
    const off = await pr(repo.fixed, { number: 6, inputs: { comment: "off" } });
    expect(off.code).toBe(0);
    expect(off.outputs["comment-id"]).toBe("");
    expect(ours()[0]!.body).toContain("gate failed");
    expect(gh.requests.slice(before).filter((q) => q.path.includes("/issues/"))).toEqual([]);
    // The job summary is written whatever the mode.
    expect(off.summary).toContain("gate passed");
  });

  it("a wrong input is a usage error (exit 2) naming the input", async () => {
    const r = await pr(repo.fixed, { inputs: { comment: "sometimes" } });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(
      '::error::evalgate: input comment: "sometimes" is not a comment mode; use one of always, changes, failures, off',
    );
  });

  it("a wrong value found while running names the input the user wrote, never a CLI flag", async () => {
    const used = tempDir("evalgate-used-out-");
    writeFileSync(path.join(used, "old.txt"), "an earlier bundle");
    const cases: [Record<string, string>, string][] = [
      [{ out: used }, `input out: ${used} exists and is not empty`],
      [
        { out: path.join(used, "old.txt") },
        `input out: ${path.join(used, "old.txt")} is a file, not a folder`,
      ],
      [{ target: "nobody" }, "input target: nobody: no such target (targets: agent)"],
      [{ test: "no-such-test" }, "no case matches the target / test / tag inputs"],
      [
        { "working-directory": "no/such/dir" },
        `input working-directory: ${repo.dir}/no/such/dir does not exist`,
      ],
      [
        { "working-directory": "evals/agent.sh" },
        `input working-directory: ${repo.dir}/evals/agent.sh is a file, not a folder`,
      ],
    ];
    for (const [inputs, message] of cases) {
      const r = await pr(repo.fixed, { inputs });
      expect(r.code, JSON.stringify(inputs)).toBe(2);
      expect(r.stdout).toContain(`::error::evalgate: ${message}`);
      expect(r.stdout).not.toMatch(/::error::.*--(out|target|test|tag)\b/);
    }
    expect(readdirSync(used)).toEqual(["old.txt"]);
  });
});
