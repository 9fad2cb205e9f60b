/**
 * The real Claude Code CLI, installed from npm, run by evalgate's claude-code preset against a local
 * Anthropic Messages API server on 127.0.0.1 that scripts a tool-using conversation (Read, Edit,
 * Bash). The agent really edits the workspace; the attempt passes its scorer and its tokens and cost
 * reach the bundle. Then the same agent under `sandbox: { type: bwrap, network: true }`.
 */
import { cpSync, readFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { CLAUDE_CODE_VERSION, type Installed, installClaudeCode } from "../agent-cli.js";
import { CLI, ROOT, readJson, readJsonl, tempDir, writeFiles } from "../helpers.js";
import { type AnthropicServer, type Step, startAnthropicServer } from "../providers/anthropic-server.js";

const KEY = "sk-ant-local-test-key-0123456789";
const MODEL = "claude-sonnet-4-5-20250929";
const usage = (input: number, output: number, cached = 0) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cached,
});

/** The scripted turns that read and fix src/cart.js, with some text before the tool calls. */
const readCart =
  (text?: string): Step =>
  ({ cwd }) => ({
    blocks: [
      ...(text ? [{ type: "text" as const, text }] : []),
      { type: "tool_use", name: "Read", input: { file_path: `${cwd}/src/cart.js` } },
    ],
    usage: usage(2400, 60),
  });
const editCart =
  (text?: string): Step =>
  ({ cwd }) => ({
    blocks: [
      ...(text ? [{ type: "text" as const, text }] : []),
      {
        type: "tool_use",
        name: "Edit",
        input: {
          file_path: `${cwd}/src/cart.js`,
          old_string: "reduce((sum, line) => sum + line);",
          new_string: "reduce((sum, line) => sum + line, 0);",
        },
      },
    ],
    usage: usage(800, 120, 2400),
  });

/** The claude-code target for the installed CLI, talking to the local server. */
const claudeTarget = (name: string, bin: string, extra: object = {}) => ({
  name,
  provider: "claude-code",
  bin,
  model: MODEL,
  env_passthrough: ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"],
  env: { CLAUDE_CODE_MAX_RETRIES: "0" },
  timeout: "3m",
  ...extra,
});

interface Run {
  dir: string;
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
}

/** `evalgate run` on one test of the quickstart's cart, with the model server's URL passed in. */
async function runOnCart(target: object, test: object, server: AnthropicServer): Promise<Run> {
  const dir = tempDir("evalgate-claude-");
  cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(dir, "project"), { recursive: true });
  const evalFile = { targets: [target], workspace: { seed: { path: "project" } }, tests: [test] };
  writeFiles(dir, { "claude.eval.yaml": JSON.stringify(evalFile, null, 2) });
  // Not spawnSync: the model server runs in this process and must keep answering.
  const r = await execa(process.execPath, [CLI, "run", "--out", "out"], {
    cwd: dir,
    env: { ...process.env, CI: "1", ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
    reject: false,
    timeout: 240_000,
  });
  return { dir, exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** The run's one attempt: its index row, its folder and its result.json. */
function attemptOf(run: Run) {
  const row = readJsonl<{ usage: unknown; runs: { dir: string }[] }>(
    path.join(run.dir, "out/index.jsonl"),
  )[0]!;
  const runDir = path.join(run.dir, "out", row.runs[0]!.dir);
  return { row, runDir, result: readJson<Record<string, unknown>>(path.join(runDir, "result.json")) };
}

describe("claude-code against a local model server", () => {
  let installed: Installed;
  let server: AnthropicServer;
  let run: Run;

  beforeAll(async () => {
    installed = await installClaudeCode();
    if ("skip" in installed) {
      console.warn(`skipping the real Claude Code test: ${installed.skip}`);
      return;
    }
    server = await startAnthropicServer({
      apiKey: KEY,
      script: [
        readCart("Let me look at the cart."),
        editCart("reduce() has no initial value, so an empty cart throws."),
        {
          blocks: [
            {
              type: "tool_use",
              name: "Bash",
              input: { command: "node --test test/total.test.js", description: "Run the cart tests" },
            },
          ],
          usage: usage(300, 40, 3200),
        },
        { blocks: [{ type: "text", text: "Fixed: an empty cart totals 0." }], usage: usage(500, 30, 3500) },
      ],
    });
    run = await runOnCart(
      claudeTarget("claude", installed.bin),
      {
        id: "empty-cart-total",
        instruction:
          "total() throws a TypeError when the cart is empty; an empty cart should total 0. Fix it in src/cart.js.",
        scorers: [
          { name: "unit", type: "command", run: "node --test test/total.test.js", weight: 0.8 },
          { name: "small", type: "diff", allow: ["src/**"], require_change: true, weight: 0.2 },
        ],
      },
      server,
    );
  }, 420_000);

  afterAll(async () => {
    await server?.close();
  });

  const attempt = () => attemptOf(run);

  it("edits the workspace through the real agent and passes the scorers", (ctx) => {
    if ("skip" in installed) return ctx.skip();
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    const { result, runDir } = attempt();
    expect(result).toMatchObject({ status: "passed", score: 1 });
    expect(readFileSync(path.join(runDir, "diff.patch"), "utf8")).toContain(
      "+  return items.map((item) => item.price * item.quantity).reduce((sum, line) => sum + line, 0);",
    );
    // The conversation really went through the local server with the passed-through key.
    const main = server.mainRequests();
    expect(main.map((r) => r.step)).toEqual([0, 1, 2, 3]);
    expect(main.every((r) => r.headers["x-api-key"] === KEY && r.body?.stream === true)).toBe(true);
    expect(JSON.stringify(main[1]!.body?.messages)).toContain("tool_result");
  });

  it("records the agent's tokens, cost, turns and version in the bundle", (ctx) => {
    if ("skip" in installed) return ctx.skip();
    const { result, row } = attempt();
    const u = result.usage as Record<string, number | string | null>;
    // The scripted turns: 4000 uncached input, 9100 cached, 250 output; Claude Code's side requests
    // (warm-ups, command checks) add a few more, which it also counts.
    expect(u.cached_tokens).toBe(9100);
    expect(u.input_tokens).toBeGreaterThanOrEqual(4000);
    expect(u.output_tokens).toBeGreaterThanOrEqual(250);
    expect(u).toMatchObject({
      cost_source: "agent",
      turns: 4,
      tool_calls: 3,
      model: MODEL,
      agent_version: CLAUDE_CODE_VERSION,
    });
    expect(u.cost_usd).toBeGreaterThan(0.018);
    expect(row.usage).toMatchObject({
      input_tokens: u.input_tokens,
      output_tokens: u.output_tokens,
      cached_tokens: 9100,
      cost_usd: u.cost_usd,
      attempts: 1,
      attempts_without_usage: 0,
    });
    const summary = readJson<{ usage: unknown }>(path.join(run.dir, "out/summary.json"));
    expect(summary.usage).toEqual(row.usage);
  });

  it("writes the conversation to transcript.jsonl", (ctx) => {
    if ("skip" in installed) return ctx.skip();
    const { runDir } = attempt();
    const t = readJsonl<{ type: string; name?: string; is_error?: boolean; output?: string }>(
      path.join(runDir, "transcript.jsonl"),
    );
    expect(t.filter((e) => e.type === "tool_call").map((e) => e.name)).toEqual(["Read", "Edit", "Bash"]);
    const results = t.filter((e) => e.type === "tool_result");
    expect(results.map((e) => e.is_error)).toEqual([false, false, false]);
    expect(results[2]!.output).toContain("# pass 2");
    expect(t.at(-1)).toMatchObject({ type: "end", complete: true, unparsed_lines: 0 });
  });
});

describe("claude-code under sandbox: bwrap against a local model server", () => {
  let installed: Installed;
  let skip: string | undefined;
  let server: AnthropicServer;
  let run: Run;

  beforeAll(async () => {
    const bwrap = await checkBwrap();
    installed = await installClaudeCode();
    skip = "skip" in installed ? installed.skip : bwrap.ok ? undefined : bwrap.message;
    if (skip) {
      console.warn(`skipping the real Claude Code test under bwrap: ${skip}`);
      return;
    }
    server = await startAnthropicServer({
      apiKey: KEY,
      script: [
        readCart(),
        editCart(),
        { blocks: [{ type: "text", text: "Fixed." }], usage: usage(500, 30, 3200) },
      ],
    });
    run = await runOnCart(
      claudeTarget("claude-boxed", (installed as { bin: string }).bin, {
        sandbox: { type: "bwrap", network: true },
      }),
      {
        id: "empty-cart-total",
        instruction: "An empty cart should total 0. Fix it in src/cart.js.",
        scorers: [{ name: "unit", type: "command", run: "node --test test/total.test.js" }],
      },
      server,
    );
  }, 420_000);

  afterAll(async () => {
    await server?.close();
  });

  it("edits the workspace from inside the sandbox and records its usage", (ctx) => {
    if (skip) return ctx.skip();
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    const { result, runDir } = attemptOf(run);
    expect(result).toMatchObject({ status: "passed", score: 1 });
    expect(result.usage).toMatchObject({
      cached_tokens: 5600,
      turns: 3,
      tool_calls: 2,
      cost_source: "agent",
    });
    expect(readFileSync(path.join(runDir, "diff.patch"), "utf8")).toContain("sum + line, 0);");
    expect(server.mainRequests().map((r) => r.step)).toEqual([0, 1, 2]);
  });
});

describe("claude-code out of turns (2.1.x exits 1 on --max-turns)", () => {
  let installed: Installed;
  let server: AnthropicServer;
  let run: Run;

  beforeAll(async () => {
    installed = await installClaudeCode();
    if ("skip" in installed) return;
    server = await startAnthropicServer({
      apiKey: KEY,
      // The fix lands in turn 2; the model still wants to run a command when its turns run out.
      script: [
        readCart(),
        editCart(),
        {
          blocks: [
            { type: "tool_use", name: "Bash", input: { command: "node --test", description: "Test" } },
          ],
          usage: usage(300, 40, 3200),
        },
        { blocks: [{ type: "text", text: "Done." }], usage: usage(100, 10) },
      ],
    });
    run = await runOnCart(
      claudeTarget("claude-turns", installed.bin, { args: ["--max-turns", "2"] }),
      {
        id: "empty-cart-total",
        instruction: "An empty cart should total 0. Fix it in src/cart.js.",
        scorers: [{ name: "unit", type: "command", run: "node --test test/total.test.js" }],
      },
      server,
    );
  }, 420_000);

  afterAll(async () => {
    await server?.close();
  });

  it("scores the work as the agent's outcome, and the record says it ran out of turns", (ctx) => {
    if ("skip" in installed) return ctx.skip();
    const { result } = attemptOf(run);
    const agent = result.agent as Record<string, unknown>;
    expect(agent.exit_code).toBe(1);
    expect(agent.error).toBeNull();
    expect(agent.stopped).toMatch(/error_max_turns/);
    expect(result).toMatchObject({ status: "passed", score: 1 });
    expect((result.warnings as string[]).join("\n")).toMatch(
      /claude-code stopped: .*error_max_turns.*\(exit status 1\); that is the agent's outcome/,
    );
    expect(run.exitCode, run.stdout).toBe(0);
  });
});
