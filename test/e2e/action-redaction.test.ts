/**
 * Redaction through the action: a secret the workflow gives evalgate (a target's env_passthrough)
 * that the agent prints, writes into its diff and fails with appears as *** in the PR comment, the
 * job summary, the check run, the job log and every file of the bundle.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filesOf, MARKER, MERGE_SHA, prPayload, prRun, REPO } from "../github/fixture.js";
import { type ActionRun, requireBuiltAction, runStep } from "../github/harness.js";
import { FakeGitHub } from "../github/server.js";
import { gitRepo, sh } from "../helpers.js";

requireBuiltAction();

const SECRET = "sk-workflow-secret-5f4e3d2c1b";

describe("the action redacts secrets from everything it publishes", () => {
  let gh: FakeGitHub;
  let run: ActionRun;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    const dir = gitRepo({
      "evals/leak.eval.yaml": `name: leak
targets:
  - { name: agent, provider: command, command: ["sh", "{EVAL_DIR}/agent.sh"], env_passthrough: [AGENT_SECRET] }
workspace: { seed: { empty: true } }
tests:
  - id: leak
    instruction: write config.txt
    scorers: [{ type: file, path: config.txt, contains: "api_key=" }]
`,
      "evals/agent.sh": `echo "key=$AGENT_SECRET" > config.txt
echo "using $AGENT_SECRET"
echo "giving up with $AGENT_SECRET" >&2
exit 1
`,
      ".gitignore": ".evalgate/\n",
    });
    const sha = sh("git rev-parse HEAD", dir).trim();
    const repo = { dir, main: sha, broken: sha, fixed: sha, checkout: () => undefined };
    gh.pulls.set(2, { number: 2, headSha: sha, headRef: "feature", headRepo: REPO, baseRef: "main" });
    const token = gh.token({ "pull-requests": "write", actions: "read", checks: "write" });
    run = await runStep({
      server: gh,
      run: prRun(gh, sha),
      event: "pull_request",
      payload: prPayload(repo, sha, REPO),
      workspace: dir,
      token,
      sha: MERGE_SHA,
      ref: "refs/pull/2/merge",
      inputs: { "check-name": "evals", baseline: "off" },
      env: { AGENT_SECRET: SECRET },
    });
  }, 120_000);
  afterAll(() => gh.close());

  it("posts the comment, summary and check run with *** in place of the secret", () => {
    expect(run.stderr).toBe("");
    expect(run.code).toBe(1);
    const comment = gh.comments.find((c) => c.body.startsWith(MARKER))!;
    // The agent's failure and its diff are in the comment, masked.
    expect(comment.body).toContain("giving up with ***");
    expect(comment.body).toContain("+key=***");
    expect(run.summary).toContain("giving up with ***");
    const check = gh.checkRuns.at(-1)!;
    for (const text of [comment.body, run.summary, check.output.summary ?? "", run.stdout]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(SECRET.slice(0, 12));
    }
    for (const [name, text] of filesOf(run.outputs["bundle-path"]!)) {
      expect(text.includes(SECRET.slice(0, 12)), name).toBe(false);
    }
  });
});
