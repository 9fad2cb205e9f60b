/**
 * Redaction through the action: a secret the workflow gives evalgate (a target's env_passthrough)
 * that the agent prints, writes into its diff and fails with appears as *** in the PR comment, the
 * job summary, the check run, the job log and every file of the bundle. So does the action's own
 * GitHub token, which an unsandboxed agent can find in evalgate's process environment or in a
 * checkout that actions/checkout left with persisted credentials.
 */
import { spawnSync } from "node:child_process";
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
  let token: string;
  let header: string;
  beforeAll(async () => {
    gh = await new FakeGitHub(REPO).start();
    const dir = gitRepo({
      "evals/leak.eval.yaml": `name: leak
# sandbox: none: this agent reaches what an agent without isolation can (the checkout's
# .git/config, the action's environment); the default isolation keeps both out of its reach
# (test/e2e/isolation.test.ts), and what it still finds must be masked.
targets:
  - { name: agent, provider: command, command: ["sh", "{EVAL_DIR}/agent.sh"], env_passthrough: [AGENT_SECRET], sandbox: none }
workspace: { seed: { empty: true } }
tests:
  - id: leak
    instruction: write config.txt
    scorers: [{ type: file, path: config.txt, contains: "api_key=" }]
`,
      "evals/agent.sh": `echo "key=$AGENT_SECRET" > config.txt
echo "using $AGENT_SECRET"
echo "giving up with $AGENT_SECRET" >&2
cat "$(dirname "$0")/../.git/config"
p=$PPID
while [ "$p" -gt 1 ] 2>/dev/null; do
  tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep '^INPUT_GITHUB-TOKEN='
  p=$(awk '/^PPid:/{print $2}' /proc/$p/status)
done
exit 1
`,
      ".gitignore": ".evalgate/\n",
    });
    const sha = sh("git rev-parse HEAD", dir).trim();
    const repo = { dir, main: sha, broken: sha, fixed: sha, checkout: () => undefined };
    gh.pulls.set(2, { number: 2, headSha: sha, headRef: "feature", headRepo: REPO, baseRef: "main" });
    token = gh.token({ "pull-requests": "write", actions: "read", checks: "write" });
    // What actions/checkout leaves behind without persist-credentials: false.
    header = Buffer.from(`x-access-token:${token}`).toString("base64");
    sh(`git config --local http.https://github.com/.extraheader "AUTHORIZATION: basic ${header}"`, dir);
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

  it("masks its own token wherever an agent found it, and says how to keep it out of the checkout", () => {
    expect(run.stdout).toMatch(/::warning::.*persist-credentials: false/);
    const bundle = run.outputs["bundle-path"]!;
    const log = [...filesOf(bundle)].find(([name]) => name.endsWith("agent.log"))![1];
    // The agent did read the checkout's config, and (where the kernel allows) evalgate's environment.
    expect(log).toMatch(/extraheader = AUTHORIZATION: basic \S*\*\*\*\n/);
    const readable = spawnSync("sh", ["-c", 'cat "/proc/$PPID/environ" > /dev/null']).status === 0;
    if (readable) expect(log).toContain("INPUT_GITHUB-TOKEN=***");
    const comment = gh.comments.find((c) => c.body.startsWith(MARKER))!;
    // The job log's one copy is the add-mask command that has the runner mask it.
    const jobLog = run.stdout.replace(`::add-mask::${token}\n`, "");
    for (const text of [comment.body, run.summary, jobLog, ...filesOf(bundle).values()]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(header.slice(20));
    }
  });
});
