/**
 * The scoring contract through the CLI: a model judge on a local chat-completions server (its key
 * read by evalgate and never seen by the agent; its tokens and cost in grading.json), and a scorer
 * with a timeout of its own.
 */
import { chmodSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readJson, readJsonl, runCliAsync, tempDir, writeFiles } from "../helpers.js";
import { startOpenAIServer } from "../scorers/openai-server.js";

interface Row {
  test_id: string;
  runs: { dir: string; status: string; failure_kind: string | null; grading_path: string }[];
}
interface WireScorer {
  name: string;
  state: string;
  score: number | null;
  passed: boolean | null;
  reason: string;
  timed_out: boolean;
  duration_ms: number;
  details: Record<string, unknown> | null;
}

const KEY = "sk-judge-secret-4242";

describe("scoring through the CLI", async () => {
  const server = await startOpenAIServer({
    apiKey: KEY,
    script: [
      { status: 429, headers: { "retry-after": "0" } },
      {
        content: '{"score": 0.8, "pass": true, "reason": "Uses an initial value for reduce."}',
        usage: { prompt_tokens: 900, completion_tokens: 20 },
      },
    ],
  });
  afterAll(() => server.close());

  const dir = tempDir();
  writeFiles(dir, {
    "project/src/cart.js": "export const total = (items) => items.reduce((a, i) => a + i.price);\n",
    "agent.sh": [
      "#!/bin/sh",
      "env > seen-env.txt",
      "env",
      'echo "export const total = (items) => items.reduce((a, i) => a + i.price, 0);" > src/cart.js',
      "",
    ].join("\n"),
    "scoring.eval.yaml": `targets:
  - { name: fixer, provider: command, command: ["./agent.sh"] }
timeouts: { scorer: 10m }
workspace: { seed: { path: project } }
tests:
  - id: judged
    instruction: total() throws on an empty cart; it should return 0.
    threshold: 0.8
    scorers:
      - name: judge
        type: llm-judge
        model: judge-1
        base_url: ${server.url}
        api_key_env: JUDGE_KEY
        rubric: The fix gives reduce an initial value.
        price: { input_per_mtok: 3, output_per_mtok: 15 }
  - id: slow-verifier
    instruction: total() throws on an empty cart; it should return 0.
    scorers:
      - { name: quick, type: command, run: "true", weight: 0.5 }
      - { name: slow, type: command, run: "sleep 30", timeout: 1s, weight: 0.5 }
`,
  });
  chmodSync(path.join(dir, "agent.sh"), 0o755);
  const out = path.join(dir, "bundle");
  const started = performance.now();
  const result = await runCliAsync(["run", "scoring.eval.yaml", "--out", out], dir, { JUDGE_KEY: KEY });
  const elapsed = performance.now() - started;
  if (result.code > 1) throw new Error(`evalgate failed: ${result.stderr}`);
  const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
  const run = (id: string) => rows.find((r) => r.test_id === id)!.runs[0]!;
  const scorers = (id: string) =>
    readJson<{ scorers: WireScorer[] }>(path.join(out, run(id).grading_path)).scorers;

  it("grades with the judge, retrying its 429, and records tokens and cost in grading.json", () => {
    expect(result.stderr).toBe("");
    expect(run("judged").status).toBe("passed");
    const [judge] = scorers("judged");
    expect(judge).toMatchObject({
      state: "complete",
      score: 0.8,
      passed: true,
      reason: "Uses an initial value for reduce.",
    });
    expect(judge!.details).toMatchObject({
      requests: 2,
      input_tokens: 900,
      output_tokens: 20,
      cost_usd: (900 * 3 + 20 * 15) / 1e6,
      diff_truncated: false,
    });
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
  });

  it("never gives the judge's key to the agent, nor writes it into the bundle", () => {
    const agentLog = readFileSync(path.join(out, run("judged").dir, "agent.log"), "utf8");
    expect(agentLog).toContain("PATH=");
    expect(agentLog).not.toContain(KEY);
    expect(agentLog).not.toContain("JUDGE_KEY");
    const judgeLog = readFileSync(path.join(out, run("judged").dir, "scorers", "judge.log"), "utf8");
    expect(judgeLog).toContain("HTTP 429");
    expect(judgeLog).not.toContain(KEY);
  });

  it("ends a scorer at its own timeout: the attempt is a scorer_timeout error, not a failure", () => {
    expect(run("slow-verifier")).toMatchObject({ status: "error", failure_kind: "scorer_timeout" });
    const [quick, slow] = scorers("slow-verifier");
    expect(quick).toMatchObject({ state: "complete", passed: true });
    expect(slow).toMatchObject({
      state: "error",
      score: null,
      timed_out: true,
      reason: "timed out after 1 s",
    });
    expect(slow!.duration_ms).toBeLessThan(10_000);
    expect(elapsed).toBeLessThan(30_000);
  });
});
