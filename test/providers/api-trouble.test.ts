/**
 * Evidence of infrastructure trouble in what the agent CLIs print (providers/api-trouble.ts and each
 * preset's parser): only a 429, a 5xx or a refused credential that the run never got past excuses a
 * failed run. The events are those the real CLIs printed against the scripted servers of
 * test/providers/ (agent-errors-real.test.ts runs them end to end).
 */
import { describe, expect, it } from "vitest";
import { troubleOfText } from "../../src/providers/api-trouble.js";
import { claudeCode } from "../../src/providers/claude-code.js";
import { codex } from "../../src/providers/codex.js";
import { geminiCli } from "../../src/providers/gemini-cli.js";
import type { Preset } from "../../src/providers/stream.js";

const RATE = "the model API answered 429 (rate limit)";
const AUTH = "the model API refused the credential (401)";

describe("error texts of the agent CLIs", () => {
  it.each<[string, string | null]>([
    ['API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}', RATE],
    ["API Error: Request rejected (429) · scripted 429", RATE],
    ["API Error: 500 scripted 500. This is a server-side issue", "the model API answered 500 (server error)"],
    ["API Error: 529 overloaded", "the model API answered 529 (server error)"],
    ["Invalid API key · Fix external API key", AUTH],
    ["exceeded retry limit, last status: 429 Too Many Requests, request id: req_7f3a", RATE],
    ["unexpected status 401 Unauthorized: Incorrect API key provided, url: http://x/v1/responses", AUTH],
    [
      "We’re currently experiencing high demand, which may cause temporary errors.",
      "the model API was overloaded (server error)",
    ],
    [
      "Attempt 6 failed with status 503. Retrying with backoff...",
      "the model API answered 503 (server error)",
    ],
    ['[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key."}}]', AUTH],
    ["[API Error: You exceeded your current quota, please check your plan and billing details.]", RATE],
    // Not infrastructure: the agent's or the model's own trouble.
    ["Prompt is too long", null],
    ['[API Error: {"error":{"code":400,"message":"Request contains an invalid argument."}}]', null],
    ["Reconnecting... 2/5 (unexpected status 404 Not Found: url: ws://127.0.0.1/v1/responses)", null],
    ["Invalid stream: The model returned an empty response or malformed tool call.", null],
  ])("%s", (text, trouble) => {
    expect(troubleOfText(text)).toBe(trouble);
  });
});

function replay(preset: Preset, events: object[], stderr: string[] = []) {
  const p = preset.parser();
  for (const e of events) p.event(e as Record<string, unknown>);
  for (const line of stderr) p.stderr?.(line);
  p.flush?.();
  return p.finish().infrastructure;
}

describe("trouble the run never got past", () => {
  it("Claude Code: a retried 429 followed by the model's answer is no evidence", () => {
    const retry = {
      type: "system",
      subtype: "api_retry",
      attempt: 1,
      error_status: 429,
      error: "rate_limit",
    };
    const answer = {
      type: "assistant",
      message: { id: "m1", model: "claude-sonnet-4-5", content: [{ type: "text", text: "hi" }] },
    };
    expect(replay(claudeCode, [retry])).toBe(RATE);
    expect(replay(claudeCode, [retry, answer])).toBeNull();
  });

  it("Claude Code 2.1: the API error message names its status", () => {
    const msg = {
      type: "assistant",
      message: {
        id: "m",
        model: "<synthetic>",
        content: [{ type: "text", text: "Invalid API key · Fix external API key" }],
      },
      error: "authentication_failed",
      api_error_status: 401,
    };
    expect(replay(claudeCode, [msg])).toBe(AUTH);
  });

  it("Codex: reconnecting on a 429, then a completed turn, is no evidence; a failed turn on a 5xx is", () => {
    const reconnect = {
      type: "error",
      message: "Reconnecting... 1/5 (unexpected status 429 Too Many Requests: x)",
    };
    expect(replay(codex, [reconnect, { type: "turn.completed", usage: {} }])).toBeNull();
    expect(
      replay(codex, [
        reconnect,
        { type: "turn.failed", error: { message: "We’re currently experiencing high demand" } },
      ]),
    ).toBe("the model API was overloaded (server error)");
  });

  it("Gemini CLI: retries reported on stderr only", () => {
    const init = [
      { type: "init", model: "gemini-2.5-pro" },
      { type: "message", role: "user", content: "fix" },
    ];
    expect(
      replay(geminiCli, init, ["Attempt 2 failed with status 429. Retrying with backoff... _ApiError: {}"]),
    ).toBe(RATE);
    expect(replay(geminiCli, init, ["Warning: 256-color support not detected."])).toBeNull();
  });
});
