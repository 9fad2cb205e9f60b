/**
 * The real Codex CLI (npm @openai/codex, pinned in test/agent-cli.ts), run by evalgate's codex
 * preset configured as the README documents — `env_passthrough: [OPENAI_API_KEY, OPENAI_BASE_URL]`,
 * the base URL a gateway's — against a local OpenAI Responses API server (SSE) on 127.0.0.1 that
 * scripts the fix through Codex's own shell tool. Codex reads neither variable itself (it wants
 * CODEX_API_KEY and `-c openai_base_url`): the preset maps them, and the server sees the key.
 */
import { cpSync, readFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { AGENTS, type Installed, installAgent } from "../agent-cli.js";
import { CLI, ROOT, readJson, readJsonl, tempDir, writeFiles } from "../helpers.js";
import { type OpenAIServer, startOpenAIServer } from "../providers/openai-server.js";

const KEY = "sk-proj-local-test-key-0123456789abcdef";
const FIX = "sed -i 's/sum + line);/sum + line, 0);/' src/cart.js && node --test test/total.test.js";

// Directly, and under bubblewrap (the sandbox the default \`auto\` picks where it is installed).
describe.each([
  ["directly", undefined],
  ["under sandbox: bwrap", { type: "bwrap", network: true }],
] as const)("codex against a local Responses API server, through a gateway URL (%s)", (_how, sandbox) => {
  let installed: Installed;
  let server: OpenAIServer;
  let dir: string;
  let run: { exitCode: number | undefined; stdout: string; stderr: string };

  beforeAll(async () => {
    if (sandbox) {
      const bwrap = await checkBwrap();
      if (!bwrap.ok) {
        installed = { skip: bwrap.message };
        return;
      }
    }
    installed = await installAgent("codex");
    if ("skip" in installed) {
      console.warn(`skipping the real Codex test: ${installed.skip}`);
      return;
    }
    server = await startOpenAIServer({
      apiKey: KEY,
      script: [
        {
          items: [
            { type: "message", text: "I'll fix the reduce and run the tests." },
            // Codex's shell tool for the gpt-5 models (for its newest default model, a JavaScript `exec`).
            { type: "function_call", name: "exec_command", arguments: { cmd: FIX } },
          ],
          usage: { input_tokens: 3000, cached_tokens: 1000, output_tokens: 80 },
        },
        {
          items: [{ type: "message", text: "Fixed: an empty cart totals 0." }],
          usage: { input_tokens: 3500, cached_tokens: 3000, output_tokens: 20 },
        },
      ],
    });
    dir = tempDir("evalgate-codex-");
    cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(dir, "project"), { recursive: true });
    const evalFile = {
      targets: [
        {
          name: "codex",
          provider: "codex",
          bin: installed.bin,
          model: "gpt-5-codex",
          env_passthrough: ["OPENAI_API_KEY", "OPENAI_BASE_URL"],
          timeout: "3m",
          ...(sandbox ? { sandbox } : {}),
        },
      ],
      workspace: { seed: { path: "project" } },
      tests: [
        {
          id: "empty-cart-total",
          instruction: "An empty cart should total 0. Fix it in src/cart.js.",
          scorers: [{ name: "unit", type: "command", run: "node --test test/total.test.js" }],
        },
      ],
    };
    writeFiles(dir, { "codex.eval.yaml": JSON.stringify(evalFile, null, 2) });
    const r = await execa(process.execPath, [CLI, "run", "--out", "out"], {
      cwd: dir,
      env: { ...process.env, CI: "1", OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.url}/v1` },
      reject: false,
      timeout: 240_000,
    });
    run = { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
  }, 600_000);

  afterAll(async () => {
    await server?.close();
  });

  const attempt = () => {
    const row = readJsonl<{ runs: { dir: string }[] }>(path.join(dir, "out/index.jsonl"))[0]!;
    const runDir = path.join(dir, "out", row.runs[0]!.dir);
    return { runDir, result: readJson<Record<string, unknown>>(path.join(runDir, "result.json")) };
  };

  it("edits the workspace through the real agent and passes", (ctx) => {
    if ("skip" in installed) return ctx.skip();
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    const { result, runDir } = attempt();
    expect(result).toMatchObject({ status: "passed", score: 1 });
    expect(readFileSync(path.join(runDir, "diff.patch"), "utf8")).toContain("sum + line, 0);");
  });

  it("reached the gateway URL with the key passed as OPENAI_API_KEY", (ctx) => {
    if ("skip" in installed) return ctx.skip();
    const main = server.mainRequests();
    expect(main.map((r) => r.step)).toEqual([0, 1]);
    expect(main.every((r) => r.headers.authorization === `Bearer ${KEY}` && r.path === "/v1/responses")).toBe(
      true,
    );
  });

  it("records tokens, the CLI's version and a table cost, and never writes the key", (ctx) => {
    if ("skip" in installed) return ctx.skip();
    const { result, runDir } = attempt();
    expect(result.usage).toMatchObject({
      input_tokens: 2500,
      cached_tokens: 4000,
      output_tokens: 100,
      turns: 1,
      model: "gpt-5-codex",
      agent_version: AGENTS.codex.version,
    });
    for (const f of ["result.json", "transcript.jsonl", "agent.log"]) {
      expect(readFileSync(path.join(runDir, f), "utf8"), f).not.toContain(KEY);
    }
  });
});
