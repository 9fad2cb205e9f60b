/**
 * `baseline: auto` against a local GitHub when things go wrong: every failure is a note for the
 * comment ("no baseline: …"), never an exception that would fail the step.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchBaseline } from "../../src/github/baseline.js";
import { createClient } from "../../src/github/client.js";
import { eventContext } from "../../src/github/context.js";
import { MemoryLogger } from "../../src/log.js";
import { runCli, tempDir, writeFiles } from "../helpers.js";
import { FakeGitHub } from "./server.js";
import { makeZip } from "./zip.js";

const REPO = "acme/shop";
const WORKFLOW = ".github/workflows/evals.yml";

describe("baseline: auto when GitHub or the artifact lets it down", () => {
  let gh: FakeGitHub;
  let token: string;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    token = gh.token({ actions: "read" });
  });
  afterAll(() => gh.close());

  const ctx = () =>
    eventContext(
      {
        GITHUB_EVENT_NAME: "pull_request",
        GITHUB_REPOSITORY: REPO,
        GITHUB_SHA: "a".repeat(40),
        GITHUB_RUN_ID: "1",
        GITHUB_WORKFLOW_REF: `${REPO}/${WORKFLOW}@refs/pull/2/merge`,
        GITHUB_API_URL: gh.url,
      },
      {
        pull_request: {
          number: 2,
          head: { sha: "c".repeat(40), repo: { full_name: REPO } },
          base: { ref: "main", repo: { full_name: REPO } },
        },
      },
    );
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
    gh.fail({ method: "GET", path: /\/actions\/workflows\/evals\.yml\/runs$/, status: 503, times: 2 });
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
    expect(r.note).toMatch(
      /^the artifact evalgate of run \d+ could not be used: artifact evalgate was refused: .*leaves the archive's folder/,
    );
  });
});

describe("baseline: auto pools the base branch's recent runs (issue 27)", () => {
  let gh: FakeGitHub;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
  });
  afterAll(() => gh.close());

  /** A real bundle (a run of the CLI), zipped as upload-artifact would. */
  function bundleZip(): Buffer {
    const dir = tempDir();
    writeFiles(dir, {
      "app/a.txt": "x\n",
      "a.eval.yaml": `name: s
targets: [{ name: bot, provider: noop }]
workspace: { seed: { path: app } }
tests:
  - { id: t, instruction: "x", scorers: [{ type: file, path: a.txt, contains: x }] }
`,
    });
    runCli(["run", "--out", "b"], dir);
    const root = path.join(dir, "b");
    const entries = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => {
        const full = path.join(e.parentPath, e.name);
        return { name: path.relative(root, full).split(path.sep).join("/"), data: readFileSync(full) };
      });
    return makeZip(entries);
  }

  it("downloads every good bundle of the newest runs, newest first (before: the newest only)", async () => {
    const zip = bundleZip();
    for (const sha of ["1", "2", "3"]) {
      const run = gh.addRun({
        workflowPath: WORKFLOW,
        head_branch: "main",
        head_sha: sha.repeat(40),
        event: "push",
        headRepo: REPO,
      });
      Object.assign(run, { status: "completed", conclusion: "success" });
      gh.artifacts.push({
        id: gh.newId(),
        name: "evalgate",
        runId: run.id,
        zip,
        expired: false,
        created_at: new Date().toISOString(),
      });
    }
    const r = await fetchBaseline(
      createClient({
        token: gh.token({ actions: "read" }),
        baseUrl: gh.url,
        logger: new MemoryLogger(),
        retries: 1,
      }),
      eventContext(
        {
          GITHUB_EVENT_NAME: "pull_request",
          GITHUB_REPOSITORY: REPO,
          GITHUB_SHA: "a".repeat(40),
          GITHUB_RUN_ID: "1",
          GITHUB_WORKFLOW_REF: `${REPO}/${WORKFLOW}@refs/pull/2/merge`,
          GITHUB_API_URL: gh.url,
        },
        {
          pull_request: {
            number: 2,
            head: { sha: "c".repeat(40), repo: { full_name: REPO } },
            base: { ref: "main", repo: { full_name: REPO } },
          },
        },
      ),
      "evalgate",
      path.join(tempDir("evalgate-base-"), "bundle"),
      new MemoryLogger(),
    );
    expect(r.note).toBeUndefined();
    expect(r.bundles).toHaveLength(3);
    expect(r.bundle).toBe(r.bundles![0]);
  });
});
