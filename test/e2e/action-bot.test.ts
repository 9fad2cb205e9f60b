/**
 * The bot, run as GitHub runs the action (lib/index.js, built by tsc: dist/ is rebuilt at merge)
 * against the local GitHub server, with real payloads of @octokit/webhooks-examples:
 * `/evalgate run` commands in PR comments (writers only, reactions, the head commit, a status),
 * labels, quarantine with expiry, the base commit's gate, and suites skipped by `paths:`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as md from "../../src/report/markdown.js";
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
import { type ActionRun, examplePayload, LIB_ACTION, runStep } from "../github/harness.js";
import { FakeGitHub } from "../github/server.js";
import { readJsonl, sh, tempDir } from "../helpers.js";

const head = headOf;

function day(offset: number): string {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}

const repoWith = demoRepo;

/** The real issue_comment (created) example, as GitHub sends it for a comment on PR `number`. */
function commentPayload(
  gh: FakeGitHub,
  body: string,
  opts: { user?: string; type?: "User" | "Bot"; action?: string; number?: number } = {},
) {
  const number = opts.number ?? 2;
  const user = opts.user ?? "octocat";
  const c = gh.addComment(number, body, user, "OWNER");
  const p = examplePayload("issue_comment", opts.action === "edited" ? "edited" : "created") as {
    action: string;
    issue: Record<string, unknown>;
    comment: Record<string, unknown>;
  };
  p.action = opts.action ?? "created";
  p.issue.number = number;
  // What GitHub adds to the issue of a comment on a pull request.
  p.issue.pull_request = {
    url: `https://api.github.com/repos/${REPO}/pulls/${number}`,
    html_url: `https://github.com/${REPO}/pull/${number}`,
    diff_url: `https://github.com/${REPO}/pull/${number}.diff`,
    patch_url: `https://github.com/${REPO}/pull/${number}.patch`,
  };
  p.comment.id = c.id;
  p.comment.body = body;
  p.comment.user = { ...(p.comment.user as object), login: user, type: opts.type ?? "User" };
  // author_association is not what decides: the collaborator-permission API is.
  p.comment.author_association = "OWNER";
  return { payload: p as unknown as Record<string, unknown>, comment: c };
}

const WRITER = { "pull-requests": "write", actions: "read", checks: "write", statuses: "write" } as const;

async function onMain(
  gh: FakeGitHub,
  repo: Repo,
  token: string,
  payload: Record<string, unknown>,
  inputs = {},
) {
  repo.checkout(repo.main);
  const run = gh.addRun({
    workflowPath: ".github/workflows/evals-commands.yml",
    head_branch: "main",
    head_sha: repo.main,
    event: "issue_comment",
    headRepo: REPO,
  });
  return runStep({
    server: gh,
    run,
    event: "issue_comment",
    payload,
    workspace: repo.dir,
    token,
    sha: repo.main,
    ref: "refs/heads/main",
    entry: LIB_ACTION,
    inputs: { evals: "evals/", ...inputs },
  });
}

async function onPr(
  gh: FakeGitHub,
  repo: Repo,
  token: string,
  inputs: Record<string, string> = {},
  payload = prPayload(repo, repo.broken, REPO),
) {
  repo.checkout(repo.broken);
  return runStep({
    server: gh,
    run: prRun(gh, repo.broken),
    event: "pull_request",
    payload,
    workspace: repo.dir,
    token,
    sha: "a".repeat(40),
    ref: "refs/pull/2/merge",
    entry: LIB_ACTION,
    inputs: { evals: "evals/", ...inputs },
  });
}

const sticky = (gh: FakeGitHub) => gh.comments.filter((c) => c.body.startsWith(MARKER));

describe("/evalgate commands in pull request comments", () => {
  let gh: FakeGitHub;
  let repo: Repo;
  let token: string;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    // The PR fixes nothing and breaks farewell; the base is main.
    repo = repoWith({}, { "evals/agent.sh": "echo hello > hello.txt\n" });
    token = gh.token(WRITER);
    openPull(gh, repo);
    gh.roles.set("octocat", "write");
    gh.roles.set("reader", "read");
    gh.roles.set("triager", "triage");
  });
  afterAll(() => gh.close());

  let r: ActionRun;
  it("a writer's /evalgate run --repeat 2 runs on the head commit, reacts, updates the comment and sets a status", async () => {
    const { payload, comment } = commentPayload(gh, "Looks good.\n\n/evalgate run --repeat 2\n", {});
    r = await onMain(gh, repo, token, payload);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(1); // farewell fails on the head: the gate fails
    expect(r.outputs.ran).toBe("true");
    expect(r.outputs["skipped-reason"]).toBe("");
    // The head commit was checked out and evaluated (issue_comment starts on main).
    expect(head(repo.dir)).toBe(repo.broken);
    expect(r.stdout).toContain(`checked out the pull request's head ${repo.broken.slice(0, 7)}`);
    const rows = readJsonl<{ attempts: { planned: number }; verdict: string; test_id: string }>(
      path.join(r.outputs["bundle-path"]!, "index.jsonl"),
    );
    expect(rows.map((x) => x.attempts.planned)).toEqual([2, 2]);
    const summary = JSON.parse(readFileSync(path.join(r.outputs["bundle-path"]!, "summary.json"), "utf8"));
    expect(summary.git.sha).toBe(repo.broken);
    expect(gh.reactions.filter((x) => x.commentId === comment.id).map((x) => x.content)).toEqual([
      "eyes",
      "confused",
    ]);
    const [body] = sticky(gh);
    expect(body?.body).toContain("Requested by @octocat: `/evalgate run --repeat 2`");
    // Pending on the head while it ran (before: no status until the end), then the outcome.
    expect(gh.statuses).toEqual([
      expect.objectContaining({ sha: repo.broken, state: "pending", context: "evalgate" }),
      expect.objectContaining({ sha: repo.broken, state: "failure", context: "evalgate" }),
    ]);
    expect(gh.statuses[0]!.target_url).toMatch(/\/actions\/runs\/\d+$/);
    expect(gh.statuses[1]!.description).toContain("requested by octocat");
  });

  it("a passing run reacts 🚀 and sets a success status; the same sticky comment is updated", async () => {
    gh.pulls.set(2, { ...gh.pulls.get(2)!, headSha: repo.main });
    const { payload, comment } = commentPayload(gh, "/evalgate run --test greet");
    const ok = await onMain(gh, repo, token, payload);
    expect(ok.code).toBe(0);
    expect(gh.reactions.filter((x) => x.commentId === comment.id).map((x) => x.content)).toEqual([
      "eyes",
      "rocket",
    ]);
    expect(sticky(gh)).toHaveLength(1);
    expect(sticky(gh)[0]!.body).toContain("`/evalgate run --test greet`");
    expect(ok.outputs.cases).toBe("1");
    expect(gh.statuses.at(-1)).toMatchObject({ sha: repo.main, state: "success" });
    gh.pulls.set(2, { ...gh.pulls.get(2)!, headSha: repo.broken });
  });

  it("a writer's /evalgate run --repeat MIN..MAX runs adaptive attempts, as run --repeat does", async () => {
    const { payload, comment } = commentPayload(gh, "/evalgate run --repeat 2..3 --test greet");
    const x = await onMain(gh, repo, token, payload);
    expect(x.stderr).toBe("");
    expect(x.outputs.ran).toBe("true");
    const bundle = x.outputs["bundle-path"]!;
    const summary = JSON.parse(readFileSync(path.join(bundle, "summary.json"), "utf8"));
    expect(summary.run.repeat_override).toEqual({ min: 2, max: 3 });
    const [row] = readJsonl<{ test_id: string; result_dir: string; attempts: { planned: number } }>(
      path.join(bundle, "index.jsonl"),
    );
    expect(row!.test_id).toBe("greet");
    expect(row!.attempts.planned).toBeGreaterThanOrEqual(2);
    expect(row!.attempts.planned).toBeLessThanOrEqual(3);
    const cs = JSON.parse(readFileSync(path.join(bundle, row!.result_dir, "summary.json"), "utf8"));
    expect(cs.repeat).toEqual({ min: 2, max: 3 });
    expect(gh.reactions.filter((y) => y.commentId === comment.id).map((y) => y.content)[0]).toBe("eyes");
    expect(sticky(gh)[0]!.body).toContain("`/evalgate run --repeat 2..3 --test greet`");
  });

  it.each([
    ["a reader", { user: "reader" }, "only people with write access"],
    [
      "a triager (author_association OWNER in the payload)",
      { user: "triager" },
      "only people with write access",
    ],
  ])("%s gets a reply and nothing runs", async (_who, opts, reply) => {
    const before = {
      comments: gh.comments.length,
      artifacts: gh.artifacts.length,
      statuses: gh.statuses.length,
    };
    const { payload, comment } = commentPayload(gh, "/evalgate run", opts);
    const x = await onMain(gh, repo, token, payload);
    expect(x.code).toBe(0);
    expect(x.outputs.ran).toBe("false");
    expect(x.outputs["skipped-reason"]).toMatch(/has (read|triage) access; commands need write/);
    expect(x.outputs["bundle-path"]).toBe("");
    const replies = gh.comments.slice(before.comments + 1);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.body).toContain(`@${opts.user} ${reply}`);
    expect(gh.reactions.filter((y) => y.commentId === comment.id)).toEqual([]);
    expect(gh.artifacts.length).toBe(before.artifacts);
    expect(gh.statuses.length).toBe(before.statuses);
  });

  it.each([
    ["a bot", "/evalgate run", { user: "dependabot[bot]", type: "Bot" as const }, "comments by bots"],
    [
      "an edited comment",
      "/evalgate run",
      { action: "edited" },
      "a comment that was edited is not a command",
    ],
    ["a quote", "> /evalgate run\n\nwhy did this run?", {}, "no /evalgate command"],
    ["a code block", "Try:\n```\n/evalgate run\n```\n", {}, "no /evalgate command"],
  ])("%s: ignored, no reply", async (_what, body, opts, why) => {
    const before = gh.comments.length;
    const { payload } = commentPayload(gh, body, opts);
    const x = await onMain(gh, repo, token, payload);
    expect(x.code).toBe(0);
    expect(x.outputs.ran).toBe("false");
    expect(x.outputs["skipped-reason"]).toContain(why);
    expect(gh.comments.length).toBe(before + 1); // only the comment itself
  });

  it("/evalgate help and a bad option get a reply; a fork's PR is refused with the recipe", async () => {
    let before = gh.comments.length;
    await onMain(gh, repo, token, commentPayload(gh, "/evalgate help").payload);
    expect(gh.comments[before + 1]!.body).toContain("`/evalgate run --repeat N`");
    before = gh.comments.length;
    const bad = await onMain(gh, repo, token, commentPayload(gh, "/evalgate run --repet 3").payload);
    expect(bad.outputs["skipped-reason"]).toContain('unknown option "--repet"');
    expect(gh.comments[before + 1]!.body).toContain('unknown option "--repet"');

    gh.pulls.set(3, {
      number: 3,
      headSha: repo.broken,
      headRef: "feature",
      headRepo: "forker/Hello-World",
      baseRef: "main",
      baseSha: repo.main,
    });
    before = gh.comments.length;
    const fork = await onMain(gh, repo, token, commentPayload(gh, "/evalgate run", { number: 3 }).payload);
    expect(fork.outputs.ran).toBe("false");
    expect(gh.comments[before + 1]!.body).toContain("docs/fork-pull-requests.md");
    expect(head(repo.dir)).toBe(repo.main);
  });
});

describe("quarantine, the base commit's gate, labels and paths on pull requests", () => {
  let gh: FakeGitHub;
  let token: string;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    token = gh.token(WRITER);
  });
  afterAll(() => gh.close());

  const BROKEN = { "evals/agent.sh": "echo hello > hello.txt\n" };
  const openPr = (repo: Repo, files: string[] = []) => {
    openPull(gh, repo);
    gh.pullFiles.set(2, files);
  };
  const quarantine = (expires: string) =>
    `- case: demo/farewell\n  reason: bye.txt is flaky on CI\n  owner: "@alice"\n  expires: ${expires}\n`;

  it("a quarantined failing case does not fail the gate; the comment lists it with owner and expiry", async () => {
    const repo = repoWith({ ".evalgate/quarantine.yaml": quarantine(day(30)) }, BROKEN);
    openPr(repo, ["evals/agent.sh"]);
    const r = await onPr(gh, repo, token, { baseline: "off" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.outputs).toMatchObject({ verdict: "pass", failed: "1", ran: "true" });
    const body = sticky(gh)[0]!.body;
    expect(body).toContain("**Quarantined** (1");
    // The owner is not pinged by every update (markdown.ts breaks @mentions).
    expect(body).toContain(
      `\`demo/farewell\` on agent: fail · owner ${md.text("@alice")} · until ${day(30)}`,
    );
    expect(body).toContain("bye.txt is flaky on CI");
  });

  it("an expired entry no longer applies: the gate fails and the comment says the quarantine expired", async () => {
    const repo = repoWith({ ".evalgate/quarantine.yaml": quarantine(day(-1)) }, BROKEN);
    openPr(repo, ["evals/agent.sh"]);
    const r = await onPr(gh, repo, token, { baseline: "off" });
    expect(r.code).toBe(1);
    const body = sticky(gh)[0]!.body;
    expect(body).toContain("**Quarantine expired** (1)");
    expect(body).toContain(`the quarantine of ${md.text("@alice")} expired on ${day(-1)}`);
  });

  it("a PR cannot quarantine the case it breaks", async () => {
    const sneaky = repoWith({}, { ...BROKEN, ".evalgate/quarantine.yaml": quarantine(day(30)) });
    openPr(sneaky, ["evals/agent.sh", ".evalgate/quarantine.yaml"]);
    const r = await onPr(gh, sneaky, token, { baseline: "off" });
    expect(r.code).toBe(1);
    expect(sticky(gh)[0]!.body).toContain("- the quarantine file: adds demo/farewell");
  });

  it("an invalid quarantine entry fails the PR that adds it; one already on the base is reported and ignored", async () => {
    // before: the PR adding an entry 200 days ahead passed (the comment only noted it); once merged,
    // the base's file made main and every PR exit 2, the PR fixing the file included
    const adds = repoWith({}, { ...BROKEN, ".evalgate/quarantine.yaml": quarantine(day(200)) });
    openPr(adds, ["evals/agent.sh", ".evalgate/quarantine.yaml"]);
    const bad = await onPr(gh, adds, token, { baseline: "off" });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(
      /\.evalgate\/quarantine\.yaml:4: \[0\]\.expires: \S+ is more than 90 days ahead/,
    );
    expect(bad.stdout).toContain("hint: set expires:");
    expect(bad.outputs).toMatchObject({ ran: "false", verdict: "error" });
    expect(sticky(gh)[0]!.body).toContain("## ❌ evalgate — configuration error");

    // Merged anyway (an admin's bypass): the base's bad entry is ignored, the run gates and says why.
    const merged = repoWith({ ".evalgate/quarantine.yaml": quarantine(day(200)) }, BROKEN);
    openPr(merged, ["evals/agent.sh"]);
    const after = await onPr(gh, merged, token, { baseline: "off" });
    expect(after.code).toBe(1); // farewell fails, and its entry does not quarantine it
    expect(after.stdout).toMatch(/1 quarantine entry is not valid and ignored/);
    const body = sticky(gh)[0]!.body;
    expect(body).toContain("**Quarantine entries ignored** (1");
    expect(body).toContain(`line 4: ${md.text("[0].expires")}: `);
    expect(body).toContain("is more than 90 days ahead");
    // The PR that fixes the file runs too (judged by the base's file until it is merged).
    const fixing = repoWith(
      { ".evalgate/quarantine.yaml": quarantine(day(200)) },
      { ...BROKEN, ".evalgate/quarantine.yaml": quarantine(day(30)) },
    );
    openPr(fixing, ["evals/agent.sh", ".evalgate/quarantine.yaml"]);
    expect((await onPr(gh, fixing, token, { baseline: "off" })).code).toBe(1);
  });

  it("a PR head that lowers min_case_pass_rate is judged by the base's gate (unless trust-pr-gate)", async () => {
    const gated = EVAL.replace("tests:", "gate: { min_case_pass_rate: 1.0 }\ntests:");
    const repo = repoWith(
      { "evals/demo.eval.yaml": gated },
      { ...BROKEN, "evals/demo.eval.yaml": gated.replace("1.0", "0.5") },
    );
    openPr(repo, ["evals/agent.sh", "evals/demo.eval.yaml"]);
    const r = await onPr(gh, repo, token, { baseline: "off" });
    expect(r.code).toBe(1);
    expect(r.outputs.verdict).toBe("fail");
    const body = sticky(gh)[0]!.body;
    expect(body).toContain("these changes apply after merge");
    expect(body).toContain(`- \`evals/demo.eval.yaml\`: ${md.text("gate min_case_pass_rate 1 → 0.5")}`);
    const trusted = await onPr(gh, repo, token, { baseline: "off", "trust-pr-gate": "true" });
    expect(trusted.code).toBe(0);
  });

  it("a shallow checkout without the base commit reads the base's gate through the tarball API", async () => {
    const gated = EVAL.replace("tests:", "gate: { min_case_pass_rate: 1.0 }\ntests:");
    const origin = repoWith(
      { "evals/demo.eval.yaml": gated },
      { ...BROKEN, "evals/demo.eval.yaml": gated.replace("1.0", "0.5") },
    );
    // What actions/checkout leaves with fetch-depth 1 and no credentials: one commit, nothing to fetch.
    const shallow = tempDir("evalgate-shallow-");
    sh(`git clone -q --depth 1 --branch feature file://${origin.dir} ${shallow}`, tempDir());
    sh("git remote set-url origin https://127.0.0.1:9/nowhere.git", shallow);
    const repo: Repo = { ...origin, dir: shallow, checkout: () => undefined };
    openPr(repo, ["evals/agent.sh", "evals/demo.eval.yaml"]);
    gh.gitDir = origin.dir;
    const r = await onPr(gh, repo, token, { baseline: "off" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(1);
    const asked = gh.requests.filter((q) => q.path.includes("/tarball/")).map((q) => q.path);
    expect(asked, r.stdout).toContain(`/repos/${REPO}/tarball/${origin.main}`);
    expect(sticky(gh)[0]!.body).toContain(
      `- \`evals/demo.eval.yaml\`: ${md.text("gate min_case_pass_rate 1 → 0.5")}`,
    );
    gh.gitDir = undefined;
  });

  it("a shard's log and job summary say it finished and that the merge decides, never a verdict", async () => {
    const repo = repoWith({}, BROKEN);
    openPr(repo, ["evals/agent.sh"]);
    const results = [];
    for (const i of [1, 2]) results.push(await onPr(gh, repo, token, { shard: `${i}/2`, comment: "off" }));
    const summaries = results.map((r) => r.summary).join("\n");
    for (const [i, r] of results.entries()) {
      expect(r.code).toBe(0);
      expect(r.outputs.verdict).toBe("pending");
      expect(r.stdout).toMatch(
        new RegExp(
          `evalgate: shard ${i + 1}/2 finished: [01] of 1 cases failing so far; the merge job decides the gate`,
        ),
      );
      expect(r.stdout).not.toMatch(/gate (passed|failed)/);
      expect(r.summary).toContain(`## ⏳ evalgate — shard ${i + 1}/2 finished`);
    }
    // The failing case is on one of the shards; neither headline is a ❌ or ✅.
    expect(summaries).toContain("1 of 1 cases failing so far");
    expect(summaries).not.toMatch(/^## (❌|✅)/m);
  });

  it("labels: another label runs nothing; run-evals runs and is removed afterwards", async () => {
    const repo = repoWith({}, { "evals/agent.sh": GOOD_AGENT.replace("env", "true") });
    openPr(repo, ["evals/agent.sh"]);
    gh.labels.set(2, ["bug", "run-evals"]);
    const labeled = (name: string) => {
      const p = examplePayload("pull_request", "labeled") as Record<string, unknown> & {
        label: { name: string };
        pull_request: Record<string, unknown>;
      };
      const base = prPayload(repo, repo.broken, REPO) as { pull_request: Record<string, unknown> };
      p.label = { ...p.label, name };
      p.number = 2;
      p.pull_request = { ...base.pull_request, labels: gh.labels.get(2)!.map((n) => ({ name: n })) };
      return p;
    };
    const inputs = { baseline: "off", labels: "run-evals\nrun-evals:slow", "remove-label": "true" };
    const other = await onPr(gh, repo, token, inputs, labeled("bug"));
    expect(other.outputs).toMatchObject({ ran: "false" });
    expect(other.outputs["skipped-reason"]).toContain("the label bug is not one of the labels input");
    const ok = await onPr(gh, repo, token, inputs, labeled("run-evals"));
    expect(ok.code).toBe(0);
    expect(ok.outputs.ran).toBe("true");
    expect(gh.labels.get(2)).toEqual(["bug"]);
    const tagged = await onPr(
      gh,
      repo,
      token,
      { ...inputs, "remove-label": "false" },
      labeled("run-evals:slow"),
    );
    // No test carries the tag slow: a filter that matches nothing is the user's mistake.
    expect(tagged.code).toBe(2);
  });

  it("a PR touching none of a suite's paths: no attempt runs, the check concludes skipped, the comment says why", async () => {
    const withPaths = EVAL.replace("tests:", "paths: [agents/**, evals/agent.sh]\ntests:");
    const repo = repoWith({ "evals/demo.eval.yaml": withPaths }, { "README.md": "docs only\n" });
    openPr(repo, ["README.md"]);
    // The base branch's run leaves the baseline whose verdicts are carried over.
    const push = await pushOnMain(gh, repo, token, undefined, { evals: "evals/" }, LIB_ACTION);
    expect(push.code).toBe(0);
    gh.comments.length = 0;
    const r = await onPr(gh, repo, token, { "check-name": "evals" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // before: verdict pass and a check concluding success, though no eval ran
    expect(r.outputs).toMatchObject({ ran: "false", verdict: "skipped", "bundle-path": "" });
    expect(r.outputs["skipped-reason"]).toContain("changes none of the files the suites depend on");
    expect(r.stdout).not.toMatch(/agent · (greet|farewell)/);
    const check = gh.checkRuns.at(-1)!;
    expect(check).toMatchObject({ name: "evals", head_sha: repo.broken, conclusion: "skipped" });
    const body = sticky(gh)[0]!.body;
    expect(body).toContain("nothing to run");
    // before: no head SHA and no run link
    expect(body).toContain(`No evals ran on \`${repo.broken.slice(0, 7)}\``);
    expect(body).toMatch(/\[run #\d+\]\(https:\/\/github\.com\/[^)]+\/actions\/runs\/\d+\)/);
    expect(body).toContain("**Skipped** (1 suite)");
    expect(body).toContain("`demo/greet` on agent: pass _(carried over)_");
    expect(r.summary).toContain("**Skipped**");

    // The same PR touching the agent runs.
    gh.pullFiles.set(2, ["README.md", "evals/agent.sh"]);
    const ran = await onPr(gh, repo, token, { "check-name": "evals" });
    expect(ran.outputs.ran).toBe("true");
  });
});
