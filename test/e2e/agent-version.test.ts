/**
 * `version:` on a preset target: evalgate installs that release of the agent CLI from npm once per
 * run into the tool cache (RUNNER_TOOL_CACHE here, kept in node_modules/.cache between test runs),
 * every attempt runs it, the next run reuses it, and a version npm does not have is refused before
 * anything runs. The agent is the real Gemini CLI against the local Gemini API server.
 */
import { cpSync, existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, TOOL_CACHE } from "../agent-cli.js";
import { CLI, ROOT, readJson, readJsonl, tempDir, writeFiles } from "../helpers.js";
import { type GeminiServer, startGeminiServer } from "../providers/gemini-server.js";

const KEY = "AIzaSyLocalTestKey0123456789abcdefghijk";
const VERSION = AGENTS["gemini-cli"].version;

function suite(target: Record<string, unknown>): string {
  const dir = tempDir("evalgate-version-");
  cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(dir, "project"), { recursive: true });
  const evalFile = {
    targets: [
      {
        name: "gemini",
        provider: "gemini-cli",
        model: "gemini-2.5-pro",
        env_passthrough: ["GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"],
        timeout: "3m",
        ...target,
      },
    ],
    repeat: 2,
    workspace: { seed: { path: "project" } },
    tests: [
      { id: "answer", instruction: "Say done.", scorers: [{ name: "ok", type: "command", run: "true" }] },
    ],
  };
  writeFiles(dir, { "v.eval.yaml": JSON.stringify(evalFile, null, 2) });
  return dir;
}

async function evalgate(dir: string, server?: GeminiServer) {
  const r = await execa(process.execPath, [CLI, "run", "--out", "out"], {
    cwd: dir,
    env: {
      ...process.env,
      CI: "1",
      RUNNER_TOOL_CACHE: TOOL_CACHE,
      GEMINI_API_KEY: KEY,
      GOOGLE_GEMINI_BASE_URL: server?.url ?? "http://127.0.0.1:9",
    },
    reject: false,
    timeout: 900_000,
  });
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

describe("version: on a preset target", () => {
  let server: GeminiServer;
  beforeAll(async () => {
    server = await startGeminiServer({
      apiKey: KEY,
      script: [{ parts: [{ text: "done" }], usage: { prompt: 100, output: 5 } }],
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("refuses a version npm does not have, before any attempt, naming the target and the latest", async () => {
    const r = await evalgate(suite({ version: "99.0.0" }));
    expect(r.stderr).toMatch(
      /evalgate: target gemini: version: 99\.0\.0: @google\/gemini-cli@99\.0\.0 does not exist on npm; the latest is \d+\.\d+\.\d+/,
    );
    expect(r.stdout).not.toMatch(/attempt 1\//);
    expect(r.code).toBe(2);
  }, 120_000);

  it("rejects version: with bin:, and on a provider that is not a preset", async () => {
    const both = await evalgate(suite({ version: VERSION, bin: "/usr/bin/true" }));
    expect(both.stderr).toMatch(/version: and bin: both say which program runs/);
    expect(both.code).toBe(2);
    const cmd = await evalgate(suite({ provider: "command", command: "true", version: VERSION }));
    expect(cmd.stderr).toMatch(/provider "command" takes no version/);
    expect(cmd.code).toBe(2);
  }, 120_000);

  it("installs the release once into the tool cache, runs every attempt with it, and reuses it", async () => {
    const first = await evalgate(suite({ version: VERSION }), server);
    expect(first.code, `${first.stdout}\n${first.stderr}`).toBe(0);
    const dir = path.join(TOOL_CACHE, "evalgate", "gemini-cli", VERSION);
    expect(existsSync(path.join(dir, "node_modules", ".bin", "gemini"))).toBe(true);
    // No half-installs left beside it.
    expect(readdirSync(path.dirname(dir)).filter((f) => f.includes(".partial-"))).toEqual([]);

    const again = suite({ version: VERSION });
    const second = await evalgate(again, server);
    expect(second.code, `${second.stdout}\n${second.stderr}`).toBe(0);
    expect(second.stdout).toContain(`gemini-cli ${VERSION}: from the tool cache (${dir})`);
    expect(second.stdout).not.toContain("installing");
    const row = readJsonl<{ runs: { dir: string }[] }>(path.join(again, "out/index.jsonl"))[0]!;
    expect(row.runs).toHaveLength(2);
    for (const run of row.runs) {
      const result = readJson<{ status: string; usage: { agent_version: string } }>(
        path.join(again, "out", run.dir, "result.json"),
      );
      expect(result.status).toBe("passed");
      expect(result.usage.agent_version).toBe(VERSION);
    }
  }, 900_000);
});

describe("a preset whose program is missing, without version:", () => {
  it("is reported once, before any attempt, with the fix", async () => {
    const dir = suite({ bin: undefined, env: {} });
    const r = await execa(process.execPath, [CLI, "run", "--out", "out"], {
      cwd: dir,
      // A PATH without gemini on it.
      env: { ...process.env, CI: "1", PATH: "/usr/bin:/bin", GEMINI_API_KEY: KEY },
      reject: false,
    });
    const warning =
      /warning: target gemini: "gemini" was not found on PATH, so each of its attempts will be an error: install it \(npm install -g @google\/gemini-cli\), or set version: on the target/g;
    expect(r.stderr.match(warning)).toHaveLength(1);
    // Both attempts still ran, and each is an error naming the fix.
    expect(r.stdout.match(/· error ·/g)).toHaveLength(2);
  }, 120_000);
});
