/**
 * The agent CLI presets in a case's environment (issue 30 point 2, docs/decisions/0216 and 0217):
 * the real CLI of the runner's, mounted read-only at /evalgate/agent with its own loader and
 * libraries, runs in the busybox test image (no libc, no node), reaches its scripted model server on
 * the runner's loopback through evalgate's forwarder, and its tool's shell command runs in the
 * image: it finds `exam-tool` (a program only the image has) and no libc under /lib. The runner's
 * other variables (a GITHUB_TOKEN, a canary) never reach the agent.
 *
 * Before: `evalgate run` refused each of these cases ("cannot run in an environment yet"), so no
 * attempt ran and every assertion on the bundle failed. The control runs the same target on the
 * runner (no environment): there `exam-tool` does not exist, and the case fails.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, type AgentName, type Installed, installAgent } from "../agent-cli.js";
import { busyboxImage, testEngine, toolContext } from "../environment/images.js";
import { readJson, readJsonl, runCliAsync, tempDir, writeFiles } from "../helpers.js";
import { startAnthropicServer } from "../providers/anthropic-server.js";
import { startGeminiServer } from "../providers/gemini-server.js";
import { startOpenAIServer } from "../providers/openai-server.js";

const { engine } = await testEngine();
const BASH_STATIC = "/bin/bash-static";
if (engine && !existsSync(BASH_STATIC)) {
  const why = "bash-static is not installed (apt-get install bash-static)";
  if (process.env.EVALGATE_REQUIRE_CONTAINERS === "1") throw new Error(why);
  console.warn(`skipping the agent CLIs in images: ${why}`);
}
const ready = engine && existsSync(BASH_STATIC);

const CANARY = "canary-secret-of-the-runner-0123456789";
const GITHUB_TOKEN = "ghs_runnerTokenThatMustNotLeak0123456789";

/** What the agent's tool runs in the image: the image's program, its view of /lib, its environment. */
const TOOL = [
  "exam-tool agent > tool.txt",
  "pwd > pwd.txt",
  "(ls /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 /usr/lib/libc.so.6 2>/dev/null | wc -l) > libc.txt",
  "env > env.txt",
].join("; ");

interface Row {
  test_id: string;
  verdict: string;
  runs: { dir: string }[];
}

function runDir(out: string, testId: string): string {
  const row = readJsonl<Row>(path.join(out, "index.jsonl")).find((r) => r.test_id === testId);
  expect(row, testId).toBeDefined();
  return path.join(out, row!.runs[0]!.dir);
}

/** The eval file: the case in the image (WORKDIR /app) and the control on the runner. */
function evalFile(target: object): string {
  const scorers = [
    { name: "tool", type: "command", run: "grep -q 'exam-tool ran: agent' tool.txt" },
    { name: "no-libc", type: "command", run: "grep -qx 0 libc.txt" },
  ];
  return JSON.stringify({
    name: "presets-in-images",
    targets: [target],
    workspace: { seed: { path: "project" } },
    tests: [
      {
        id: "in-image",
        instruction: "Run exam-tool.",
        environment: { build: { dockerfile: "env/Containerfile" } },
        scorers,
      },
      { id: "on-runner", instruction: "Run exam-tool.", scorers },
    ],
  });
}

async function runEval(dir: string, env: Record<string, string>) {
  const out = path.join(dir, "out");
  const r = await runCliAsync(
    ["run", ".", "--out", out, "--work-dir", path.join(dir, "work")],
    dir,
    { ...env, GITHUB_TOKEN, EVALGATE_TEST_CANARY: CANARY },
    480_000,
  );
  if (!r.stdout.includes("index.jsonl")) console.error(r.stdout, r.stderr);
  return { out, ...r };
}

async function prepared(name: AgentName): Promise<{ installed: Installed; dir: string }> {
  const installed = await installAgent(name);
  const dir = tempDir(`evalgate-${name}-img-`);
  mkdirSync(path.join(dir, "env"), { recursive: true });
  const ctx = toolContext(await busyboxImage(engine!), path.join(dir, "env"));
  // Claude Code's Bash tool wants bash or zsh: a static bash (Debian's bash-static), no libc needed.
  copyFileSync(BASH_STATIC, path.join(ctx, "bash"));
  const file = path.join(ctx, "Containerfile");
  writeFiles(ctx, {
    Containerfile: readFileSync(file, "utf8").replace(
      "WORKDIR /app",
      "COPY bash /bin/bash\nRUN chmod 755 /bin/bash\nWORKDIR /app",
    ),
  });
  writeFiles(dir, { "project/main.txt": "start\n" });
  return { installed, dir };
}

/** The checks every CLI's run must pass, on its bundle. */
function checksOf(get: () => { out: string; installed: Installed }, agent: AgentName) {
  it(`${agent}: the attempt in the image passes, its tool command having run in the image`, (ctx) => {
    const { out, installed } = get();
    if ("skip" in installed) return ctx.skip();
    const r = readJson<{ status: string; message: string | null; environment?: object }>(
      path.join(runDir(out, "in-image"), "result.json"),
    );
    const run = runDir(out, "in-image");
    const evidence = () =>
      ["diff.patch", "transcript.jsonl", "agent.log"]
        .map((f) => readFileSync(path.join(run, f), "utf8").slice(-4000))
        .join("\n");
    expect([r.status, r.message], evidence()).toEqual(["passed", null]);
    expect(r.environment).toMatchObject({ workdir: "/app", engine: engine!.kind });
    const patch = readFileSync(path.join(runDir(out, "in-image"), "diff.patch"), "utf8");
    expect(patch).toMatch(/\+exam-tool ran: agent/);
    expect(patch).toMatch(/\+\/app\n/);
  });

  it(`${agent}: the control on the runner fails (no exam-tool there)`, (ctx) => {
    const { out, installed } = get();
    if ("skip" in installed) return ctx.skip();
    const r = readJson<{ status: string }>(path.join(runDir(out, "on-runner"), "result.json"));
    expect(r.status).toBe("failed");
  });

  it(`${agent}: records the transcript and usage as on the runner`, (ctx) => {
    const { out, installed } = get();
    if ("skip" in installed) return ctx.skip();
    const run = runDir(out, "in-image");
    const r = readJson<{ usage: Record<string, unknown> }>(path.join(run, "result.json"));
    expect(r.usage).toMatchObject({ agent_version: AGENTS[agent].version });
    expect(r.usage.input_tokens).toBeGreaterThan(0);
    const transcript = readJsonl<{ type: string }>(path.join(run, "transcript.jsonl"));
    expect(transcript.map((e) => e.type)).toEqual(expect.arrayContaining(["tool_call", "tool_result"]));
  });

  it(`${agent}: shows the agent none of the runner's other variables`, (ctx) => {
    // An attacker's check: the agent's tool dumped its whole environment into the workspace.
    const { out, installed } = get();
    if ("skip" in installed) return ctx.skip();
    const patch = readFileSync(path.join(runDir(out, "in-image"), "diff.patch"), "utf8");
    expect(patch).toMatch(/\+\S*=/);
    expect(patch).not.toContain(GITHUB_TOKEN);
    expect(patch).not.toContain(CANARY);
    expect(patch).not.toMatch(/GITHUB_TOKEN|EVALGATE_TEST_CANARY/);
  });
}

describe.skipIf(!ready)("claude-code in an environment (real CLI, real engine)", () => {
  const KEY = "sk-ant-local-test-key-0123456789";
  let installed: Installed;
  let out: string;
  let server: Awaited<ReturnType<typeof startAnthropicServer>> | undefined;

  beforeAll(async () => {
    const p = await prepared("claude-code");
    installed = p.installed;
    if ("skip" in installed) return;
    server = await startAnthropicServer({
      apiKey: KEY,
      script: [
        {
          blocks: [{ type: "tool_use", name: "Bash", input: { command: TOOL, description: "Run it" } }],
          usage: { input_tokens: 900, output_tokens: 40 },
        },
        { blocks: [{ type: "text", text: "Done." }], usage: { input_tokens: 1000, output_tokens: 5 } },
      ],
    });
    writeFiles(p.dir, {
      "p.eval.yaml": evalFile({
        name: "claude",
        provider: "claude-code",
        bin: installed.bin,
        model: "claude-sonnet-4-5-20250929",
        env_passthrough: ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"],
        env: { CLAUDE_CODE_MAX_RETRIES: "0" },
        sandbox: { type: "auto", network: true },
        timeout: "3m",
      }),
    });
    out = (await runEval(p.dir, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url })).out;
  }, 600_000);

  afterAll(async () => {
    await server?.close();
  });

  checksOf(() => ({ out, installed }), "claude-code");
});

describe.skipIf(!ready)("codex in an environment (real CLI, real engine)", () => {
  const KEY = "sk-proj-local-test-key-0123456789abcdef";
  let installed: Installed;
  let out: string;
  let server: Awaited<ReturnType<typeof startOpenAIServer>> | undefined;

  beforeAll(async () => {
    const p = await prepared("codex");
    installed = p.installed;
    if ("skip" in installed) return;
    server = await startOpenAIServer({
      apiKey: KEY,
      script: [
        {
          items: [{ type: "function_call", name: "exec_command", arguments: { cmd: TOOL } }],
          usage: { input_tokens: 3000, cached_tokens: 1000, output_tokens: 80 },
        },
        {
          items: [{ type: "message", text: "Done." }],
          usage: { input_tokens: 3500, cached_tokens: 3000, output_tokens: 20 },
        },
      ],
    });
    writeFiles(p.dir, {
      "p.eval.yaml": evalFile({
        name: "codex",
        provider: "codex",
        bin: installed.bin,
        model: "gpt-5-codex",
        env_passthrough: ["OPENAI_API_KEY", "OPENAI_BASE_URL"],
        sandbox: { type: "auto", network: true },
        timeout: "3m",
      }),
    });
    out = (await runEval(p.dir, { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.url}/v1` })).out;
  }, 600_000);

  afterAll(async () => {
    await server?.close();
  });

  checksOf(() => ({ out, installed }), "codex");
});

describe.skipIf(!ready)("gemini-cli in an environment (real CLI, real engine)", () => {
  const KEY = "AIzaSyLocalTestKey0123456789abcdefghijk";
  let installed: Installed;
  let out: string;
  let server: Awaited<ReturnType<typeof startGeminiServer>> | undefined;

  beforeAll(async () => {
    const p = await prepared("gemini-cli");
    installed = p.installed;
    if ("skip" in installed) return;
    server = await startGeminiServer({
      apiKey: KEY,
      script: [
        {
          parts: [
            { functionCall: { name: "run_shell_command", args: { command: TOOL, description: "run it" } } },
          ],
          usage: { prompt: 3000, cached: 1000, output: 80 },
        },
        { parts: [{ text: "Done." }], usage: { prompt: 3500, cached: 3000, output: 20 } },
      ],
    });
    writeFiles(p.dir, {
      "p.eval.yaml": evalFile({
        name: "gemini",
        provider: "gemini-cli",
        bin: installed.bin,
        model: "gemini-2.5-pro",
        env_passthrough: ["GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"],
        sandbox: { type: "auto", network: true },
        timeout: "3m",
      }),
    });
    out = (await runEval(p.dir, { GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: server.url })).out;
  }, 600_000);

  afterAll(async () => {
    await server?.close();
  });

  checksOf(() => ({ out, installed }), "gemini-cli");
});
