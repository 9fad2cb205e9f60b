/**
 * `llm-judge`: a model reads the task, a rubric and the agent's diff, and answers a JSON verdict
 * {score, pass, reason}, through an OpenAI-compatible chat-completions endpoint.
 *
 * The API key is read by evalgate from the variable `api_key_env` names and is only ever sent to
 * `base_url`; no agent or scorer process sees it. Rate limits (429) and server errors (5xx) are
 * retried with backoff, honouring Retry-After, within the scorer's timeout. An answer that is not a
 * valid verdict is an error, never a 0.
 */

import { existsSync, statSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import path from "node:path";
import type { ScorerInput } from "../config/schema/scorers.js";
import { MAX_TASK_FILE_BYTES, readTextFile, TextFileRefused } from "../config/text-file.js";
import { diffForPrompt, judgeMessages, parseVerdict } from "./llm-judge-prompt.js";
import type { Scorer, ScorerContext, ScorerProblem, ScorerResult } from "./types.js";

type JudgeOptions = Extract<ScorerInput, { type: "llm-judge" }>;

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
const DEFAULT_MAX_DIFF_TOKENS = 12_000;
const DEFAULT_RETRIES = 3;
const BACKOFF_BASE_MS = 500;
const RETRY_AFTER_CAP_MS = 120_000;

interface Usage {
  input: number | null;
  output: number | null;
  /** Cost the endpoint itself reported (some gateways do). */
  reportedCost: number | null;
}

function addUsage(total: Usage, u: unknown): void {
  if (!u || typeof u !== "object") return;
  const o = u as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const input = num(o.prompt_tokens);
  const output = num(o.completion_tokens);
  const cost = num(o.cost);
  if (input !== null) total.input = (total.input ?? 0) + input;
  if (output !== null) total.output = (total.output ?? 0) + output;
  if (cost !== null) total.reportedCost = (total.reportedCost ?? 0) + cost;
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function apiMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    const m = typeof body.error === "string" ? body.error : (body.error?.message ?? body.message);
    if (m) return m.length > 200 ? `${m.slice(0, 199)}…` : m;
  } catch {
    // not JSON
  }
  const t = text.trim().replace(/\s+/g, " ");
  return t ? (t.length > 200 ? `${t.slice(0, 199)}…` : t) : "no body";
}

function resolveRubricFile(o: JudgeOptions, evalDir: string): string | undefined {
  return o.rubric_file === undefined ? undefined : path.resolve(evalDir, o.rubric_file);
}

export const llmJudgeScorer: Scorer = {
  check(options: ScorerInput, evalDir: string): ScorerProblem[] {
    const o = options as JudgeOptions;
    const problems: ScorerProblem[] = [];
    if ((o.rubric === undefined) === (o.rubric_file === undefined)) {
      problems.push({
        message: o.rubric === undefined ? "llm-judge needs a rubric" : "give rubric or rubric_file, not both",
        hint: 'rubric: "The fix handles the empty cart without special-casing the test", or rubric_file: rubrics/cart.md',
      });
    }
    const file = resolveRubricFile(o, evalDir);
    if (file !== undefined && !(existsSync(file) && statSync(file).isFile())) {
      problems.push({
        at: ["rubric_file"],
        message: existsSync(file)
          ? `rubric file ${o.rubric_file} is not a regular file (a folder, a device or a pipe)`
          : `rubric file ${o.rubric_file} does not exist`,
        hint: "paths are relative to the eval file's folder",
      });
    }
    if (o.base_url !== undefined) {
      try {
        new URL(o.base_url);
      } catch {
        problems.push({ at: ["base_url"], message: `"${o.base_url}" is not a URL` });
      }
    }
    return problems;
  },

  async run(ctx: ScorerContext): Promise<ScorerResult> {
    const o = ctx.spec.options as JudgeOptions;
    const started = performance.now();
    const deadline = started + ctx.spec.timeoutMs;
    const log = (text: string) => appendFile(ctx.logFile, `${text}\n`).catch(() => undefined);
    const key = apiKeyOf(o);
    if (typeof key === "object") return key;
    const rubric = await rubricOf(o, ctx.spec.evalDir);
    if (typeof rubric === "object") return rubric;
    const request = judgeRequest(o, ctx, rubric);
    const { messages } = request;
    await log(
      `POST ${request.url} (model ${o.model})\n${messages.map((m) => `--- ${m.role}\n${m.content}`).join("\n")}\n---`,
    );
    const call: JudgeCall = {
      o,
      request,
      ...(key ? { apiKey: key } : {}),
      deadline,
      timeoutMs: ctx.spec.timeoutMs,
      log,
      usage: { input: null, output: null, reportedCost: null },
      requests: 0,
    };
    const answer = await askJudge(call);
    if ("state" in answer) return answer;
    return verdictOf(call, answer.res, answer.text);
  },
};

/** The API key from the variable `api_key_env` names (none without one), or the error of its absence. */
function apiKeyOf(o: JudgeOptions): string | undefined | ScorerResult {
  if (!o.api_key_env) return undefined;
  const apiKey = process.env[o.api_key_env];
  if (apiKey) return apiKey;
  return { state: "error", reason: `the variable ${o.api_key_env} (api_key_env) is not set for evalgate` };
}

/** The rubric, given inline or read from `rubric_file`, or the error of a file that cannot be read. */
async function rubricOf(o: JudgeOptions, evalDir: string): Promise<string | ScorerResult> {
  const rubricFile = resolveRubricFile(o, evalDir);
  if (!rubricFile) return o.rubric ?? "";
  try {
    return await readTextFile(rubricFile, MAX_TASK_FILE_BYTES);
  } catch (error) {
    return {
      state: "error",
      reason: `rubric file ${o.rubric_file} ${error instanceof TextFileRefused ? error.message : `cannot be read: ${(error as Error).message}`}`,
    };
  }
}

interface JudgeRequest {
  baseUrl: string;
  url: string;
  messages: ReturnType<typeof judgeMessages>;
  body: Record<string, unknown>;
  diff: ReturnType<typeof diffForPrompt>;
}

/** The chat-completions request: the task, the rubric and the diff cut to max_diff_tokens. */
function judgeRequest(o: JudgeOptions, ctx: ScorerContext, rubric: string): JudgeRequest {
  const maxDiffTokens = o.max_diff_tokens ?? DEFAULT_MAX_DIFF_TOKENS;
  const diff = diffForPrompt(new TextDecoder().decode(ctx.diff.patch), maxDiffTokens);
  const messages = judgeMessages({ instruction: ctx.test.instruction, rubric, diff, maxDiffTokens });
  const baseUrl = (o.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const url = `${baseUrl}/chat/completions`;
  const body: Record<string, unknown> = {
    model: o.model,
    messages,
    response_format: { type: "json_object" },
  };
  if (o.temperature !== undefined) body.temperature = o.temperature;
  return { baseUrl, url, messages, body, diff };
}

/** One judging: its request, its deadline, and the requests and usage so far (in every result's details). */
interface JudgeCall {
  o: JudgeOptions;
  request: JudgeRequest;
  apiKey?: string;
  /** performance.now() by which the judge must have answered. */
  deadline: number;
  timeoutMs: number;
  log: (text: string) => Promise<unknown>;
  usage: Usage;
  requests: number;
}

function details(call: JudgeCall): Record<string, unknown> {
  const { o, usage, request } = call;
  const priced =
    o.price && usage.input !== null && usage.output !== null
      ? (usage.input * o.price.input_per_mtok + usage.output * o.price.output_per_mtok) / 1e6
      : null;
  return {
    model: o.model,
    base_url: request.baseUrl,
    requests: call.requests,
    input_tokens: usage.input,
    output_tokens: usage.output,
    cost_usd: priced ?? usage.reportedCost,
    cost_source: priced !== null ? "price" : usage.reportedCost !== null ? "endpoint" : null,
    diff_truncated: request.diff.truncated,
    diff_tokens_estimated: request.diff.totalTokens,
    diff_tokens_sent: request.diff.shownTokens,
  };
}

function timedOut(call: JudgeCall): ScorerResult {
  const { requests } = call;
  return {
    state: "error",
    reason: `the judge did not answer within ${Math.round(call.timeoutMs / 1000)} s (${requests} request${requests === 1 ? "" : "s"})`,
    timedOut: true,
    details: details(call),
  };
}

/**
 * Posts the request until the endpoint answers something other than a rate limit or a server error:
 * those, and an endpoint that cannot be reached, are retried with backoff (Retry-After honoured)
 * up to max_retries times within the deadline.
 */
async function askJudge(call: JudgeCall): Promise<{ res: Response; text: string } | ScorerResult> {
  const { o, request, log } = call;
  const maxRetries = o.max_retries ?? DEFAULT_RETRIES;
  for (let attempt = 0; ; attempt++) {
    const remaining = call.deadline - performance.now();
    if (remaining <= 0) return timedOut(call);
    call.requests++;
    let res: Response;
    let text: string;
    try {
      ({ res, text } = await post(call, remaining));
    } catch (error) {
      const e = error as Error & { cause?: { code?: string; message?: string } };
      if (e.name === "TimeoutError" || e.name === "AbortError") {
        await log(`request ${call.requests}: no answer in time`);
        return timedOut(call);
      }
      const why = e.cause?.code ?? e.cause?.message ?? e.message;
      await log(`request ${call.requests}: ${why}`);
      if (attempt < maxRetries) {
        const wait = BACKOFF_BASE_MS * 2 ** attempt;
        if (performance.now() + wait >= call.deadline) return timedOut(call);
        await sleep(wait);
        continue;
      }
      return { state: "error", reason: `cannot reach ${request.url}: ${why}`, details: details(call) };
    }
    await log(
      `request ${call.requests}: HTTP ${res.status}\n${text.length > 4000 ? `${text.slice(0, 4000)}…` : text}`,
    );
    if (res.status !== 429 && res.status < 500) return { res, text };
    if (attempt >= maxRetries) {
      return {
        state: "error",
        reason: `the judge endpoint answered ${res.status} ${maxRetries + 1} times: ${apiMessage(text)}`,
        details: details(call),
      };
    }
    const hinted = retryAfterMs(res.headers.get("retry-after"));
    const backoff = BACKOFF_BASE_MS * 2 ** attempt * (0.8 + Math.random() * 0.4);
    const wait = Math.min(hinted ?? backoff, RETRY_AFTER_CAP_MS);
    if (performance.now() + wait >= call.deadline) {
      return {
        state: "error",
        reason: `the judge endpoint answered ${res.status} and asked to wait ${Math.round(wait / 1000)} s, beyond the scorer's timeout`,
        timedOut: true,
        details: details(call),
      };
    }
    await sleep(wait);
  }
}

/** One POST of the request, cut off at the time that remains. */
async function post(call: JudgeCall, remaining: number): Promise<{ res: Response; text: string }> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
  };
  if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
  const signal = AbortSignal.timeout(Math.max(1, Math.round(remaining)));
  const res = await fetch(call.request.url, {
    method: "POST",
    headers,
    body: JSON.stringify(call.request.body),
    signal,
  });
  const text = await res.text();
  return { res, text };
}

/** The scorer's result from the judge's final answer: its verdict, or an error for anything else. */
function verdictOf(call: JudgeCall, res: Response, text: string): ScorerResult {
  if (!res.ok) {
    return {
      state: "error",
      reason: `the judge endpoint answered ${res.status}: ${apiMessage(text)}`,
      details: details(call),
    };
  }
  let completion: { choices?: { message?: { content?: unknown } }[]; usage?: unknown };
  try {
    completion = JSON.parse(text);
  } catch {
    return {
      state: "error",
      reason: "the judge endpoint answered 200 with a body that is not JSON",
      details: details(call),
    };
  }
  addUsage(call.usage, completion.usage);
  const content = completion.choices?.[0]?.message?.content;
  if (typeof content !== "string") {
    return { state: "error", reason: "the judge's answer has no message content", details: details(call) };
  }
  const verdict = parseVerdict(content);
  // The endpoint answered; what it said was steered by the diff it read, or by the model alone.
  if ("problem" in verdict)
    return { state: "error", reason: verdict.problem, details: details(call), fromAttempt: true };
  const reason =
    verdict.reason.trim() || (verdict.pass ? "the judge passed the change" : "the judge failed the change");
  return {
    state: "complete",
    score: verdict.score,
    passed: verdict.pass,
    reason: reason.length > 500 ? `${reason.slice(0, 499)}…` : reason,
    details: { ...details(call), verdict: { score: verdict.score, pass: verdict.pass } },
  };
}
