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
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, type AgentName, type Installed, installAgent } from "../agent-cli.js";
import { busyboxImage, foreignArchImage, testEngine, toolContext } from "../environment/images.js";
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
  target: string;
  verdict: string;
  runs: { dir: string }[];
}

function runDir(out: string, testId: string, target?: string): string {
  const row = readJsonl<Row>(path.join(out, "index.jsonl")).find(
    (r) => r.test_id === testId && (!target || r.target === target),
  );
  expect(row, testId).toBeDefined();
  return path.join(out, row!.runs[0]!.dir);
}

/** The eval file: the case in the image (WORKDIR /app) and the control on the runner. */
function evalFile(target: object | object[], control = true): string {
  const scorers = [
    { name: "tool", type: "command", run: "grep -q 'exam-tool ran: agent' tool.txt" },
    { name: "no-libc", type: "command", run: "grep -qx 0 libc.txt" },
  ];
  return JSON.stringify({
    name: "presets-in-images",
    targets: Array.isArray(target) ? target : [target],
    workspace: { seed: { path: "project" } },
    tests: [
      {
        id: "in-image",
        instruction: "Run exam-tool.",
        environment: { build: { dockerfile: "env/Containerfile" } },
        scorers,
      },
      ...(control ? [{ id: "on-runner", instruction: "Run exam-tool.", scorers }] : []),
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

/** One agent CLI: its scripted model server, its target, and the runner's variables that reach it. */
interface AgentSetup {
  start(): Promise<{ url: string; close(): Promise<void> }>;
  target(bin: string): Record<string, unknown>;
  env(url: string): Record<string, string>;
}

const SETUPS: Record<AgentName, AgentSetup> = {
  "claude-code": {
    start: () =>
      startAnthropicServer({
        apiKey: "sk-ant-local-test-key-0123456789",
        script: [
          {
            blocks: [{ type: "tool_use", name: "Bash", input: { command: TOOL, description: "Run it" } }],
            usage: { input_tokens: 900, output_tokens: 40 },
          },
          { blocks: [{ type: "text", text: "Done." }], usage: { input_tokens: 1000, output_tokens: 5 } },
        ],
      }),
    target: (bin) => ({
      name: "claude",
      provider: "claude-code",
      bin,
      model: "claude-sonnet-4-5-20250929",
      env_passthrough: ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"],
      env: { CLAUDE_CODE_MAX_RETRIES: "0" },
    }),
    env: (url) => ({ ANTHROPIC_API_KEY: "sk-ant-local-test-key-0123456789", ANTHROPIC_BASE_URL: url }),
  },
  codex: {
    start: () =>
      startOpenAIServer({
        apiKey: "sk-proj-local-test-key-0123456789abcdef",
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
      }),
    target: (bin) => ({
      name: "codex",
      provider: "codex",
      bin,
      model: "gpt-5-codex",
      env_passthrough: ["OPENAI_API_KEY", "OPENAI_BASE_URL"],
    }),
    env: (url) => ({
      OPENAI_API_KEY: "sk-proj-local-test-key-0123456789abcdef",
      OPENAI_BASE_URL: `${url}/v1`,
    }),
  },
  "gemini-cli": {
    start: () =>
      startGeminiServer({
        apiKey: "AIzaSyLocalTestKey0123456789abcdefghijk",
        script: [
          {
            parts: [
              { functionCall: { name: "run_shell_command", args: { command: TOOL, description: "run it" } } },
            ],
            usage: { prompt: 3000, cached: 1000, output: 80 },
          },
          { parts: [{ text: "Done." }], usage: { prompt: 3500, cached: 3000, output: 20 } },
        ],
      }),
    target: (bin) => ({
      name: "gemini",
      provider: "gemini-cli",
      bin,
      model: "gemini-2.5-pro",
      env_passthrough: ["GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"],
    }),
    env: (url) => ({
      GEMINI_API_KEY: "AIzaSyLocalTestKey0123456789abcdefghijk",
      GOOGLE_GEMINI_BASE_URL: url,
    }),
  },
};

// On the engine's network, the model server on the runner's loopback reached through the forwarder.
describe.skipIf(!ready).each(["claude-code", "codex", "gemini-cli"] as const)(
  "%s in an environment (real CLI, real engine)",
  (agent) => {
    let installed: Installed;
    let out: string;
    let server: { close(): Promise<void> } | undefined;

    beforeAll(async () => {
      const p = await prepared(agent);
      installed = p.installed;
      if ("skip" in installed) return;
      const setup = SETUPS[agent];
      const s = await setup.start();
      server = s;
      const target = {
        ...setup.target(installed.bin),
        sandbox: { type: "auto", network: true },
        timeout: "3m",
      };
      writeFiles(p.dir, { "p.eval.yaml": evalFile(target) });
      out = (await runEval(p.dir, setup.env(s.url))).out;
    }, 600_000);

    afterAll(async () => {
      await server?.close();
    });

    checksOf(() => ({ out, installed }), agent);
  },
);

/** A TCP relay on the runner's 127.0.0.2 to a server on 127.0.0.1: an address a container cannot reach itself. */
async function relay(to: string): Promise<{ url: string; close(): Promise<void> }> {
  const port = Number(new URL(to).port);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((c) => {
    const up = net.connect(port, "127.0.0.1");
    for (const s of [c, up]) {
      sockets.add(s);
      s.on("error", () => {
        c.destroy();
        up.destroy();
      });
    }
    c.pipe(up);
    up.pipe(c);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.2", r));
  return {
    url: `http://127.0.0.2:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

// Under a network allow-list (an internal network whose one way out is evalgate's proxy): the model
// server on the runner's loopback, listed, is forwarded ("forwarded"); a listed model server the
// container cannot reach itself (the runner's 127.0.0.2) is reached only if the CLI sends its
// requests through HTTP(S)_PROXY ("proxied"); an unlisted one is not reached at all ("unlisted").
describe.skipIf(!ready).each(["claude-code", "codex", "gemini-cli"] as const)(
  "%s in an environment under a network allow-list (real CLI, real engine)",
  (agent) => {
    let installed: Installed;
    let out: string;
    const closers: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      const p = await prepared(agent);
      installed = p.installed;
      if ("skip" in installed) return;
      const setup = SETUPS[agent];
      const s = await setup.start();
      closers.push(s.close);
      const r = await relay(s.url);
      closers.push(r.close);
      const [keyVar, urlVar] = Object.keys(setup.env(s.url)) as [string, string];
      const bin = installed.bin;
      const variant = (name: string, url: string, allow: string, timeout = "2m") => {
        const t = setup.target(bin);
        return {
          ...t,
          name,
          // Retries as by default: a connection through two relays may drop under load.
          env: { [urlVar]: setup.env(url)[urlVar] },
          env_passthrough: [keyVar],
          sandbox: { type: "auto", network: { allow: [allow] } },
          timeout,
        };
      };
      const host = (url: string) => new URL(url).host;
      writeFiles(p.dir, {
        "p.eval.yaml": evalFile(
          [
            variant("forwarded", s.url, host(s.url)),
            variant("proxied", r.url, host(r.url)),
            // gemini-cli retries a refused request until its time limit.
            variant("unlisted", s.url, "127.0.0.1:9", "40s"),
          ],
          false,
        ),
      });
      out = (await runEval(p.dir, setup.env(s.url))).out;
    }, 600_000);

    afterAll(async () => {
      for (const c of closers) await c();
    });

    const result = (target: string) =>
      readJson<{ status: string; message: string | null }>(
        path.join(runDir(out, "in-image", target), "result.json"),
      );

    it(`${agent}: reaches a listed model server on the runner's loopback, through the forwarder`, (ctx) => {
      if ("skip" in installed) return ctx.skip();
      expect([result("forwarded").status, result("forwarded").message]).toEqual(["passed", null]);
    });

    it(`${agent}: reaches a listed model server only through the allow-list proxy`, (ctx) => {
      if ("skip" in installed) return ctx.skip();
      expect([result("proxied").status, result("proxied").message]).toEqual(["passed", null]);
    });

    it(`${agent}: does not reach a model server the allow-list does not name`, (ctx) => {
      // The control: the same target, its server left off the list.
      if ("skip" in installed) return ctx.skip();
      expect(result("unlisted").status).not.toBe("passed");
      // No answer of the model reached it: its tool call never ran. (Through the proxy, claude-code
      // and codex were refused with a 403; gemini-cli sends a loopback URL past the proxy, to the
      // container's own loopback, where nothing listens.)
      const patch = path.join(runDir(out, "in-image", "unlisted"), "diff.patch");
      expect(existsSync(patch) ? readFileSync(patch, "utf8") : "").not.toContain("exam-tool ran");
    });
  },
);

describe.skipIf(!ready)("an agent CLI in an image of another architecture (real engine)", () => {
  it("is refused, as an error of the attempt naming both architectures, and the scorers do not pass it", async (ctx) => {
    // before: the run refused every preset in an environment, whatever the image's architecture.
    const installed = await installAgent("claude-code");
    const foreign = await foreignArchImage(engine!);
    if ("skip" in installed || !foreign) return ctx.skip();
    const dir = tempDir("evalgate-foreign-");
    writeFiles(dir, {
      "project/main.txt": "start\n",
      "p.eval.yaml": JSON.stringify({
        name: "foreign",
        targets: [
          { ...SETUPS["claude-code"].target(installed.bin), sandbox: { type: "auto", network: true } },
        ],
        workspace: { seed: { path: "project" } },
        tests: [
          {
            id: "foreign",
            instruction: "anything",
            environment: { image: foreign.ref },
            scorers: [{ name: "ran", type: "command", run: "true" }],
          },
        ],
      }),
    });
    const { out } = await runEval(dir, SETUPS["claude-code"].env("http://127.0.0.1:9"));
    const r = readJson<{ status: string; message: string | null }>(
      path.join(runDir(out, "foreign"), "result.json"),
    );
    expect(r.status).toBe("error");
    expect(r.message).toContain(
      `is for ${foreign.arch} and the runner is ${process.arch === "arm64" ? "arm64" : "amd64"}`,
    );
    expect(r.message).toContain("cannot run in it");
  }, 300_000);
});
