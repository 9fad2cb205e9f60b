/**
 * Acceptance: the value of every secret a run hands out (a target's, setup's and a scorer's
 * env_passthrough, a judge's api_key_env) appears in no file of the bundle and not on the console,
 * whether the agent printed it (whole, split across writes, base64, in JSON), wrote it into the
 * workspace (so it is in diff.patch), or it came back in a judge's verdict.
 */
import { chmodSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  filesContaining,
  gitRepo,
  readJson,
  readJsonl,
  runCli,
  runCliAsync,
  sh,
  tempDir,
  writeFiles,
} from "../helpers.js";
import { startOpenAIServer } from "../scorers/openai-server.js";
import { type GitHttpServer, startGitHttpServer } from "../workspace/git-http-server.js";

const SECRETS = {
  AGENT_SECRET: "agent-SECRET/value+0123456789",
  SETUP_SECRET: "setup-secret-value-42",
  SCORER_SECRET: "scorer-secret-value-77",
  JUDGE_KEY: "sk-judge-key-value-99",
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const abs = path.join(dir, name);
    return statSync(abs).isDirectory() ? filesUnder(abs) : [abs];
  });
}

describe("redaction of secrets from the bundle and the console", async () => {
  const server = await startOpenAIServer({
    apiKey: SECRETS.JUDGE_KEY,
    script: [
      // A misbehaving endpoint that echoes the key it was sent.
      { content: `{"score": 0, "pass": false, "reason": "key ${SECRETS.JUDGE_KEY} is not allowed"}` },
    ],
  });
  afterAll(() => server.close());

  const dir = tempDir();
  writeFiles(dir, {
    "project/src.txt": "original\n",
    "agent.sh": `#!/bin/sh
printf 'agent has %s\\n' "$AGENT_SECRET"
printf '%s' "$AGENT_SECRET" | base64
printf 'json: {"k":"%s"}\\n' "$AGENT_SECRET"
half=$(printf %s "$AGENT_SECRET" | cut -c1-10)
rest=$(printf %s "$AGENT_SECRET" | cut -c11-)
printf 'split: %s' "$half"; sleep 0.3; printf '%s\\n' "$rest"
printf '%s\\n' "$AGENT_SECRET" > leak.txt
printf 'token=%s\\n' "$AGENT_SECRET" >> src.txt
echo "giving up with $AGENT_SECRET" >&2
exit 3
`,
    "secret.eval.yaml": `name: secrets
targets:
  - name: leaky
    provider: command
    command: ["./agent.sh"]
    env_passthrough: [AGENT_SECRET]
workspace:
  seed: { path: project }
  setup: { command: 'echo "setup sees $SETUP_SECRET"', env_passthrough: [SETUP_SECRET] }
tests:
  - id: leak
    instruction: leak everything
    scorers:
      - name: check
        type: command
        run: 'echo "scorer sees $SCORER_SECRET"; cat leak.txt'
        env_passthrough: [SCORER_SECRET]
      - name: judge
        type: llm-judge
        model: judge-1
        base_url: ${server.url}
        api_key_env: JUDGE_KEY
        rubric: anything
`,
  });
  chmodSync(path.join(dir, "agent.sh"), 0o755);
  const out = path.join(dir, "bundle");
  const result = await runCliAsync(["run", ".", "--out", out], dir, SECRETS);
  const files = filesUnder(out);
  const forbidden = [
    ...Object.values(SECRETS),
    Buffer.from(SECRETS.AGENT_SECRET).toString("base64"),
    SECRETS.AGENT_SECRET.slice(0, 12),
  ];

  it("ran the attempt: the agent's exit, the scorers and the judge are all recorded", () => {
    expect(result.code).toBe(1);
    const row = readJsonl<{ runs: { dir: string; failure_kind: string }[] }>(
      path.join(out, "index.jsonl"),
    )[0]!;
    expect(row.runs[0]!.failure_kind).toBe("agent_exit");
    expect(server.requests.length).toBe(1);
    const g = readJson<{ scorers: { name: string; reason: string }[] }>(
      path.join(out, row.runs[0]!.dir, "grading.json"),
    );
    expect(g.scorers.find((s) => s.name === "judge")!.reason).toBe("key *** is not allowed");
  });

  it("leaves no secret (whole, base64 or a prefix) in any file of the bundle", () => {
    const names = files.map((f) => path.relative(out, f)).sort();
    for (const expected of ["agent.log", "setup.log", "diff.patch", "result.json", "grading.json"]) {
      expect(
        names.some((n) => n.endsWith(`run-1/${expected}`)),
        expected,
      ).toBe(true);
    }
    expect(names).toContain("index.jsonl");
    expect(names).toContain("summary.json");
    for (const f of files) {
      const text = readFileSync(f, "latin1");
      for (const s of forbidden) expect(text.includes(s), `${path.relative(out, f)} holds ${s}`).toBe(false);
    }
  });

  it("keeps the evidence readable, with *** where the secret was", () => {
    const runDir = path.dirname(files.find((f) => f.endsWith("run-1/agent.log"))!);
    const read = (name: string) => readFileSync(path.join(runDir, name), "utf8");
    expect(read("agent.log")).toContain("agent has ***\n");
    expect(read("agent.log")).toContain('json: {"k":"***"}');
    expect(read("agent.log")).toContain("split: ***\n");
    expect(read("setup.log")).toBe("setup sees ***\n");
    expect(read("scorers/check.log")).toContain("scorer sees ***\n");
    expect(read("diff.patch")).toContain("+token=***");
    expect(read("diff.patch")).toContain("+***");
    const r = readJson<{ message: string }>(path.join(runDir, "result.json"));
    expect(r.message).toContain("giving up with ***");
  });

  it("prints no secret on the console", () => {
    expect(result.stdout).toContain("giving up with ***");
    for (const s of forbidden) {
      expect(result.stdout).not.toContain(s);
      expect(result.stderr).not.toContain(s);
    }
  });
});

/**
 * A git seed's token_env is a secret of the run like any passthrough: redaction itself (not only
 * the seed code's care never to write it) keeps it out of the bundle. Here the repository holds the
 * token in a committed file, and the agent and a scorer print it and copy it into the workspace.
 */
describe("redaction of a git seed's token", () => {
  const TOKEN = "ghs_repoTokenCommittedByMistake_42";
  let server: GitHttpServer;
  const root = tempDir("evalgate-remote-");
  const work = gitRepo({ "app.txt": "v1\n", "deploy/credentials.txt": `${TOKEN}\n` });
  sh(`git clone -q --bare ${work} ${path.join(root, "shop.git")}`, root);
  const dir = tempDir();
  const out = path.join(dir, "bundle");
  let result: Awaited<ReturnType<typeof runCliAsync>>;
  beforeAll(async () => {
    server = await startGitHttpServer(root, TOKEN);
    writeFiles(dir, {
      "agent.sh": `#!/bin/sh
t=$(cat deploy/credentials.txt)
echo "found $t"
printf '%s' "$t" | base64
cp deploy/credentials.txt leaked.txt
echo "giving up with $t" >&2
exit 3
`,
      "seed.eval.yaml": `targets:
  - { name: leaky, provider: command, command: ["./agent.sh"] }
workspace:
  seed: { git: { url: "${server.url}/shop.git", token_env: SEED_TOKEN } }
tests:
  - id: leak
    instruction: leak the token
    scorers:
      # Fails, so the agent's exit 3 is its own failure and its last words are the message.
      - { name: check, type: command, run: "cat leaked.txt && false" }
`,
    });
    chmodSync(path.join(dir, "agent.sh"), 0o755);
    result = await runCliAsync(["run", ".", "--out", out], dir, { SEED_TOKEN: TOKEN });
  });
  afterAll(() => server.close());

  it("masks it in the agent's log, the diff, the scorer log, the records and the console", () => {
    expect(result.code).toBe(1);
    expect(server.requests.some((q) => q.authorized)).toBe(true);
    const row = readJsonl<{ runs: { dir: string; failure_kind: string }[] }>(
      path.join(out, "index.jsonl"),
    )[0]!;
    expect(row.runs[0]!.failure_kind).toBe("agent_exit");
    const runDir = path.join(out, row.runs[0]!.dir);
    const read = (name: string) => readFileSync(path.join(runDir, name), "utf8");
    expect(read("agent.log")).toContain("found ***\n");
    expect(read("diff.patch")).toContain("+++ b/leaked.txt");
    expect(read("diff.patch")).toContain("+***\n");
    expect(read("scorers/check.log")).toBe("***\n");
    expect(readJson<{ message: string }>(path.join(runDir, "result.json")).message).toContain(
      "giving up with ***",
    );
    expect(result.stdout).toContain("giving up with ***");
    for (const needle of [TOKEN, Buffer.from(TOKEN).toString("base64").slice(0, 20), TOKEN.slice(0, 12)]) {
      expect(filesContaining(out, needle)).toEqual([]);
      expect(result.stdout).not.toContain(needle);
      expect(result.stderr).not.toContain(needle);
    }
  });
});

/** The fake `claude`: one long message and one tool call, each cut by the transcript where the key is. */
const FAKE_CLAUDE = `#!/usr/bin/env node
if (process.argv.includes("--version")) { console.log("2.0.0"); process.exit(0); }
const key = process.env.ANTHROPIC_API_KEY;
const ev = (o) => console.log(JSON.stringify(o));
const usage = { input_tokens: 1, output_tokens: 1 };
ev({ type: "system", subtype: "init", model: "m", claude_code_version: "2.0.0", session_id: "s" });
// transcript.jsonl keeps 16384 characters of a message and 4096 of a tool input: the key straddles both cuts.
const text = "x".repeat(16384 - 20) + key + " end";
ev({ type: "assistant", message: { id: "m1", model: "m", content: [{ type: "text", text }], usage } });
const input = { command: "y".repeat(4096 - 9) + key };
ev({ type: "assistant", message: { id: "m2", model: "m", content: [{ type: "tool_use", id: "t1", name: "Bash", input }], usage } });
ev({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "key is " + key }] } });
ev({ type: "result", subtype: "success", is_error: false, num_turns: 1, result: "used " + key, total_cost_usd: 0.01, usage });
`;

describe("redaction of what presets and the output contract keep", () => {
  const KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv";
  const dir = tempDir();
  writeFiles(dir, {
    "project/a.txt": "a\n",
    "bin/claude": FAKE_CLAUDE,
    // A custom agent that writes the key into its {OUTPUT_FILE} report.
    "report.sh": `#!/bin/sh
printf '{"usage": {"model": "m-%s"}, "error": "the API refused %s"}' "$CUSTOM_KEY" "$CUSTOM_KEY" > "$EVALGATE_OUTPUT_FILE"
`,
    "p.eval.yaml": `targets:
  - { name: claude, provider: claude-code, env_passthrough: [ANTHROPIC_API_KEY] }
  - { name: custom, provider: command, command: ["./report.sh"], env_passthrough: [CUSTOM_KEY] }
workspace: { seed: { path: project } }
tests:
  - { id: t, instruction: x, scorers: [{ type: command, run: "false" }] } # a failure keeps the agent's error in the message
`,
  });
  chmodSync(path.join(dir, "bin/claude"), 0o755);
  chmodSync(path.join(dir, "report.sh"), 0o755);
  const out = path.join(dir, "bundle");
  const CUSTOM = "custom-key-value-0987654321";
  const result = runCli(["run", ".", "--out", out], dir, {
    PATH: `${path.join(dir, "bin")}:${process.env.PATH}`,
    ANTHROPIC_API_KEY: KEY,
    CUSTOM_KEY: CUSTOM,
  });
  const rows = readJsonl<{ target: string; runs: { dir: string }[] }>(path.join(out, "index.jsonl"));
  const runDir = (target: string) => path.join(out, rows.find((r) => r.target === target)!.runs[0]!.dir);

  it("leaves no part of the key in transcript.jsonl, even where the transcript cut it", () => {
    expect(result.stderr).toBe("");
    const lines = readFileSync(path.join(runDir("claude"), "transcript.jsonl"), "utf8");
    const entries = lines
      .trim()
      .split("\n")
      .map(
        (l) => JSON.parse(l) as { type: string; text?: string; input?: { command: string }; output?: string },
      );
    // Each cut fell inside the key: what is left of it is masked, before the cut mark.
    expect(entries.find((e) => e.type === "message")!.text).toMatch(
      /x\*\*\*… \[\d+ more characters in agent\.log\]$/,
    );
    expect(entries.find((e) => e.type === "tool_call")!.input!.command).toMatch(/y\*\*\*… \[\d+ more/);
    expect(entries.find((e) => e.type === "tool_result")!.output).toBe("key is ***");
    expect(lines).toContain('"text":"used ***"');
  });

  it("masks the key in the copy of a custom agent's output file and in the error it reported", () => {
    const copy = readFileSync(path.join(runDir("custom"), "agent-output.json"), "utf8");
    expect(copy).toBe('{"usage": {"model": "m-***"}, "error": "the API refused ***"}');
    const r = readJson<{ message: string; usage: { model: string } }>(
      path.join(runDir("custom"), "result.json"),
    );
    expect(r.message).toContain("the API refused ***");
    expect(r.usage.model).toBe("m-***");
  });

  it("leaves no part of either key anywhere in the bundle or on the console", () => {
    for (const needle of [KEY.slice(0, 10), CUSTOM.slice(0, 10)]) {
      expect(filesContaining(out, needle)).toEqual([]);
      expect(result.stdout).not.toContain(needle);
    }
  });
});

/**
 * A passed-through value that is a word evalgate itself writes (`MODE=pass`): masked wherever an
 * agent or scorer could have put it, never in evalgate's own structure (verdicts, statuses, keys,
 * identities, the bundle's paths), so the run, its table, its reports and a later report all work.
 */
describe("redaction of a secret that is a common word", async () => {
  const dir = tempDir();
  writeFiles(dir, {
    "project/a.txt": "a\n",
    "agent.sh": `#!/bin/sh
echo "mode is $MODE"
echo "$MODE" > mode.txt
`,
    "w.eval.yaml": `name: pass
targets:
  - name: agent
    provider: command
    command: ["./agent.sh"]
    env_passthrough: [MODE]
workspace:
  seed: { path: project }
tests:
  - id: pass-one
    instruction: write mode.txt
    scorers:
      - { name: wrote, type: command, run: 'echo "scorer says $(cat mode.txt)"; test -s mode.txt' }
`,
  });
  chmodSync(path.join(dir, "agent.sh"), 0o755);
  const out = path.join(dir, "bundle");
  const result = await runCliAsync(["run", ".", "--out", out], dir, { MODE: "pass" });

  it("runs to a passing gate: verdicts, statuses and the table are evalgate's own words", () => {
    expect(result.stderr).not.toContain("internal error");
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain("· passed ·");
    expect(result.stdout).toMatch(/✓ pass +pass\/pass-one +agent +1\/1/);
    expect(result.stdout).toContain("✓ gate passed");
    expect(result.stdout + result.stderr).toContain(
      "note: MODE is passed through and its value is a plain word: it is masked as *** wherever it appears",
    );
    const [row] = readJsonl<Record<string, unknown> & { result_dir: string; runs: { dir: string }[] }>(
      path.join(out, "index.jsonl"),
    );
    expect(row).toMatchObject({ verdict: "pass", classification: "stable_pass", test_id: "pass-one" });
    expect(Object.keys(row!)).toContain("mean_pass_rate");
    expect(Object.keys(row!.attempts as object)).toContain("passed");
    expect(statSync(path.join(out, row!.result_dir)).isDirectory()).toBe(true);
    const r = readJson<{ status: string; files: { prompt: string } }>(
      path.join(out, row!.runs[0]!.dir, "result.json"),
    );
    expect(r.status).toBe("passed");
    const g = readJson<{ passed: boolean; scorers: { state: string; passed: boolean }[] }>(
      path.join(out, row!.runs[0]!.dir, "grading.json"),
    );
    expect(g.scorers[0]).toMatchObject({ state: "complete", passed: true });
    const summary = readJson<{ gate: { verdict: string }; counts: Record<string, number> }>(
      path.join(out, "summary.json"),
    );
    expect(summary.gate.verdict).toBe("pass");
    expect(summary.counts.passed).toBe(1);
    expect(readFileSync(path.join(out, "comment.md"), "utf8")).toContain("1 passed");
  });

  it("still masks the value where the agent and the scorer put it", () => {
    const runDir = path.join(
      out,
      readJsonl<{ runs: { dir: string }[] }>(path.join(out, "index.jsonl"))[0]!.runs[0]!.dir,
    );
    expect(readFileSync(path.join(runDir, "agent.log"), "utf8")).toBe("mode is ***\n");
    expect(readFileSync(path.join(runDir, "scorers/wrote.log"), "utf8")).toContain("scorer says ***");
    expect(readFileSync(path.join(runDir, "diff.patch"), "utf8")).toContain("+***\n");
  });

  it("reads back: report renders the bundle", () => {
    const r = runCli(["report", out, "--format", "markdown"], dir);
    expect(r.stderr).not.toContain("internal error");
    expect(r.stdout).toContain("1 passed");
  });
});
