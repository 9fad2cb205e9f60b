/**
 * A repository to run the action on: two tests of one agent (a shell script that writes files),
 * committed on main, plus PR commits that break one test and fix it again.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { gitRepo, sh, writeFiles } from "../helpers.js";
import { type ActionRun, examplePayload, NODE20, runStep } from "./harness.js";
import type { FakeGitHub, WorkflowRun } from "./server.js";

export const REPO = "Codertocat/Hello-World";
export const WORKFLOW = ".github/workflows/evals.yml";
export const MARKER = "<!-- evalgate:comment key=default -->";
/** GITHUB_SHA of a pull_request run: the merge commit, which evalgate must not report on. */
export const MERGE_SHA = "a".repeat(40);

export const EVAL = `name: demo
targets:
  - name: agent
    provider: command
    command: ["sh", "{EVAL_DIR}/agent.sh"]
    timeout: 1m
workspace: { seed: { empty: true } }
tests:
  - id: greet
    instruction: write hello.txt
    scorers: [{ type: file, path: hello.txt, contains: hello }]
  - id: farewell
    instruction: write bye.txt
    scorers: [{ type: file, path: bye.txt, contains: bye }]
`;

/** The agent dumps its environment into the workspace, so the diff shows what it could see. */
export const GOOD_AGENT = "echo hello > hello.txt\necho bye > bye.txt\nenv > env.txt\n";
export const BROKEN_AGENT = "echo hello > hello.txt\nenv > env.txt\n";

export interface Repo {
  dir: string;
  main: string;
  broken: string;
  fixed: string;
  checkout(sha: string): void;
}

const head = (dir: string) => headOf(dir);

export function makeRepo(): Repo {
  const dir = gitRepo({
    "evals/demo.eval.yaml": EVAL,
    "evals/agent.sh": GOOD_AGENT,
    ".gitignore": ".evalgate/\n",
  });
  const main = head(dir);
  sh("git checkout -q -b feature", dir);
  writeFiles(dir, { "evals/agent.sh": BROKEN_AGENT });
  sh("git commit -qam 'agent: forget bye.txt'", dir);
  const broken = head(dir);
  writeFiles(dir, { "evals/agent.sh": GOOD_AGENT });
  sh("git commit -qam 'agent: write bye.txt again'", dir);
  const fixed = head(dir);
  return { dir, main, broken, fixed, checkout: (sha) => sh(`git checkout -q ${sha}`, dir) };
}

/** The commit checked out in `dir`. */
export const headOf = (dir: string): string => sh("git rev-parse HEAD", dir).trim();

/** A repository whose main has `mainFiles` and whose feature branch (one commit) changes `prFiles`. */
export function branchRepo(mainFiles: Record<string, string>, prFiles: Record<string, string>): Repo {
  const dir = gitRepo(mainFiles);
  const main = head(dir);
  sh("git checkout -q -b feature", dir);
  writeFiles(dir, prFiles);
  sh("git add -A && git commit -qm 'the PR'", dir);
  const pr = head(dir);
  return { dir, main, broken: pr, fixed: pr, checkout: (sha) => sh(`git checkout -q ${sha}`, dir) };
}

/** A repository of the demo suite (EVAL, GOOD_AGENT) plus `mainFiles` on main, with `prFiles` on feature. */
export const demoRepo = (mainFiles: Record<string, string>, prFiles: Record<string, string>): Repo =>
  branchRepo(
    {
      "evals/demo.eval.yaml": EVAL,
      "evals/agent.sh": GOOD_AGENT,
      ".gitignore": ".evalgate/results/\n",
      ...mainFiles,
    },
    prFiles,
  );

/** Pull request 2 from `feature` at the repository's PR commit onto main, with no comments yet. */
export function openPull(gh: FakeGitHub, repo: Repo): void {
  gh.pulls.set(2, {
    number: 2,
    headSha: repo.broken,
    headRef: "feature",
    headRepo: REPO,
    baseRef: "main",
    baseSha: repo.main,
  });
  gh.comments.length = 0;
}

/** Every file under `dir`, with its text. */
export function filesOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(path.relative(dir, p), readFileSync(p, "utf8"));
    }
  };
  walk(dir);
  return out;
}

interface PrPayload {
  number: number;
  pull_request: {
    number: number;
    head: { sha: string; ref: string; repo: { full_name: string } | null };
    base: { ref: string; sha: string; repo: { full_name: string } };
  };
}

/** The real pull_request (synchronize) example, pointed at `sha` of PR `number`. */
export function prPayload(repo: Repo, sha: string, baseRepo: string, number = 2, headRepo = baseRepo) {
  const p = examplePayload("pull_request", "synchronize") as unknown as PrPayload;
  p.number = number;
  p.pull_request.number = number;
  p.pull_request.head.sha = sha;
  p.pull_request.head.repo = { ...p.pull_request.head.repo, full_name: headRepo };
  p.pull_request.base.ref = "main";
  p.pull_request.base.sha = repo.main;
  p.pull_request.base.repo.full_name = baseRepo;
  return p as unknown as Record<string, unknown>;
}

/** Runs the push on main that leaves the baseline artifact, and completes its run. */
export async function pushOnMain(
  gh: FakeGitHub,
  repo: Repo,
  token: string,
  node = NODE20,
  inputs: Record<string, string> = {},
  entry?: string,
): Promise<ActionRun> {
  const run = gh.addRun({
    workflowPath: WORKFLOW,
    head_branch: "main",
    head_sha: repo.main,
    event: "push",
    headRepo: REPO,
  });
  repo.checkout(repo.main);
  const payload = examplePayload("push");
  Object.assign(payload, { ref: "refs/heads/main", after: repo.main });
  const r = await runStep({
    node,
    server: gh,
    run,
    event: "push",
    payload,
    workspace: repo.dir,
    token,
    sha: repo.main,
    ref: "refs/heads/main",
    inputs,
    ...(entry ? { entry } : {}),
  });
  Object.assign(run, { status: "completed", conclusion: r.code === 0 ? "success" : "failure" });
  return r;
}

/** The workflow run of a pull_request event on `sha`. */
export function prRun(gh: FakeGitHub, sha: string, headRepo = REPO): WorkflowRun {
  return gh.addRun({
    workflowPath: WORKFLOW,
    head_branch: "feature",
    head_sha: sha,
    event: "pull_request",
    headRepo,
  });
}

export const FORK = "forker/Hello-World";

export interface Scenario {
  gh: FakeGitHub;
  repo: Repo;
  /** A token with what the documented workflow grants: pull-requests and checks write, actions read. */
  writer: string;
}

/** A local GitHub with PR #2 open on the fixture repository and main's baseline bundle uploaded. */
export async function openScenario(): Promise<Scenario> {
  const { FakeGitHub } = await import("./server.js");
  const gh = await new FakeGitHub(REPO).start();
  const repo = makeRepo();
  const writer = gh.token({ "pull-requests": "write", actions: "read", checks: "write" });
  const main = await pushOnMain(gh, repo, writer);
  if (main.code !== 0) throw new Error(`the push on main failed: ${main.stdout}`);
  gh.pulls.set(2, { number: 2, headSha: repo.broken, headRef: "feature", headRepo: REPO, baseRef: "main" });
  return { gh, repo, writer };
}
