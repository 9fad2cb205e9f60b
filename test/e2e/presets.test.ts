/**
 * The claude-code, codex and gemini-cli presets, run by the real CLI against a fake agent program
 * (test/fixtures/agents/replay-agent.mjs, found on PATH as `claude`, `codex` and `gemini`) that
 * replays recorded event streams: success, errors reported in the stream, truncated and noisy output.
 */
import { cpSync, existsSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT, readJson, readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

const FIXTURES = path.join(ROOT, "test/fixtures/agents");
const PATCH = path.join(ROOT, "examples/quickstart/fixes/empty-cart-total.patch");

interface TargetOptions {
  provider: "claude-code" | "codex" | "gemini-cli";
  stream?: string;
  exit?: number;
  stderr?: string;
  /** Apply the fix before replaying (what the recorded agent changed). */
  patch?: boolean;
  passthrough?: string[];
  model?: string;
  bin?: string;
  args?: string[];
  record?: string;
  sleepMs?: number;
  timeout?: string;
}

function target(name: string, o: TargetOptions) {
  const env: Record<string, string> = { REPLAY_VERSION: "9.8.7" };
  if (o.stream) env.REPLAY_STREAM = path.join(FIXTURES, o.provider, o.stream);
  if (o.exit !== undefined) env.REPLAY_EXIT = String(o.exit);
  if (o.stderr) env.REPLAY_STDERR = o.stderr;
  if (o.patch) env.REPLAY_PATCH = PATCH;
  if (o.record) env.REPLAY_RECORD = o.record;
  if (o.sleepMs) env.REPLAY_SLEEP_MS = String(o.sleepMs);
  const keys = {
    "claude-code": "ANTHROPIC_API_KEY",
    codex: "OPENAI_API_KEY",
    "gemini-cli": "GEMINI_API_KEY",
  };
  return {
    name,
    provider: o.provider,
    env,
    env_passthrough: o.passthrough ?? [keys[o.provider]],
    ...(o.model ? { model: o.model } : {}),
    ...(o.bin ? { bin: o.bin } : {}),
    ...(o.args ? { args: o.args } : {}),
    ...(o.timeout ? { timeout: o.timeout } : {}),
    // The record file lies outside the attempt folder, which the default sandbox keeps the agent
    // from writing (presets under the sandbox: presets-sandbox.test.ts).
    ...(o.record && o.record !== "stderr" ? { sandbox: "none" } : {}),
  };
}

interface Usage {
  input_tokens: number | null;
  output_tokens: number | null;
  cached_tokens: number | null;
  cost_usd: number | null;
  cost_source: string | null;
  turns: number | null;
  tool_calls: number | null;
  model: string | null;
  agent_version: string | null;
}
interface Result {
  status: string;
  failure_stage: string | null;
  failure_kind: string | null;
  message: string | null;
  score: number | null;
  usage: Usage | null;
  agent: { exit_code: number | null; error: string | null; infrastructure: string | null };
  warnings: string[];
  files: { transcript: string | null };
}
interface Entry {
  seq: number;
  source: string | null;
  type: string;
  [k: string]: unknown;
}
interface Row {
  target: string;
  result_dir: string;
  usage: Record<string, number | null> | null;
  runs: { dir: string }[];
}

/** Runs one eval file with the given targets; returns readers for each target's single attempt. */
function runTargets(targets: ReturnType<typeof target>[]) {
  const dir = tempDir("evalgate-presets-");
  const bin = path.join(dir, "bin");
  writeFiles(dir, { "bin/.keep": "" });
  for (const name of ["claude", "codex", "gemini"]) {
    symlinkSync(path.join(FIXTURES, "replay-agent.mjs"), path.join(bin, name));
  }
  cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(dir, "project"), { recursive: true });
  const evalFile = {
    name: "presets",
    targets,
    timeouts: { agent: "60s", scorer: "60s" },
    gate: { min_case_pass_rate: 0 },
    workspace: { seed: { path: "project" } },
    tests: [
      {
        id: "empty-cart-total",
        instruction:
          "total() throws a TypeError when the cart is empty; an empty cart should total 0.\nFix it in src/cart.js.\n",
        scorers: [{ name: "unit", type: "command", run: "node --test test/total.test.js" }],
      },
    ],
  };
  // JSON is YAML: the eval file is written as JSON to keep the paths exact.
  writeFiles(dir, { "presets.eval.yaml": JSON.stringify(evalFile, null, 2) });
  const res = runCli(["run", "--out", "out", "--concurrency", "2"], dir, {
    PATH: `${bin}:${process.env.PATH}`,
    ANTHROPIC_API_KEY: "sk-ant-test-0123456789",
    OPENAI_API_KEY: "sk-openai-test-0123456789",
    GEMINI_API_KEY: "gemini-test-0123456789",
    SECRET_NOT_PASSED: "do-not-leak",
  });
  const out = path.join(dir, "out");
  const rows = existsSync(path.join(out, "index.jsonl")) ? readJsonl<Row>(path.join(out, "index.jsonl")) : [];
  const attempt = (name: string) => {
    const row = rows.find((r) => r.target === name);
    if (!row) throw new Error(`no case for ${name}:\n${res.stdout}\n${res.stderr}`);
    const runDir = path.join(out, row.runs[0]!.dir);
    const result = readJson<Result>(path.join(runDir, "result.json"));
    const transcriptFile = path.join(runDir, "transcript.jsonl");
    const transcript = existsSync(transcriptFile) ? readJsonl<Entry>(transcriptFile) : [];
    return { row, result, transcript, runDir };
  };
  return { dir, out, res, rows, attempt };
}

const kinds = (t: Entry[]) => t.map((e) => e.type);

/** The attempt is an agent error (not a quality failure) whose message holds every part. */
function expectAgentError(result: Result, ...parts: string[]): void {
  expect(result).toMatchObject({ status: "error", failure_stage: "agent", failure_kind: "agent_exit" });
  for (const part of parts) expect(result.message).toContain(part);
}

/**
 * The agent ended badly without evidence of infrastructure trouble: its work was graded, failed,
 * and the failure is counted against it (docs/decisions/0192).
 */
function expectAgentFailure(result: Result, ...parts: string[]): void {
  expect(result).toMatchObject({ status: "failed", failure_stage: "agent", failure_kind: "agent_exit" });
  expect(result.agent.infrastructure).toBeNull();
  for (const part of parts) expect(result.message).toContain(part);
}

describe("claude-code", () => {
  let run: ReturnType<typeof runTargets>;
  let record: string;
  beforeAll(() => {
    record = path.join(tempDir(), "claude-ok.json");
    run = runTargets([
      target("ok", { provider: "claude-code", stream: "success.jsonl", patch: true, record }),
      target("noisy", { provider: "claude-code", stream: "noisy.jsonl", patch: true }),
      target("rate-limit-exit-0", {
        provider: "claude-code",
        stream: "rate-limit.jsonl",
        exit: 0,
        patch: true,
      }),
      target("api-error", { provider: "claude-code", stream: "api-error.jsonl", exit: 1 }),
      target("truncated", { provider: "claude-code", stream: "truncated.jsonl", patch: true }),
      target("no-key", { provider: "claude-code", stream: "success.jsonl", passthrough: [] }),
      target("unset-key", {
        provider: "claude-code",
        stream: "success.jsonl",
        passthrough: ["MY_CLAUDE_KEY"],
      }),
      target("no-binary", { provider: "claude-code", bin: "./agents/claude-missing" }),
    ]);
  }, 180_000);

  it("runs claude -p with stream-json, the task on stdin and only the passed-through variables", () => {
    const got = JSON.parse(readFileSync(record, "utf8")) as { argv: string[]; stdin: string; env: string[] };
    expect(got.argv.slice(0, 4)).toEqual(["-p", "--output-format", "stream-json", "--verbose"]);
    expect(got.argv.join(" ")).toContain("--permission-mode acceptEdits");
    expect(got.argv.join(" ")).toMatch(/--allowedTools Bash,Edit,.*Write/);
    expect(got.stdin).toBe(
      "total() throws a TypeError when the cart is empty; an empty cart should total 0.\nFix it in src/cart.js.\n",
    );
    expect(got.env).toContain("ANTHROPIC_API_KEY");
    expect(got.env).toContain("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC");
    expect(got.env).not.toContain("SECRET_NOT_PASSED");
    expect(got.env).not.toContain("OPENAI_API_KEY");
  });

  it("passes, with usage from the result event (every model it called) and its own cost", () => {
    const { result, transcript, row } = run.attempt("ok");
    expect(result.status).toBe("passed");
    expect(result.usage).toEqual({
      input_tokens: 4040, // sonnet 4010 + haiku 30 (modelUsage)
      output_tokens: 254,
      cached_tokens: 9100,
      cost_usd: 0.01857,
      cost_source: "agent",
      turns: 4,
      tool_calls: 3,
      model: "claude-sonnet-4-5-20250929",
      agent_version: "2.0.76",
    });
    expect(result.files.transcript).toBe("transcript.jsonl");
    expect(kinds(transcript)).toEqual([
      "session",
      "message",
      "tool_call",
      "tool_result",
      "message",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "message",
      "result",
      "end",
    ]);
    expect(transcript.filter((e) => e.type === "tool_call").map((e) => e.name)).toEqual([
      "Read",
      "Edit",
      "Bash",
    ]);
    expect(transcript.find((e) => e.type === "tool_call" && e.name === "Edit")!.input).toMatchObject({
      old_string: "reduce((sum, line) => sum + line);",
    });
    expect(transcript.at(-2)).toMatchObject({
      type: "result",
      status: "success",
      turns: 4,
      source: "result:success",
    });
    expect(transcript.at(-1)).toMatchObject({ type: "end", complete: true, events: 11, unparsed_lines: 0 });
    expect(row.usage).toEqual({
      input_tokens: 4040,
      output_tokens: 254,
      cached_tokens: 9100,
      cost_usd: 0.01857,
      attempts: 1,
      attempts_without_usage: 0,
      agent_versions: ["2.0.76"],
      models: ["claude-sonnet-4-5-20250929"],
    });
  });

  it("skips lines that are not JSON objects and still passes", () => {
    const { result, transcript } = run.attempt("noisy");
    expect(result.status).toBe("passed");
    expect(result.usage?.cost_usd).toBe(0.01857);
    expect(transcript.at(-1)).toMatchObject({ type: "end", complete: true, events: 11, unparsed_lines: 3 });
  });

  it("makes a 429 reported in the result event an error attempt, even with exit status 0", () => {
    const { result, transcript } = run.attempt("rate-limit-exit-0");
    expect(result).toMatchObject({ status: "error", failure_stage: "agent", failure_kind: "agent_exit" });
    expect(result.agent.exit_code).toBe(0);
    expect(result.agent.infrastructure).toBe("the model API answered 429 (rate limit)");
    expect(result.message).toContain("claude-code reported an error: API Error: 429");
    expect(result.message).toContain("rate_limit_error");
    // The fix was applied, but an errored agent never passes: the grading is kept as evidence.
    expect(result.score).toBe(1);
    // The error message is a "<synthetic>" assistant message; the model is still the one that ran.
    expect(result.usage).toMatchObject({
      cost_usd: 0.00006,
      cost_source: "agent",
      input_tokens: 20,
      model: "claude-sonnet-4-5-20250929",
    });
    expect(transcript.filter((e) => e.type === "error")).toEqual([
      expect.objectContaining({ fatal: true, message: expect.stringContaining("429") }),
    ]);
  });

  it("grades the work of an agent whose API answered 400: no infrastructure trouble, its failure", () => {
    // before: `error` (agent_exit), never counted against the agent.
    const { result } = run.attempt("api-error");
    expectAgentFailure(
      result,
      "claude-code reported an error: Prompt is too long; the work it left changed nothing",
    );
  });

  it("keeps what a truncated stream showed, prices it from the table, and grades the work", () => {
    const { result, transcript } = run.attempt("truncated");
    // before: `error`; the stream ending early is no evidence of infrastructure trouble.
    expect(result.status).toBe("passed");
    expect(result.warnings.join("\n")).toContain("exited without its final result event");
    expect(result.score).toBe(1);
    expect(result.usage).toEqual({
      input_tokens: 3200,
      output_tokens: 180,
      cached_tokens: 2400,
      cost_usd: 0.01302, // (3200 × 3 + 2400 × 0.3 + 180 × 15) / 1e6 for claude-sonnet-4-5
      cost_source: "price_table",
      turns: 2,
      tool_calls: 2,
      model: "claude-sonnet-4-5-20250929",
      agent_version: "2.0.76",
    });
    expect(transcript.at(-1)).toMatchObject({ type: "end", complete: false, events: 6, unparsed_lines: 1 });
  });

  it("refuses to start without a credential, naming the variable and the fix", () => {
    const noKey = run.attempt("no-key").result;
    expectAgentError(noKey, "add ANTHROPIC_API_KEY", "env_passthrough");
    const unset = run.attempt("unset-key").result;
    expect(unset.message).toContain("needs a credential");
    expect(run.attempt("no-key").row.usage).toMatchObject({ attempts: 0, attempts_without_usage: 1 });
  });

  it("names a missing program", () => {
    const { result } = run.attempt("no-binary");
    expectAgentError(result, "claude-missing", "bin:");
  });

  it("rolls usage up per target and per run", () => {
    const summary = readJson<{ usage: Record<string, number>; targets: { name: string; usage: unknown }[] }>(
      path.join(run.out, "summary.json"),
    );
    // ok + noisy + rate-limit + api-error + truncated report usage; no-key, unset-key and no-binary do not.
    expect(summary.usage).toMatchObject({ attempts: 5, attempts_without_usage: 3 });
    expect(summary.usage.cost_usd).toBeCloseTo(0.01857 * 2 + 0.00006 * 2 + 0.01302, 9);
    expect(summary.targets.find((t) => t.name === "ok")!.usage).toEqual(run.attempt("ok").row.usage);
  });
});

describe("codex", () => {
  let run: ReturnType<typeof runTargets>;
  let record: string;
  let ownRecord: string;
  beforeAll(() => {
    record = path.join(tempDir(), "codex-ok.json");
    ownRecord = path.join(tempDir(), "codex-own.json");
    run = runTargets([
      target("ok", { provider: "codex", stream: "success.jsonl", patch: true, model: "gpt-5-codex", record }),
      target("recovered", { provider: "codex", stream: "recovered.jsonl", patch: true }),
      target("rate-limit", { provider: "codex", stream: "rate-limit.jsonl", exit: 1 }),
      target("truncated", {
        provider: "codex",
        stream: "truncated.jsonl",
        patch: true,
        model: "gpt-5-codex",
      }),
      target("own-sandbox", {
        provider: "codex",
        stream: "success.jsonl",
        patch: true,
        args: ["--sandbox", "danger-full-access"],
        record: ownRecord,
      }),
    ]);
  }, 180_000);

  it("runs codex exec --json with the prompt on stdin (the last argument is -)", () => {
    const got = JSON.parse(readFileSync(record, "utf8")) as { argv: string[]; stdin: string };
    expect(got.argv).toEqual([
      "exec",
      "--json",
      "--color",
      "never",
      "--model",
      "gpt-5-codex",
      "--sandbox",
      "workspace-write",
      "-",
    ]);
    expect(got.stdin).toContain("Fix it in src/cart.js.");
  });

  it("keeps a target's own sandbox flag instead of the default", () => {
    expect(run.attempt("own-sandbox").result.status).toBe("passed");
    const rec = JSON.parse(readFileSync(ownRecord, "utf8")) as { argv: string[] };
    expect(rec.argv).toEqual(["exec", "--json", "--color", "never", "--sandbox", "danger-full-access", "-"]);
  });

  it("passes, with tokens from turn.completed (cached split out), the version and a table cost", () => {
    const { result, transcript } = run.attempt("ok");
    expect(result.status).toBe("passed");
    expect(result.usage).toEqual({
      input_tokens: 315, // 24763 - 24448 cached
      output_tokens: 1122,
      cached_tokens: 24448,
      cost_usd: 0.01466975, // (315 × 1.25 + 24448 × 0.125 + 1122 × 10) / 1e6 for gpt-5-codex
      cost_source: "price_table",
      turns: 1,
      tool_calls: 3,
      model: "gpt-5-codex",
      agent_version: "9.8.7",
    });
    expect(kinds(transcript)).toEqual([
      "session",
      "reasoning",
      "tool_call",
      "tool_result",
      "reasoning",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "message",
      "result",
      "end",
    ]);
    expect(transcript.find((e) => e.type === "tool_call")).toMatchObject({
      name: "shell",
      input: { command: "bash -lc 'cat src/cart.js'" },
      source: "item.started:command_execution",
    });
    expect(transcript.find((e) => e.type === "tool_result" && e.id === "item_3")).toMatchObject({
      output: "update /home/runner/work/shop/shop/src/cart.js",
      is_error: false,
    });
  });

  it("leaves the cost unknown when no model is known", () => {
    const { result } = run.attempt("recovered");
    expect(result.status).toBe("passed");
    expect(result.usage).toMatchObject({ input_tokens: 315, cost_usd: null, cost_source: null, model: null });
  });

  it("makes a turn.failed on a 429 an error with codex's message, ignoring the retries before it", () => {
    const { result, transcript } = run.attempt("rate-limit");
    expectAgentError(result);
    expect(result.message).toBe(
      "codex reported an error: exceeded retry limit, last status: 429 Too Many Requests, request id: req_7f3a (the model API answered 429 (rate limit))",
    );
    expect(result.usage).toMatchObject({ input_tokens: null, turns: 1 });
    expect(transcript.filter((e) => e.type === "error").map((e) => e.fatal)).toEqual([false, false, true]);
    expect(run.attempt("rate-limit").row.usage).toMatchObject({ attempts: 0, attempts_without_usage: 1 });
  });

  it("grades the work of a stream cut off before turn.completed", () => {
    const { result, transcript } = run.attempt("truncated");
    expect(result.status).toBe("passed");
    expect(result.warnings.join("\n")).toContain("exited without its final result event");
    expect(result.usage).toMatchObject({ input_tokens: null, cost_usd: null, tool_calls: 1 });
    expect(transcript.at(-1)).toMatchObject({ type: "end", complete: false, unparsed_lines: 1 });
  });
});

describe("gemini-cli", () => {
  let run: ReturnType<typeof runTargets>;
  let record: string;
  beforeAll(() => {
    record = path.join(tempDir(), "gemini-ok.json");
    run = runTargets([
      target("ok", { provider: "gemini-cli", stream: "success.jsonl", patch: true, record }),
      target("api-error", {
        provider: "gemini-cli",
        stream: "api-error.jsonl",
        exit: 1,
        stderr: "[API Error: You exceeded your current quota, please check your plan and billing details.]",
      }),
      target("error-result", { provider: "gemini-cli", stream: "error-result.jsonl", exit: 0, patch: true }),
      target("truncated", { provider: "gemini-cli", stream: "truncated.jsonl", patch: true }),
      target("slow", { provider: "gemini-cli", stream: "truncated.jsonl", sleepMs: 60_000, timeout: "2s" }),
    ]);
  }, 180_000);

  it("runs gemini with stream-json and --yolo, the task on stdin", () => {
    const got = JSON.parse(readFileSync(record, "utf8")) as { argv: string[]; stdin: string };
    expect(got.argv).toEqual(["--output-format", "stream-json", "--yolo"]);
    expect(got.stdin).toContain("Fix it in src/cart.js.");
  });

  it("passes, joining streamed text, with stats from the result event and a table cost", () => {
    const { result, transcript } = run.attempt("ok");
    expect(result.status).toBe("passed");
    expect(result.usage).toEqual({
      input_tokens: 6210,
      output_tokens: 380,
      cached_tokens: 9000,
      cost_usd: 0.0126875, // (6210 × 1.25 + 9000 × 0.125 + 380 × 10) / 1e6 for gemini-2.5-pro
      cost_source: "price_table",
      turns: 4,
      tool_calls: 3,
      model: "gemini-2.5-pro",
      agent_version: "9.8.7",
    });
    expect(transcript.find((e) => e.type === "message" && e.role === "assistant")).toMatchObject({
      text: "I'll read `src/cart.js` to see how the total is computed.",
    });
    expect(transcript.filter((e) => e.type === "tool_call").map((e) => e.name)).toEqual([
      "read_file",
      "replace",
      "run_shell_command",
    ]);
  });

  it("reports a fatal quota error (on stderr) with the exit status and the agent's last words", () => {
    const { result } = run.attempt("api-error");
    expectAgentError(result, "status 1", "You exceeded your current quota", "(the model API answered 429");
  });

  it("grades the work of a result with status error that is no API trouble (the model's own answer)", () => {
    // before: `error` (agent_exit); an empty or malformed answer is the model's, so the agent's.
    const { result } = run.attempt("error-result");
    expect(result.status).toBe("passed");
    expect(result.warnings.join("\n")).toContain(
      "gemini-cli reported an error: Invalid stream: The model returned an empty response or malformed tool call., but the work it left passed the scorers",
    );
    expect(result.usage).toMatchObject({ input_tokens: 5200, output_tokens: 30 });
  });

  it("grades a truncated stream and keeps the transcript so far", () => {
    const { result, transcript } = run.attempt("truncated");
    expect(result.status).toBe("passed");
    expect(transcript.filter((e) => e.type === "tool_call").map((e) => e.name)).toEqual([
      "read_file",
      "replace",
    ]);
    expect(result.usage).toMatchObject({ input_tokens: null, tool_calls: 2 });
  });

  it("keeps the transcript of an agent stopped at its time limit, and counts the timeout against it", () => {
    const { result, transcript } = run.attempt("slow");
    // before: `timeout`, never counted; it was waiting for the model, but no API error was seen.
    expect(result).toMatchObject({ status: "failed", failure_kind: "agent_timeout" });
    // What it was doing: its last event was a tool's result, so the model's answer was pending.
    const activity =
      /its last event, \d+ s before it was stopped, was a tool's result: it was waiting for the model's answer/;
    expect((result.agent as unknown as { activity: string }).activity).toMatch(activity);
    expect(result.message).toMatch(activity);
    expect(transcript.at(-1)).toMatchObject({
      type: "end",
      complete: false,
      note: "the agent was stopped at its time limit",
    });
  });
});
