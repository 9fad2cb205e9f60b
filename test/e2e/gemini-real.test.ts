/**
 * The real Gemini CLI (npm @google/gemini-cli, pinned in test/agent-cli.ts), run by evalgate's
 * gemini-cli preset configured as the README documents — `env_passthrough: [GEMINI_API_KEY,
 * GOOGLE_GEMINI_BASE_URL]`, the base URL a gateway's — against a local Gemini API server
 * (streamGenerateContent over SSE) on 127.0.0.1 that scripts the fix through its shell tool. Each
 * attempt's workspace is a new folder the CLI has never trusted, and the gateway URL makes it pick
 * an auth mode headless runs reject: the preset handles both.
 */
import { cpSync, readFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { AGENTS, type Installed, installAgent } from "../agent-cli.js";
import { CLI, ROOT, readJson, readJsonl, tempDir, writeFiles } from "../helpers.js";
import { type GeminiServer, startGeminiServer } from "../providers/gemini-server.js";

const KEY = "AIzaSyLocalTestKey0123456789abcdefghijk";
const FIX = "sed -i 's/sum + line);/sum + line, 0);/' src/cart.js && node --test test/total.test.js";

// Directly, and under bubblewrap (the sandbox the default \`auto\` picks where it is installed).
describe.each([
  ["directly", undefined],
  ["under sandbox: bwrap", { type: "bwrap", network: true }],
] as const)("gemini-cli against a local Gemini API server, through a gateway URL (%s)", (_how, sandbox) => {
  let installed: Installed;
  let server: GeminiServer;
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
    installed = await installAgent("gemini-cli");
    if ("skip" in installed) {
      console.warn(`skipping the real Gemini CLI test: ${installed.skip}`);
      return;
    }
    server = await startGeminiServer({
      apiKey: KEY,
      script: [
        {
          parts: [
            { text: "I'll fix the reduce and run the tests." },
            {
              functionCall: {
                name: "run_shell_command",
                args: { command: FIX, description: "fix and test" },
              },
            },
          ],
          usage: { prompt: 3000, cached: 1000, output: 80 },
        },
        {
          parts: [{ text: "Fixed: an empty cart totals 0." }],
          usage: { prompt: 3500, cached: 3000, output: 20 },
        },
      ],
    });
    dir = tempDir("evalgate-gemini-");
    cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(dir, "project"), { recursive: true });
    const evalFile = {
      targets: [
        {
          name: "gemini",
          provider: "gemini-cli",
          bin: installed.bin,
          model: "gemini-2.5-pro",
          env_passthrough: ["GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"],
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
    writeFiles(dir, { "gemini.eval.yaml": JSON.stringify(evalFile, null, 2) });
    const r = await execa(process.execPath, [CLI, "run", "--out", "out"], {
      cwd: dir,
      env: { ...process.env, CI: "1", GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: server.url },
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

  it("reached the gateway URL with the key", (ctx) => {
    if ("skip" in installed) return ctx.skip();
    const main = server.mainRequests();
    expect(main.map((r) => r.step)).toEqual([0, 1]);
    expect(main.every((r) => r.path.startsWith("/v1beta/models/gemini-2.5-pro:streamGenerateContent"))).toBe(
      true,
    );
  });

  it("records tokens, model and the CLI's version, and never writes the key", (ctx) => {
    if ("skip" in installed) return ctx.skip();
    const { result, runDir } = attempt();
    expect(result.usage).toMatchObject({
      model: "gemini-2.5-pro",
      agent_version: AGENTS["gemini-cli"].version,
    });
    expect((result.usage as { output_tokens: number }).output_tokens).toBeGreaterThanOrEqual(100);
    for (const f of ["result.json", "transcript.jsonl", "agent.log"]) {
      expect(readFileSync(path.join(runDir, f), "utf8"), f).not.toContain(KEY);
    }
  });
});
