/**
 * The exam comes from the base (docs/exam.md), through the bundled action (dist/index.js) on the
 * local GitHub server with real pull_request payloads: a PR that weakens a scorer, deletes a case,
 * edits a verifier, edits `protected` or adds a quarantine entry — each against a case its agent
 * now fails — is judged by the base commit's exam, and the comment names each change; the same PR
 * with trust-pr-gate: true is judged by its own. A checkout that cannot fetch the base reads it
 * from GitHub's tarball; the CLI's --exam-from gives the action's verdict on the same commit.
 *
 * Before this change (only `gate:` and the quarantine file came from the base) each single attack
 * below got exit 0 and a green check (checked against main's dist/ at the time): the attacked case
 * passed by the PR's own scorer, verifier or `protected`, or did not run at all; in the combined PR
 * only the quarantined case, whose file was already read from the base, failed the gate, and the
 * comment said nothing of the scorer, the deleted case, the verifier or `protected`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  branchRepo,
  MARKER,
  MERGE_SHA,
  openPull,
  prPayload,
  prRun,
  REPO,
  type Repo,
} from "../github/fixture.js";
import { ACTION, type ActionRun, requireBuiltAction, runStep } from "../github/harness.js";
import { FakeGitHub } from "../github/server.js";
import { readJsonl, runCliAsync, sh, tempDir } from "../helpers.js";

requireBuiltAction();

/** Five tests the good agent passes; each attack targets one of them. */
const EVAL = `name: demo
targets:
  - { name: agent, provider: command, command: ["sh", "{EVAL_DIR}/agent.sh"], timeout: 1m }
workspace: { seed: { empty: true } }
tests:
  - id: weakened
    instruction: write a.txt
    scorers: [{ name: check, type: command, run: "grep -q a a.txt" }]
  - id: deleted
    instruction: write b.txt
    scorers: [{ name: check, type: command, run: "grep -q b b.txt" }]
  - id: verified
    instruction: write c.txt
    workspace:
      seed: { empty: true }
      verifiers: [{ from: verifiers/c.sh, to: verify-c.sh }]
    scorers: [{ name: check, type: command, run: "sh verify-c.sh" }]
  - id: guarded
    instruction: write d.txt
    workspace:
      seed: { path: guarded }
      protected: ["check-d.sh"]
    scorers: [{ name: check, type: command, run: "sh check-d.sh" }]
  - id: quarantined
    instruction: write e.txt
    scorers: [{ name: check, type: command, run: "grep -q e e.txt" }]
`;

const GOOD_AGENT = "for x in a b c d e; do echo $x > $x.txt; done\n";
/** The agent that now fails one test: it forgets that test's file (for guarded, it rewrites the check). */
const agentForgetting = (letter: string) =>
  `for x in a b c d e; do [ $x = ${letter} ] || echo $x > $x.txt; done\n${letter === "d" ? "echo 'exit 0' > check-d.sh\n" : ""}`;
/** The PR's agent writes nothing useful, and overwrites the check it finds in its workspace. */
const BROKEN_AGENT = "[ -f check-d.sh ] && echo 'exit 0' > check-d.sh\nexit 0\n";

const BASE_FILES = {
  "evals/demo.eval.yaml": EVAL,
  "evals/agent.sh": GOOD_AGENT,
  "evals/verifiers/c.sh": "grep -q c c.txt\n",
  "evals/guarded/check-d.sh": "grep -q d d.txt\n",
  ".gitignore": ".evalgate/results/\n",
};

/** One attack each, by a PR whose agent now fails that one test. */
const SINGLE: { test: string; letter: string; files: Record<string, string>; line: string }[] = [
  {
    test: "weakened",
    letter: "a",
    files: { "evals/demo.eval.yaml": EVAL.replace('run: "grep -q a a.txt"', 'run: "true"') },
    line: "- `weakened`: changes scorer check · judged by the base's: agent: fail 0/1",
  },
  {
    test: "deleted",
    letter: "b",
    files: { "evals/demo.eval.yaml": EVAL.replace(/ {2}- id: deleted\n.*\n.*\n/, "") },
    line: "- `deleted`: removed by this PR · ran all the same: agent: fail 0/1",
  },
  {
    test: "verified",
    letter: "c",
    files: { "evals/verifiers/c.sh": "exit 0\n" },
    line: "- `verified`: changes verifiers · judged by the base's: agent: fail 0/1",
  },
  {
    test: "guarded",
    letter: "d",
    files: { "evals/demo.eval.yaml": EVAL.replace('protected: ["check-d.sh"]', "protected: []") },
    line: "- `guarded`: changes protected · judged by the base's: agent: fail 0/1",
  },
];

const ATTACKS = {
  "evals/agent.sh": BROKEN_AGENT,
  "evals/demo.eval.yaml": `${EVAL.replace('run: "grep -q a a.txt"', 'run: "true"')
    .replace(/ {2}- id: deleted\n.*\n.*\n/, "")
    .replace('protected: ["check-d.sh"]', "protected: []")}  - id: fresh
    instruction: something new
    scorers: [{ name: check, type: command, run: "true" }]
`,
  "evals/verifiers/c.sh": "exit 0\n",
  ".evalgate/quarantine.yaml": `- case: demo/quarantined\n  reason: flaky on CI\n  owner: "@mallory"\n  expires: ${new Date(Date.now() + 20 * 86_400_000).toISOString().slice(0, 10)}\n`,
};

/** main with the base's files; the feature branch with `pr` on top. */
const repoWith = (pr: Record<string, string>): Repo => branchRepo(BASE_FILES, pr);

const TOKEN = { "pull-requests": "write", actions: "read", checks: "write", contents: "read" } as const;

async function onPr(gh: FakeGitHub, repo: Repo, inputs: Record<string, string> = {}): Promise<ActionRun> {
  openPull(gh, repo);
  return runStep({
    server: gh,
    run: prRun(gh, repo.broken),
    event: "pull_request",
    payload: prPayload(repo, repo.broken, REPO),
    workspace: repo.dir,
    token: gh.token(TOKEN),
    sha: MERGE_SHA,
    ref: "refs/pull/2/merge",
    entry: ACTION,
    inputs: { evals: "evals/", baseline: "off", ...inputs },
  });
}

const verdicts = (r: ActionRun) =>
  Object.fromEntries(
    readJsonl<{ test_id: string; verdict: string; exam?: { status: string } | null }>(
      path.join(r.outputs["bundle-path"]!, "index.jsonl"),
    ).map((row) => [row.test_id, `${row.verdict}${row.exam ? ` (${row.exam.status})` : ""}`]),
  );

const sticky = (gh: FakeGitHub) => gh.comments.find((c) => c.body.startsWith(MARKER))!.body;

describe("the exam comes from the base commit", () => {
  let gh: FakeGitHub;
  let repo: Repo;
  let judged: ActionRun;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    repo = repoWith(ATTACKS);
    repo.checkout(repo.broken);
    judged = await onPr(gh, repo);
  });
  afterAll(() => gh.close());

  it("a PR that weakens a scorer, deletes a case, edits a verifier or protected, or quarantines is judged by the base's exam", () => {
    expect(judged.stderr).toBe("");
    expect(judged.code, judged.stdout).toBe(1);
    expect(judged.outputs.verdict).toBe("fail");
    // Each attacked case failed by the base's definition; the deleted one still ran; the new one is proposed.
    expect(verdicts(judged)).toEqual({
      weakened: "fail (changed)",
      deleted: "fail (removed)",
      verified: "fail (changed)",
      guarded: "fail (changed)",
      quarantined: "fail",
      fresh: "pass (proposed)",
    });
    // Gated: the five of the base's exam, not the proposed one.
    expect(judged.outputs.cases).toBe("5");
    expect(judged.outputs.failed).toBe("5");
  });

  it("the comment names each change, says they apply after merge, lists the proposed case and the base commit", () => {
    const body = sticky(gh);
    const base = repo.main.slice(0, 7);
    expect(body).toContain(
      `**This pull request changes its exam**: this run was judged by the base commit \`${base}\`'s tests, scorers, verifiers and gate; these changes apply after merge.`,
    );
    expect(body).toContain("- `weakened`: changes scorer check · judged by the base's: agent: fail 0/1");
    expect(body).toContain("- `deleted`: removed by this PR · ran all the same: agent: fail 0/1");
    expect(body).toContain("- `verified`: changes verifiers · judged by the base's: agent: fail 0/1");
    expect(body).toContain("- `guarded`: changes protected · judged by the base's: agent: fail 0/1");
    expect(body).toContain("- the quarantine file: adds demo/quarantined");
    expect(body).toContain("**Proposed by this pull request** (1 test, not gating)");
    expect(body).toContain("- `fresh`: agent: pass 1/1");
    expect(body).toContain(`exam from base \`${base}\``);
    // The bundle says the same: `evalgate report` renders this comment from it.
    const summary = JSON.parse(
      readFileSync(path.join(judged.outputs["bundle-path"]!, "summary.json"), "utf8"),
    );
    expect(summary.exam).toMatchObject({
      sha: repo.main,
      ref: repo.main,
      quarantine: ["adds demo/quarantined"],
      proposed: 1,
      changed: 3,
      removed: 1,
    });
  });

  it("evalgate report renders the same exam section from the bundle", async () => {
    const r = await runCliAsync(["report", judged.outputs["bundle-path"]!], repo.dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("- `deleted`: removed by this PR · ran all the same: agent: fail 0/1");
    expect(r.stdout).toContain("- the quarantine file: adds demo/quarantined");
    expect(r.stdout).toContain("- `fresh`: agent: pass 1/1");
  });

  it("the CLI's --exam-from on the same commit gives the action's verdict, for the same reasons", async () => {
    const out = path.join(tempDir("evalgate-cli-exam-"), "b");
    const r = await runCliAsync(["run", "evals/", "--exam-from", repo.main, "--out", out], repo.dir);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const cli = JSON.parse(readFileSync(path.join(out, "summary.json"), "utf8"));
    const action = JSON.parse(
      readFileSync(path.join(judged.outputs["bundle-path"]!, "summary.json"), "utf8"),
    );
    // The quarantine is the action's to read (the CLI has no quarantine file here): same gate either way.
    expect(cli.gate.verdict).toBe(action.gate.verdict);
    expect(cli.gate.reasons).toEqual(action.gate.reasons);
    expect(cli.exam).toMatchObject({ sha: repo.main, proposed: 1, changed: 3, removed: 1 });
    expect(r.stdout).toContain("changed here: scorer check");
  });

  it("the same PR with trust-pr-gate: true is judged by its own exam", async () => {
    const trusted = await onPr(gh, repo, { "trust-pr-gate": "true" });
    expect(trusted.stderr).toBe("");
    expect(trusted.code, trusted.stdout).toBe(0);
    expect(trusted.outputs.verdict).toBe("pass");
    expect(verdicts(trusted)).toEqual({
      weakened: "pass",
      verified: "pass",
      guarded: "pass",
      quarantined: "fail",
      fresh: "pass",
    });
    expect(sticky(gh)).not.toContain("changes its exam");
  });
});

describe("each attack alone", () => {
  let gh: FakeGitHub;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
  });
  afterAll(() => gh.close());

  for (const attack of SINGLE) {
    it(`a PR whose agent fails ${attack.test} and that ${attack.test === "deleted" ? "deletes it" : "changes its exam"} gets a red check`, async () => {
      const repo = repoWith({ ...attack.files, "evals/agent.sh": agentForgetting(attack.letter) });
      repo.checkout(repo.broken);
      const r = await onPr(gh, repo);
      expect(r.code, r.stdout).toBe(1);
      expect(verdicts(r)[attack.test]).toMatch(/^fail \((changed|removed)\)$/);
      expect(r.outputs.failed).toBe("1");
      expect(sticky(gh)).toContain(attack.line);
    });
  }
});

describe("a checkout that cannot fetch the base commit", () => {
  let gh: FakeGitHub;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
  });
  afterAll(() => gh.close());

  it("reads the base's exam from GitHub's tarball; a failing proposed case does not gate", async () => {
    const origin = repoWith({
      "evals/demo.eval.yaml": `${EVAL.replace('run: "grep -q a a.txt"', 'run: "true"')}  - id: fresh
    instruction: something new
    scorers: [{ name: check, type: command, run: "false" }]
`,
    });
    // What actions/checkout leaves with fetch-depth 1 and persist-credentials: false on a private
    // repository: one commit, and an origin that answers nothing.
    const shallow = tempDir("evalgate-shallow-");
    sh(`git clone -q --depth 1 --branch feature file://${origin.dir} ${shallow}`, tempDir());
    sh("git remote set-url origin https://127.0.0.1:9/nowhere.git", shallow);
    const repo: Repo = { ...origin, dir: shallow, checkout: () => undefined };
    gh.gitDir = origin.dir;
    gh.private = true;
    const r = await onPr(gh, repo);
    expect(r.stderr).toBe("");
    const asked = gh.requests.filter((q) => q.path.includes("/tarball/")).map((q) => q.path);
    expect(asked).toEqual([`/repos/${REPO}/tarball/${origin.main}`]);
    expect(r.stdout).toContain(
      `the exam (tests, scorers, verifiers, gate) is read from the base commit ${origin.main.slice(0, 7)}, downloaded from GitHub`,
    );
    // The weakened scorer is the base's again, so the good agent still passes; fresh fails, proposed.
    expect(verdicts(r)).toEqual({
      weakened: "pass (changed)",
      deleted: "pass",
      verified: "pass",
      guarded: "pass",
      quarantined: "pass",
      fresh: "fail (proposed)",
    });
    expect(r.code, r.stdout).toBe(0);
    expect(sticky(gh)).toContain("- `fresh`: agent: fail 0/1");
  });

  it("without contents: read on a private repository it stops with the fix, never with the PR's own exam", async () => {
    const origin = repoWith({
      "evals/demo.eval.yaml": EVAL.replace('run: "grep -q a a.txt"', 'run: "true"'),
    });
    const shallow = tempDir("evalgate-shallow-");
    sh(`git clone -q --depth 1 --branch feature file://${origin.dir} ${shallow}`, tempDir());
    sh("git remote set-url origin https://127.0.0.1:9/nowhere.git", shallow);
    gh.gitDir = origin.dir;
    gh.private = true;
    const repo: Repo = { ...origin, dir: shallow, checkout: () => undefined };
    openPull(gh, repo);
    const r = await runStep({
      server: gh,
      run: prRun(gh, repo.broken),
      event: "pull_request",
      payload: prPayload(repo, repo.broken, REPO),
      workspace: repo.dir,
      token: gh.token({ "pull-requests": "write", checks: "write" }),
      sha: MERGE_SHA,
      ref: "refs/pull/2/merge",
      entry: ACTION,
      inputs: { evals: "evals/", baseline: "off" },
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(
      `the base commit ${origin.main.slice(0, 7)} is not on GitHub (or the token cannot read the repository's contents)`,
    );
    expect(r.stdout).toContain(
      "Check out with fetch-depth: 0 (actions/checkout), or grant the job contents: read",
    );
  });
});
