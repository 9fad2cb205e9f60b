/**
 * Acceptance: the value of every secret a run hands out (a target's, setup's and a scorer's
 * env_passthrough, a judge's api_key_env) appears in no file of the bundle and not on the console,
 * whether the agent printed it (whole, split across writes, base64, in JSON), wrote it into the
 * workspace (so it is in diff.patch), or it came back in a judge's verdict.
 */
import { chmodSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readJson, readJsonl, runCliAsync, tempDir, writeFiles } from "../helpers.js";
import { startOpenAIServer } from "../scorers/openai-server.js";

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
