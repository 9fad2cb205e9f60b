import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { llmJudgeScorer, retryAfterMs } from "../../src/scorers/llm-judge.js";
import { diffForPrompt, judgeMessages, parseVerdict } from "../../src/scorers/llm-judge-prompt.js";
import { tempDir } from "../helpers.js";
import { scorerContext } from "./context.js";
import { type OpenAIServer, type Reply, startOpenAIServer } from "./openai-server.js";

const KEY = "sk-test-0123456789abcdef";
const KEY_ENV = "EVALGATE_TEST_JUDGE_KEY";
const FILES = { "src/cart.js": "export const total = (items) => items.reduce((a, i) => a + i.price);\n" };
const FIX = { "src/cart.js": "export const total = (items) => items.reduce((a, i) => a + i.price, 0);\n" };
const INSTRUCTION = "total() throws on an empty cart; it should return 0.";

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  delete process.env[KEY_ENV];
});

async function judge(script: Reply[], options: Record<string, unknown> = {}, timeoutMs = 30_000) {
  server = await startOpenAIServer({ apiKey: KEY, script });
  process.env[KEY_ENV] = KEY;
  const ctx = await scorerContext({
    files: FILES,
    change: FIX,
    instruction: INSTRUCTION,
    timeoutMs,
    options: {
      type: "llm-judge",
      rubric: "The fix gives reduce an initial value instead of special-casing empty carts.",
      model: "judge-1",
      base_url: server.url,
      api_key_env: KEY_ENV,
      ...options,
    },
  });
  const started = performance.now();
  const result = await llmJudgeScorer.run(ctx);
  return { result, ctx, ms: performance.now() - started, requests: server.requests };
}

const verdict = (v: unknown): Reply => ({ content: JSON.stringify(v) });

describe("the llm-judge scorer against a local chat-completions server", () => {
  it("passes on a passing verdict, and records tokens and cost", async () => {
    const { result, requests, ctx } = await judge(
      [
        {
          content: '{"score": 0.9, "pass": true, "reason": "Initial value added; no special case."}',
          usage: { prompt_tokens: 1200, completion_tokens: 30 },
        },
      ],
      { price: { input_per_mtok: 2.5, output_per_mtok: 10 } },
    );
    expect(result).toMatchObject({
      state: "complete",
      score: 0.9,
      passed: true,
      reason: "Initial value added; no special case.",
    });
    expect(result.details).toMatchObject({
      model: "judge-1",
      requests: 1,
      input_tokens: 1200,
      output_tokens: 30,
      cost_usd: (1200 * 2.5 + 30 * 10) / 1e6,
      cost_source: "price",
      diff_truncated: false,
    });
    const req = requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body).toMatchObject({ model: "judge-1", response_format: { type: "json_object" } });
    const user = req.body!.messages!.find((m) => m.role === "user")!.content;
    expect(user).toContain(INSTRUCTION);
    expect(user).toContain("The fix gives reduce an initial value");
    expect(user).toContain("+export const total = (items) => items.reduce((a, i) => a + i.price, 0);");
    expect(user).not.toContain("truncated");
    const log = readFileSync(ctx.logFile, "utf8");
    expect(log).toContain("HTTP 200");
    expect(log).not.toContain(KEY);
  });

  it("fails on a failing verdict with the judge's score; cost is null without a price", async () => {
    const { result } = await judge([
      verdict({ score: 0.2, pass: false, reason: "Special-cases the empty cart." }),
    ]);
    expect(result).toMatchObject({
      state: "complete",
      score: 0.2,
      passed: false,
      reason: "Special-cases the empty cart.",
    });
    expect(result.details).toMatchObject({ cost_usd: null, cost_source: null });
    expect(result.details!.input_tokens).toBeGreaterThan(50);
  });

  it.each([
    ["prose instead of JSON", { content: "Looks good to me!" }, /not JSON: "Looks good to me!"/],
    ["a score out of range", verdict({ score: 7, pass: true, reason: "x" }), /score: Too big/],
    ["a missing pass", verdict({ score: 1, reason: "x" }), /pass: Invalid input/],
    ["a body that is not JSON", { rawBody: "<html>502 Bad Gateway</html>" }, /body that is not JSON/],
  ] as [string, Reply, RegExp][])("is an error, not a 0, on %s", async (_what, reply, why) => {
    const { result, requests } = await judge([reply]);
    expect(result.state).toBe("error");
    expect(result).not.toHaveProperty("score");
    expect(result.reason).toMatch(why);
    expect(requests).toHaveLength(1);
  });

  it("accepts a verdict in a code fence", async () => {
    const { result } = await judge([{ content: '```json\n{"score": 1, "pass": true, "reason": "ok"}\n```' }]);
    expect(result).toMatchObject({ state: "complete", score: 1, passed: true });
  });

  it("waits as Retry-After says on a 429, then succeeds", async () => {
    const { result, requests } = await judge([
      { status: 429, message: "Rate limit reached for judge-1", headers: { "retry-after": "1" } },
      verdict({ score: 1, pass: true, reason: "fine" }),
    ]);
    expect(result).toMatchObject({ state: "complete", passed: true, details: { requests: 2 } });
    expect(requests).toHaveLength(2);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it("retries a 5xx with backoff, then succeeds", async () => {
    const { result, requests } = await judge([
      { status: 503 },
      verdict({ score: 1, pass: true, reason: "fine" }),
    ]);
    expect(result).toMatchObject({ state: "complete", passed: true });
    expect(requests).toHaveLength(2);
  });

  it("gives up after max_retries and is an error", async () => {
    const { result, requests } = await judge(
      [
        { status: 429, headers: { "retry-after": "0" } },
        { status: 429, message: "You exceeded your current quota", headers: { "retry-after": "0" } },
      ],
      { max_retries: 1 },
    );
    expect(result).toMatchObject({
      state: "error",
      reason: "the judge endpoint answered 429 2 times: You exceeded your current quota",
    });
    expect(requests).toHaveLength(2);
  });

  it("is an error when a Retry-After reaches past the timeout", async () => {
    const { result, ms } = await judge([{ status: 429, headers: { "retry-after": "60" } }], {}, 2000);
    expect(result).toMatchObject({ state: "error", timedOut: true });
    expect(result.reason).toMatch(/asked to wait 60 s, beyond the scorer's timeout/);
    expect(ms).toBeLessThan(1500);
  });

  it("times out on a judge that does not answer", async () => {
    const { result, ms } = await judge([{ delayMs: 10_000 }], {}, 800);
    expect(result).toMatchObject({ state: "error", timedOut: true });
    expect(result.reason).toBe("the judge did not answer within 1 s (1 request)");
    expect(ms).toBeLessThan(5000);
  });

  it("does not retry a client error such as a wrong key", async () => {
    server = await startOpenAIServer({ apiKey: "another-key", script: [] });
    process.env[KEY_ENV] = KEY;
    const ctx = await scorerContext({
      files: FILES,
      change: FIX,
      options: {
        type: "llm-judge",
        rubric: "r",
        model: "judge-1",
        base_url: server.url,
        api_key_env: KEY_ENV,
      },
    });
    const result = await llmJudgeScorer.run(ctx);
    expect(result).toMatchObject({
      state: "error",
      reason: "the judge endpoint answered 401: Incorrect API key provided.",
    });
    expect(server.requests).toHaveLength(1);
  });

  it("is an error when the model does not exist on the endpoint", async () => {
    const { result } = await judge([], { model: "gpt-nope" });
    expect(result).toMatchObject({
      state: "error",
      reason: "the judge endpoint answered 404: The model `gpt-nope` does not exist.",
    });
  });

  it("is an error when nothing listens at base_url", async () => {
    const closed = await startOpenAIServer({ script: [] });
    const url = closed.url;
    await closed.close();
    const ctx = await scorerContext({
      files: FILES,
      change: FIX,
      options: { type: "llm-judge", rubric: "r", model: "judge-1", base_url: url, max_retries: 1 },
    });
    const result = await llmJudgeScorer.run(ctx);
    expect(result).toMatchObject({ state: "error", details: { requests: 2 } });
    expect(result.reason).toBe(`cannot reach ${url}/chat/completions: ECONNREFUSED`);
  });

  it("is an error without a request when the API key variable is not set", async () => {
    server = await startOpenAIServer({ script: [] });
    const ctx = await scorerContext({
      files: FILES,
      change: FIX,
      options: {
        type: "llm-judge",
        rubric: "r",
        model: "judge-1",
        base_url: server.url,
        api_key_env: KEY_ENV,
      },
    });
    expect(await llmJudgeScorer.run(ctx)).toEqual({
      state: "error",
      reason: `the variable ${KEY_ENV} (api_key_env) is not set for evalgate`,
    });
    expect(server.requests).toHaveLength(0);
  });

  it("cuts a large diff to the token budget and says so in the prompt", async () => {
    const big = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`src/gen${i}.js`, `${"export const x = 1;\n".repeat(80)}`]),
    );
    server = await startOpenAIServer({ script: [verdict({ score: 1, pass: true, reason: "ok" })] });
    const ctx = await scorerContext({
      files: FILES,
      change: big,
      options: {
        type: "llm-judge",
        rubric: "r",
        model: "judge-1",
        base_url: server.url,
        max_diff_tokens: 1000,
      },
    });
    const result = await llmJudgeScorer.run(ctx);
    expect(result).toMatchObject({ state: "complete", details: { diff_truncated: true } });
    const user = server.requests[0]!.body!.messages!.find((m) => m.role === "user")!.content;
    expect(user).toMatch(
      /NOTE: the diff is truncated to about 1000 tokens \(the whole diff is about \d+ tokens\)/,
    );
    expect(user).toMatch(/Not shown: .*src\/gen5\.js/);
    expect(user.length).toBeLessThan(1000 * 4 + 2000);
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });

  it("reads a rubric file beside the eval file and rejects a missing one at validation", async () => {
    const evalDir = tempDir();
    writeFileSync(path.join(evalDir, "rubric.md"), "RUBRIC-FROM-FILE: no special cases.\n");
    server = await startOpenAIServer({ script: [verdict({ score: 1, pass: true, reason: "ok" })] });
    const ctx = await scorerContext({
      files: FILES,
      change: FIX,
      evalDir,
      options: { type: "llm-judge", rubric_file: "rubric.md", model: "judge-1", base_url: server.url },
    });
    expect(await llmJudgeScorer.run(ctx)).toMatchObject({ state: "complete" });
    expect(server.requests[0]!.body!.messages![1]!.content).toContain("RUBRIC-FROM-FILE");
    const problems = llmJudgeScorer.check!(
      { type: "llm-judge", rubric_file: "nope.md", model: "m" },
      evalDir,
    );
    expect(problems).toEqual([
      {
        at: ["rubric_file"],
        message: "rubric file nope.md does not exist",
        hint: "paths are relative to the eval file's folder",
      },
    ]);
    expect(llmJudgeScorer.check!({ type: "llm-judge", model: "m" }, evalDir)[0]!.message).toBe(
      "llm-judge needs a rubric",
    );
  });
});

describe("the judge's prompt and answer", () => {
  const section = (file: string, lines: number) =>
    `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -0,0 +1,${lines} @@\n${"+line of code here\n".repeat(lines)}`;

  it("keeps a diff within budget whole", () => {
    const d = diffForPrompt(section("a.js", 3), 1000);
    expect(d).toMatchObject({ truncated: false, files: 1, shownFiles: 1, omittedFiles: [] });
  });

  it("shows whole files first, then the head of the next, and lists the rest", () => {
    const patch = [section("a.js", 20), section("b.js", 200), section("c.js", 5)].join("");
    const d = diffForPrompt(patch, 250);
    expect(d.truncated).toBe(true);
    expect(d.shownFiles).toBe(1);
    expect(d.cutFile).toBe("b.js");
    expect(d.omittedFiles).toEqual(["c.js"]);
    expect(d.text.length).toBeLessThanOrEqual(250 * 4 + 60);
    const [, user] = judgeMessages({ instruction: "do", rubric: "r", diff: d, maxDiffTokens: 250 });
    expect(user!.content).toContain(
      "1 of 3 changed files are shown whole. b.js is shown only in part. Not shown: c.js.",
    );
  });

  it("drops binary hunks", () => {
    const patch =
      "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 10\nRcmZ?wbhEHbRA6LY0\n\nliteral 0\nHcmV?d00001\n\n";
    expect(diffForPrompt(patch, 1000).text).toContain("(binary content not shown)");
    expect(diffForPrompt(patch, 1000).text).not.toContain("RcmZ");
  });

  it("says when the agent changed nothing", () => {
    const [, user] = judgeMessages({
      instruction: "do",
      rubric: "r",
      diff: diffForPrompt("", 100),
      maxDiffTokens: 100,
    });
    expect(user!.content).toContain("(the agent changed no file)");
  });

  it.each([
    ['{"score": 0.5, "pass": false, "reason": "half"}', { score: 0.5, pass: false, reason: "half" }],
    ['Here you go: {"score": 1, "pass": true, "reason": "ok"} Done.', { score: 1, pass: true, reason: "ok" }],
  ])("reads %j", (content, expected) => {
    expect(parseVerdict(content)).toEqual(expected);
  });

  it("reads Retry-After in seconds or as a date", () => {
    expect(retryAfterMs("2")).toBe(2000);
    expect(retryAfterMs("0.5")).toBe(500);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(retryAfterMs("soon")).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});
