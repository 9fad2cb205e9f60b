/**
 * Acceptance: an agent that prints its whole environment sees the minimal base and exactly what its
 * target passes through, never the runner's tokens, however evalgate itself was started.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BASE_VARIABLES } from "../../src/sandbox/env.js";
import { filesContaining, readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

const RUNNER_SECRETS = {
  GITHUB_TOKEN: "ghs_0123456789abcdefRUNNERTOKEN",
  GH_TOKEN: "gho_runner_gh_cli_token_value",
  ACTIONS_RUNTIME_TOKEN: "actions-runtime-token-value",
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: "oidc-request-token-value",
  ACTIONS_ID_TOKEN_REQUEST_URL: "https://example.invalid/oidc",
  ACTIONS_CACHE_URL: "https://example.invalid/cache",
  GITHUB_ENV: "/tmp/should-not-leak-env-file",
  INPUT_GITHUB_TOKEN: "input-token-value",
  AWS_SECRET_ACCESS_KEY: "aws-secret-not-listed",
  SOME_OTHER_VAR: "not-listed-either",
};

describe("the agent's environment", () => {
  const dir = tempDir();
  writeFiles(dir, {
    "project/README.md": "hi\n",
    "env.eval.yaml": `name: env
targets:
  - name: printer
    provider: command
    command: ["node", "-e", "console.log('ENV=' + JSON.stringify(process.env))"]
    env_passthrough: [AGENT_API_KEY, UNSET_BUT_LISTED]
    env: { AGENT_MODE: fast }
workspace:
  seed: { path: project }
tests:
  - id: show-env
    instruction: print your environment
    scorers:
      - { type: command, run: "true" }
`,
  });
  const out = path.join(dir, "bundle");
  const result = runCli(["run", ".", "--out", out], dir, {
    ...RUNNER_SECRETS,
    AGENT_API_KEY: "agent-key-value-1234",
    // evalgate keeps its scratch folders there; the variable itself is not passed.
    RUNNER_TEMP: tempDir(),
  });

  it("holds the base, the passthrough and the fixed values, nothing else", () => {
    expect(result.stderr).toBe("");
    const row = readJsonl<{ runs: { dir: string }[] }>(path.join(out, "index.jsonl"))[0]!;
    const log = readFileSync(path.join(out, row.runs[0]!.dir, "agent.log"), "utf8");
    const line = log.split("\n").find((l) => l.startsWith("ENV="))!;
    const env = JSON.parse(line.slice(4)) as Record<string, string>;
    expect(Object.keys(env).sort()).toEqual(
      [
        ...BASE_VARIABLES,
        "AGENT_API_KEY",
        "AGENT_MODE",
        "EVALGATE_ATTEMPT",
        "EVALGATE_OUTPUT_FILE",
        "EVALGATE_RETRY",
        "EVALGATE_TEST_ID",
        // bubblewrap (the default sandbox here) sets it to the folder it starts the agent in.
        "PWD",
      ].sort(),
    );
    expect(env.PWD).toMatch(/attempts\/.*\/run-1\/ws$/);
    expect(env.TZ).toBe("UTC");
    expect(env.AGENT_MODE).toBe("fast");
    // HOME and TMPDIR are the attempt's own, outside the workspace and the runner's home.
    expect(env.HOME).toMatch(/attempts\/.*\/run-1\/home$/);
    expect(env.TMPDIR).toMatch(/attempts\/.*\/run-1\/tmp$/);
    for (const value of Object.values(RUNNER_SECRETS)) expect(log).not.toContain(value);
  });

  it("refuses an eval file that passes a runner variable, naming file, line and key", () => {
    const bad = tempDir();
    writeFiles(bad, {
      "project/a": "",
      "bad.eval.yaml": `targets:
  - name: t
    provider: noop
    env_passthrough: [GITHUB_TOKEN]
workspace: { seed: { path: project } }
tests:
  - { id: x, instruction: y, scorers: [{ type: command, run: "true" }] }
`,
    });
    const r = runCli(["validate", "."], bad, RUNNER_SECRETS);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "bad.eval.yaml:4: targets[0].env_passthrough[0]: GITHUB_TOKEN is a variable of the CI runner",
    );
    expect(r.stderr).not.toContain(RUNNER_SECRETS.GITHUB_TOKEN);
  });
});

/**
 * Outside a sandbox an agent can read evalgate's own environment in /proc (docs/isolation.md: The agent's
 * environment). The runner's credentials there are masked in the bundle if the agent prints them.
 */
describe("an unsandboxed agent that digs in evalgate's process environment", () => {
  // Whether this machine lets a process read its parent's environment at all (Yama ptrace_scope < 2).
  const readable = spawnSync("sh", ["-c", 'cat "/proc/$PPID/environ" > /dev/null']).status === 0;
  const dir = tempDir();
  writeFiles(dir, {
    "project/README.md": "hi\n",
    "walk.sh": `#!/bin/sh
p=$PPID
while [ "$p" -gt 1 ] 2>/dev/null; do
  tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -E '^(GITHUB_TOKEN|ACTIONS_RUNTIME_TOKEN|INPUT_GITHUB_TOKEN)='
  p=$(awk '/^PPid:/{print $2}' /proc/$p/status)
done
echo walked
`,
    "dig.eval.yaml": `targets: [{ name: digger, provider: command, command: ["sh", "{EVAL_DIR}/walk.sh"], sandbox: none }]
workspace: { seed: { path: project } }
tests:
  - { id: dig, instruction: x, scorers: [{ type: command, run: "true" }] }
`,
  });
  const out = path.join(dir, "bundle");
  const result = runCli(["run", ".", "--out", out], dir, RUNNER_SECRETS);

  it("finds the runner's tokens only as ***", () => {
    // The one line on stderr says the agent runs without isolation, as its target chose.
    expect(result.stderr.trim()).toMatch(
      /^warning: isolation: none for digger: .*Why: sandbox: none in the eval file$/,
    );
    const row = readJsonl<{ runs: { dir: string }[] }>(path.join(out, "index.jsonl"))[0]!;
    const log = readFileSync(path.join(out, row.runs[0]!.dir, "agent.log"), "utf8");
    expect(log).toContain("walked");
    if (readable) {
      expect(log).toContain("GITHUB_TOKEN=***\n");
      expect(log).toContain("ACTIONS_RUNTIME_TOKEN=***\n");
      expect(log).toContain("INPUT_GITHUB_TOKEN=***\n");
    }
    for (const name of ["GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "INPUT_GITHUB_TOKEN"] as const) {
      expect(filesContaining(out, RUNNER_SECRETS[name])).toEqual([]);
    }
  });
});
