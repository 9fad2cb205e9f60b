/**
 * The other side of "errors are evidence" (issue 26, point 5a): the real agent CLIs (Claude Code,
 * Codex, Gemini CLI from npm, test/agent-cli.ts) against scripted model servers that answer 429,
 * 500 or refuse the key. Their presets find that trouble in what the CLI printed (its event stream,
 * Gemini's stderr) and the attempt stays an `error` (or a `timeout`, for a CLI still retrying at its
 * time limit) with `agent.infrastructure` saying why, so `on_error: retry` tries it again. Without
 * that evidence a failed run is the agent's failure (agent-errors.test.ts).
 */
import { cpSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentName, installAgent } from "../agent-cli.js";
import { ROOT, readJson, readJsonl, runCliAsync, tempDir, writeFiles } from "../helpers.js";
import { startAnthropicServer } from "../providers/anthropic-server.js";
import { startGeminiServer } from "../providers/gemini-server.js";
import { startOpenAIServer } from "../providers/openai-server.js";

const KEY = "sk-local-test-key-0123456789abcdef";
const TROUBLE = [
  [429, "rate_limit_error", "RESOURCE_EXHAUSTED"],
  [500, "api_error", "INTERNAL"],
  [401, "authentication_error", "UNAUTHENTICATED"],
] as const;

interface Row {
  target: string;
  runs: { dir: string; status: string }[];
}
interface Result {
  status: string;
  failure_kind: string | null;
  message: string | null;
  agent: { infrastructure: string | null };
}

describe("presets whose model API answers 429, 500 or refuses the key", () => {
  const servers: { close(): Promise<void>; requests: unknown[] }[] = [];
  const bins: Partial<Record<AgentName, string>> = {};
  let skip: string | undefined;
  let out: string;
  let rows: Row[] = [];

  beforeAll(async () => {
    for (const name of ["claude-code", "codex", "gemini-cli"] as const) {
      const got = await installAgent(name);
      if ("skip" in got) skip = got.skip;
      else bins[name] = got.bin;
    }
    if (skip) return;
    const claude: object[] = [];
    const others: object[] = [];
    for (const [status, type, reason] of TROUBLE) {
      // A wrong key is how a server refuses one: the scripted step is never reached.
      const key = status === 401 ? "another-key" : KEY;
      const a = await startAnthropicServer({
        apiKey: key,
        script: [{ status, errorType: type, message: `scripted ${status}` }],
      });
      const o = await startOpenAIServer({ apiKey: key, script: [{ status, message: `scripted ${status}` }] });
      const g = await startGeminiServer({
        apiKey: key,
        script: [{ status, message: `scripted ${status}`, reason }],
      });
      servers.push(a, o, g);
      claude.push({
        name: `claude-${status}`,
        provider: "claude-code",
        bin: bins["claude-code"],
        model: "claude-sonnet-4-5-20250929",
        env_passthrough: ["ANTHROPIC_API_KEY"],
        env: { CLAUDE_CODE_MAX_RETRIES: "0", ANTHROPIC_BASE_URL: a.url },
        timeout: "2m",
      });
      others.push(
        {
          name: `codex-${status}`,
          provider: "codex",
          bin: bins.codex,
          model: "gpt-5-codex",
          env_passthrough: ["OPENAI_API_KEY"],
          env: { OPENAI_BASE_URL: `${o.url}/v1` },
          timeout: "2m",
        },
        {
          name: `gemini-${status}`,
          provider: "gemini-cli",
          bin: bins["gemini-cli"],
          model: "gemini-2.5-pro",
          env_passthrough: ["GEMINI_API_KEY"],
          env: { GOOGLE_GEMINI_BASE_URL: g.url },
          // Gemini CLI retries a 429 or 5xx with backoff for minutes: it is stopped while retrying.
          timeout: "75s",
        },
      );
    }
    const dir = tempDir("evalgate-api-trouble-");
    cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(dir, "project"), { recursive: true });
    const test = {
      id: "empty-cart-total",
      instruction: "An empty cart should total 0. Fix it in src/cart.js.",
      scorers: [{ name: "unit", type: "command", run: "node --test test/total.test.js" }],
    };
    const file = (name: string, targets: object[], gate: object) =>
      JSON.stringify({ name, targets, gate, workspace: { seed: { path: "project" } }, tests: [test] });
    writeFiles(dir, {
      "claude.eval.yaml": file("claude", claude, { on_error: "retry", retries: 1 }),
      "others.eval.yaml": file("others", others, { on_error: "fail" }),
    });
    out = path.join(dir, "out");
    await runCliAsync(
      ["run", ".", "--out", out, "--concurrency", "4"],
      dir,
      { ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: KEY, GEMINI_API_KEY: KEY },
      540_000,
    );
    rows = readJsonl<Row>(path.join(out, "index.jsonl"));
  }, 600_000);

  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  const result = (target: string, run = 0) => {
    const row = rows.find((r) => r.target === target)!;
    return readJson<Result>(path.join(out, row.runs[run]!.dir, "result.json"));
  };

  it.for([
    ["claude-429", "error", "the model API answered 429 (rate limit)"],
    ["claude-500", "error", "the model API answered 500 (server error)"],
    ["claude-401", "error", "the model API refused the credential (401)"],
    ["codex-429", "error", "the model API answered 429 (rate limit)"],
    // Codex words every 5xx as "high demand", without the status.
    ["codex-500", "error", "the model API was overloaded (server error)"],
    ["codex-401", "error", "the model API refused the credential (401)"],
    ["gemini-429", "timeout", "the model API answered 429 (rate limit)"],
    ["gemini-500", "timeout", "the model API answered 500 (server error)"],
    // The Gemini API refuses a key with 400 "API key not valid".
    ["gemini-401", "error", "the model API refused the credential (401)"],
  ] as const)("%s is an %s with the evidence (an agent's failure would be `failed`)", ([
    target,
    status,
    evidence,
  ], ctx) => {
    if (skip) return ctx.skip();
    const r = result(target);
    expect(r.status, r.message ?? "").toBe(status);
    expect(r.failure_kind).toBe(status === "timeout" ? "agent_timeout" : "agent_exit");
    expect(r.agent.infrastructure).toBe(evidence);
  });

  it("retries such an error under on_error: retry", (ctx) => {
    if (skip) return ctx.skip();
    for (const status of [429, 500, 401]) {
      const row = rows.find((r) => r.target === `claude-${status}`)!;
      expect(row.runs.map((r) => r.status)).toEqual(["error", "error"]);
    }
  });

  it("reached each scripted server", (ctx) => {
    if (skip) return ctx.skip();
    for (const s of servers) expect(s.requests.length).toBeGreaterThan(0);
  });
});
