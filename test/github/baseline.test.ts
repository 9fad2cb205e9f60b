/**
 * `baseline: auto` against a local GitHub when things go wrong: every failure is a note for the
 * comment ("no baseline: …"), never an exception that would fail the step.
 */
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealBundle } from "../../src/bundle/seal.js";
import { type Baseline, fetchBaseline } from "../../src/github/baseline.js";
import { createClient } from "../../src/github/client.js";
import { eventContext } from "../../src/github/context.js";
import { MemoryLogger } from "../../src/log.js";
import { runCli, tempDir, writeFiles } from "../helpers.js";
import { FakeGitHub } from "./server.js";
import { makeZip } from "./zip.js";

const REPO = "acme/shop";
const WORKFLOW = ".github/workflows/evals.yml";

/** The context of a pull_request run of PR 2 (head c…c) onto main, against the local GitHub at `url`. */
const prContext = (url: string) =>
  eventContext(
    {
      GITHUB_EVENT_NAME: "pull_request",
      GITHUB_REPOSITORY: REPO,
      GITHUB_SHA: "a".repeat(40),
      GITHUB_RUN_ID: "1",
      GITHUB_WORKFLOW_REF: `${REPO}/${WORKFLOW}@refs/pull/2/merge`,
      GITHUB_API_URL: url,
    },
    {
      pull_request: {
        number: 2,
        head: { sha: "c".repeat(40), repo: { full_name: REPO } },
        base: { ref: "main", repo: { full_name: REPO } },
      },
    },
  );

describe("baseline: auto when GitHub or the artifact lets it down", () => {
  let gh: FakeGitHub;
  let token: string;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    token = gh.token({ actions: "read" });
  });
  afterAll(() => gh.close());

  const ctx = () => prContext(gh.url);
  const fetch = () =>
    fetchBaseline(
      createClient({ token, baseUrl: gh.url, logger: new MemoryLogger(), retries: 1 }),
      ctx(),
      "evalgate",
      path.join(tempDir("evalgate-base-"), "bundle"),
      new MemoryLogger(),
    );
  const mainRun = (headRepo = REPO) => {
    const run = gh.addRun({
      workflowPath: WORKFLOW,
      head_branch: "main",
      head_sha: "b".repeat(40),
      event: "push",
      headRepo,
    });
    Object.assign(run, { status: "completed", conclusion: "success" });
    return run;
  };
  const artifact = (runId: number, zip: Buffer) =>
    gh.artifacts.push({
      id: gh.newId(),
      name: "evalgate",
      runId,
      zip,
      expired: false,
      created_at: new Date().toISOString(),
    });

  it("GitHub answering 503 to every try: a note that says so", async () => {
    mainRun();
    // Two listings (the base branch's runs, the merge queue's), each tried twice.
    gh.fail({ method: "GET", path: /\/actions\/workflows\/evals\.yml\/runs$/, status: 503, times: 4 });
    const r = await fetch();
    expect(r.dir).toBeUndefined();
    expect(r.note).toBe(
      "listing the runs of evals.yml on main failed: GitHub answered 503 (Server Error) and kept failing after retries",
    );
  });

  it("a run of another repository's main (a fork's) is not a baseline", async () => {
    gh.runs.length = 0;
    artifact(mainRun("forker/shop").id, makeZip([{ name: "summary.json", data: "{}" }]));
    expect((await fetch()).note).toBe("the base branch main has no successful run of evals.yml");
  });

  it("an artifact that is not an evalgate bundle", async () => {
    artifact(mainRun().id, makeZip([{ name: "notes.txt", data: "hello" }]));
    const r = await fetch();
    expect(r.dir).toBeUndefined();
    expect(r.note).toMatch(
      /^the artifact evalgate of run \d+ was not used: it is not an evalgate bundle: it has no summary.json$/,
    );
  });

  it("an artifact whose zip climbs out of its folder is refused, and named", async () => {
    artifact(mainRun().id, makeZip([{ name: "../../evil.sh", data: "rm -rf ~" }]));
    const r = await fetch();
    expect(r.dir).toBeUndefined();
    // The search goes on past it to the older run (the previous test's), and names both.
    expect(r.note).toMatch(
      /^none of the last 2 successful runs of evals\.yml on main has a usable evalgate bundle: the artifact evalgate of run \d+ could not be used: artifact evalgate was refused: .*leaves the archive's folder.*; the artifact evalgate of run \d+ was not used: it is not an evalgate bundle/,
    );
  });
});

/** The zip of a real, sealed bundle of `evals/demo.eval.yaml`, with `edit` applied to its summary first. */
function bundleZip(
  dir: string,
  sha: string,
  edit: (summary: Record<string, unknown> & { evals: { eval_path: string }[] }) => void = () => undefined,
): Promise<Buffer> {
  const copy = path.join(tempDir("evalgate-base-copy-"), "b");
  cpSync(dir, copy, { recursive: true });
  const file = path.join(copy, "summary.json");
  const summary = JSON.parse(readFileSync(file, "utf8"));
  summary.git = { sha, branch: "main", dirty: false };
  edit(summary);
  writeFileSync(file, JSON.stringify(summary));
  return sealBundle(copy).then(() => {
    const entries = readdirSync(copy, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => {
        const abs = path.join(e.parentPath, e.name);
        return { name: path.relative(copy, abs), data: readFileSync(abs) };
      });
    return makeZip(entries);
  });
}

describe("baseline: auto picks the base branch's own runs, and walks back past bad bundles", () => {
  let gh: FakeGitHub;
  let token: string;
  let bundle: string;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    token = gh.token({ actions: "read" });
    const repo = tempDir("evalgate-base-repo-");
    writeFiles(repo, {
      "evals/demo.eval.yaml": `name: demo
targets: [{ name: a, provider: noop }]
workspace: { seed: { empty: true } }
tests:
  - { id: t, instruction: x, scorers: [{ type: file, path: a.txt }] }
`,
    });
    bundle = path.join(repo, "bundle");
    runCli(["run", "evals/", "--out", bundle], repo);
  }, 120_000);
  afterAll(() => gh.close());

  const SHA = (c: string) => c.repeat(40);
  const ctx = () => prContext(gh.url);
  const fetch = async (suites?: string[]): Promise<Baseline> =>
    fetchBaseline(
      createClient({ token, baseUrl: gh.url, logger: new MemoryLogger(), retries: 1 }),
      ctx(),
      "evalgate",
      tempDir("evalgate-base-"),
      new MemoryLogger(),
      suites,
    );
  const run = (event: string, sha: string, branch = "main") => {
    const r = gh.addRun({
      workflowPath: WORKFLOW,
      head_branch: branch,
      head_sha: sha,
      event,
      headRepo: REPO,
    });
    Object.assign(r, { status: "completed", conclusion: "success" });
    return r;
  };
  const upload = (runId: number, zip: Buffer, name = "evalgate") =>
    gh.artifacts.push({
      id: gh.newId(),
      name,
      runId,
      zip,
      expired: false,
      created_at: new Date().toISOString(),
    });
  const reset = () => {
    gh.runs.length = 0;
    gh.artifacts.length = 0;
  };

  it("a /evalgate command run filed under main is not a baseline: the push run before it is", async () => {
    // before: GitHub files issue_comment runs under the default branch (GITHUB_REF), so the newest
    // "run on main" could be a command run of some PR's head, and baseline: auto compared with it
    reset();
    const push = run("push", SHA("1"));
    await upload(push.id, await bundleZip(bundle, SHA("1")));
    const command = run("issue_comment", SHA("1"));
    await upload(command.id, await bundleZip(bundle, SHA("9")));
    const pr = run("pull_request", SHA("8"));
    await upload(pr.id, await bundleZip(bundle, SHA("8")));
    const r = await fetch();
    expect(r.note).toBeUndefined();
    expect(r.used).toBe(`run ${push.run_number} on main (${SHA("1").slice(0, 7)})`);
    expect(r.bundle!.summary.git!.sha).toBe(SHA("1"));
    expect(r.skipped).toEqual([]);
  });

  it("a corrupt newest bundle and one of another commit are skipped, each with why; the older good one is used", async () => {
    // before: a corrupt newest artifact ended the search with a note, though older runs were listed
    reset();
    const good = run("push", SHA("2"));
    await upload(good.id, await bundleZip(bundle, SHA("2")));
    const foreign = run("push", SHA("3"));
    await upload(foreign.id, await bundleZip(bundle, SHA("4")));
    const corrupt = run("push", SHA("5"));
    await upload(corrupt.id, makeZip([{ name: "summary.json", data: "{ not json" }]));
    const r = await fetch();
    expect(r.used).toBe(`run ${good.run_number} on main (${SHA("2").slice(0, 7)})`);
    expect(r.skipped).toEqual([
      expect.stringMatching(new RegExp(`^the artifact evalgate of run ${corrupt.run_number} was not used: `)),
      `the bundle of run ${foreign.run_number} is of commit ${SHA("4").slice(0, 7)}, not of the run's ${SHA("3").slice(0, 7)}`,
    ]);
  });

  it("a bundle of other suites is skipped for an older one of the same suites; a re-run's newest attempt is taken", async () => {
    // before: a baseline of a different suite was compared anyway ("+5 passed", no warning), and a
    // re-run's bundle could not be uploaded (409) so the first attempt's stayed the baseline
    reset();
    const older = run("push", SHA("6"));
    await upload(older.id, await bundleZip(bundle, SHA("6")));
    await upload(
      older.id,
      await bundleZip(bundle, SHA("6"), (s) => (s.run = { ...(s.run as object), id: "second" })),
      "evalgate-attempt-2",
    );
    const other = run("push", SHA("7"));
    await upload(
      other.id,
      await bundleZip(bundle, SHA("7"), (s) => {
        s.evals = s.evals.map((e) => ({ ...e, eval_path: "evals/other.eval.yaml" }));
      }),
    );
    const r = await fetch(["evals/demo.eval.yaml"]);
    expect(r.used).toBe(`run ${older.run_number} on main (${SHA("6").slice(0, 7)})`);
    expect(r.bundle!.summary.run.id).toBe("second");
    expect(r.skipped).toEqual([
      `the bundle of run ${other.run_number} ran other suites (evals/other.eval.yaml) than this run`,
    ]);
  });

  it("pools every good bundle of the newest runs, newest first (before: the newest only)", async () => {
    reset();
    for (const c of ["1", "2", "3"]) {
      const r = run("push", SHA(c));
      await upload(
        r.id,
        await bundleZip(bundle, SHA(c), (s) => (s.run = { ...(s.run as object), id: `r${c}` })),
      );
    }
    const r = await fetch();
    expect(r.note).toBeUndefined();
    expect(r.bundles!.map((b) => b.summary.git?.sha)).toEqual([SHA("3"), SHA("2"), SHA("1")]);
    expect(r.bundle).toBe(r.bundles![0]);
  });

  it("a merge-queue run into main counts; one into another branch does not", async () => {
    reset();
    const push = run("push", SHA("a"));
    await upload(push.id, await bundleZip(bundle, SHA("a")));
    const queue = run("merge_group", SHA("b"), "gh-readonly-queue/main/pr-7-abc");
    await upload(queue.id, await bundleZip(bundle, SHA("b")));
    const elsewhere = run("merge_group", SHA("c"), "gh-readonly-queue/release/pr-8-def");
    await upload(elsewhere.id, await bundleZip(bundle, SHA("c")));
    const r = await fetch();
    expect(r.used).toBe(`run ${queue.run_number} on the merge queue (${SHA("b").slice(0, 7)})`);
  });
});
