/**
 * The action checks everything the user gave before it does any work: a wrong `evals` path fails
 * before the baseline artifact is looked up or downloaded (issue 19 item 2).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { createClient } from "../../src/github/client.js";
import { eventContext } from "../../src/github/context.js";
import { parseInputs } from "../../src/github/inputs.js";
import { produceBundle } from "../../src/github/modes/index.js";
import { MemoryLogger } from "../../src/log.js";
import { SilentProgress } from "../../src/report/console.js";
import { ChildProcessRunner } from "../../src/sandbox/process.js";
import { gitRepo } from "../helpers.js";
import { FakeGitHub } from "./server.js";

const REPO = "acme/shop";

describe("the action's run step checks its eval files first", () => {
  let gh: FakeGitHub;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
  });
  afterAll(() => gh.close());

  const ctx = () =>
    eventContext(
      {
        GITHUB_EVENT_NAME: "pull_request",
        GITHUB_REPOSITORY: REPO,
        GITHUB_SHA: "a".repeat(40),
        GITHUB_RUN_ID: "1",
        GITHUB_WORKFLOW_REF: `${REPO}/.github/workflows/evals.yml@refs/pull/2/merge`,
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

  it.each([
    ["a path that does not exist", { evals: "evals/missing/" }, ConfigError],
    ["an eval file with a mistake", { evals: "bad.eval.yaml" }, ConfigError],
  ])("%s fails before the baseline is fetched", async (_, given, kind) => {
    const dir = gitRepo({ "bad.eval.yaml": "tests: []\nrepeat: 0\n" });
    const token = gh.token({ actions: "read", "pull-requests": "write" });
    const get = (name: string) => ({ baseline: "auto", "github-token": token, ...given })[name] ?? "";
    const inputs = parseInputs(get, { workspace: dir });
    const before = gh.requests.length;
    const client = createClient({ token, baseUrl: gh.url, logger: new MemoryLogger(), retries: 0 });
    await expect(
      produceBundle(inputs, ctx(), {
        client,
        logger: new MemoryLogger(),
        env: { RUNNER_TEMP: dir },
        runner: new ChildProcessRunner(),
        progress: new SilentProgress(),
      }),
    ).rejects.toBeInstanceOf(kind);
    expect(gh.requests.slice(before)).toEqual([]);
  });
});
