/**
 * The `claude-code` preset: `claude -p --output-format stream-json --verbose`, the task on stdin.
 *
 * Stream (one JSON object per line): `system`/`init` (model, tools, `claude_code_version`),
 * `assistant` events carrying an Anthropic message (one event per content block, the same message
 * id and usage repeated), `user` events carrying `tool_result` blocks, and a final `result` event
 * with `is_error`, `num_turns`, `total_cost_usd`, `usage` and per-model `modelUsage`. An API error
 * or rate limit ends in a `result` with `is_error: true`, sometimes with exit status 0.
 */
import type { TargetSpec } from "../config/types.js";
import { ApiTrouble, troubleOfStatus } from "./api-trouble.js";
import { emptyOutcome, hasFlag, type Preset, type StreamOutcome, type StreamParser } from "./stream.js";
import { clip, clipValue, num, obj, str, type TranscriptEntry, textOf } from "./transcript.js";

/** Tools an unattended coding run needs without asking: edit files and run commands in the workspace. */
export const CLAUDE_ALLOWED_TOOLS = [
  "Bash",
  "Edit",
  "MultiEdit",
  "Write",
  "Read",
  "Glob",
  "Grep",
  "LS",
  "NotebookEdit",
  "TodoWrite",
];

/** The model Claude Code names on the messages it makes up itself (API errors), never a real model. */
const SYNTHETIC_MODEL = "<synthetic>";

/** Claude Code's own names for API errors (the `error` of its API error messages and retries). */
const ERROR_KINDS: Record<string, string> = {
  rate_limit: troubleOfStatus(429)!,
  server_error: "the model API answered a server error",
  overloaded: "the model API was overloaded (server error)",
  authentication_failed: troubleOfStatus(401)!,
};

/** API trouble in an event of Claude Code's (an API error message, a retry, the result). */
function noteTrouble(trouble: ApiTrouble, e: Record<string, unknown>, text: string | null): void {
  const status = num(e.api_error_status) ?? num(e.error_status);
  const kind = ERROR_KINDS[str(e.error) ?? ""];
  if (status !== null && troubleOfStatus(status)) trouble.status(status);
  else if (kind) trouble.saw(kind);
  else trouble.text(text);
}

/** What the parser gathers over the stream, for its outcome at the end. */
interface ClaudeStream {
  out: StreamOutcome;
  /** Usage per message id: the stream repeats a message once per content block. */
  messageUsage: Map<string, Record<string, unknown>>;
  toolIds: Set<string>;
  toolCalls: number;
  resultUsage: Record<string, unknown> | null;
  modelUsage: Record<string, unknown> | null;
  trouble: ApiTrouble;
}

function parser(): StreamParser {
  const s: ClaudeStream = {
    out: emptyOutcome(),
    messageUsage: new Map(),
    toolIds: new Set(),
    toolCalls: 0,
    resultUsage: null,
    modelUsage: null,
    trouble: new ApiTrouble(),
  };
  return {
    event(e) {
      switch (e.type) {
        case "system":
          return systemEvent(s, e);
        case "assistant":
          return assistantEvent(s, e);
        case "user":
          return userEvent(e);
        case "result":
          return resultEvent(s, e);
      }
      return [];
    },
    finish: () => outcomeOf(s),
  };
}

function systemEvent(s: ClaudeStream, e: Record<string, unknown>): TranscriptEntry[] {
  const { out } = s;
  // 2.1.x reports each retry of a failed API request.
  if (e.subtype === "api_retry") noteTrouble(s.trouble, e, null);
  if (e.subtype !== "init") return [];
  out.model = str(e.model) ?? out.model;
  out.agentVersion = str(e.claude_code_version) ?? out.agentVersion;
  return [{ type: "session", model: out.model, version: out.agentVersion, session_id: str(e.session_id) }];
}

function assistantEvent(s: ClaudeStream, e: Record<string, unknown>): TranscriptEntry[] {
  const m = obj(e.message);
  if (!m) return [];
  const id = str(m.id);
  const usage = obj(m.usage);
  if (id && usage) s.messageUsage.set(id, usage);
  // Claude Code reports its own error messages (API errors, rate limits) as assistant
  // messages of model "<synthetic>": not a model the agent ran.
  const model = str(m.model);
  if (model && model !== SYNTHETIC_MODEL) {
    s.out.model = model;
    s.trouble.answered();
  } else if (model === SYNTHETIC_MODEL) {
    const content = Array.isArray(m.content) ? m.content : [];
    noteTrouble(s.trouble, e, content.map((b) => str(obj(b)?.text) ?? "").join(" "));
  }
  const entries: TranscriptEntry[] = [];
  for (const b of Array.isArray(m.content) ? m.content : []) {
    const block = obj(b);
    if (!block) continue;
    if (block.type === "text" && typeof block.text === "string") {
      entries.push({ type: "message", role: "assistant", text: clip(block.text) });
    } else if (block.type === "thinking" && typeof block.thinking === "string") {
      entries.push({ type: "reasoning", text: clip(block.thinking) });
    } else if (block.type === "tool_use") {
      const toolId = str(block.id);
      if (!toolId || !s.toolIds.has(toolId)) s.toolCalls++;
      if (toolId) s.toolIds.add(toolId);
      entries.push({
        type: "tool_call",
        id: toolId,
        name: str(block.name) ?? "?",
        input: clipValue(block.input ?? null),
      });
    }
  }
  return entries;
}

function userEvent(e: Record<string, unknown>): TranscriptEntry[] {
  const m = obj(e.message);
  const content = m?.content;
  if (typeof content === "string") return [{ type: "message", role: "user", text: clip(content) }];
  const entries: TranscriptEntry[] = [];
  for (const b of Array.isArray(content) ? content : []) {
    const block = obj(b);
    if (block?.type === "tool_result") {
      entries.push({
        type: "tool_result",
        id: str(block.tool_use_id),
        output: clip(textOf(block.content)),
        is_error: block.is_error === true,
      });
    } else if (block?.type === "text" && typeof block.text === "string") {
      entries.push({ type: "message", role: "user", text: clip(block.text) });
    }
  }
  return entries;
}

function resultEvent(s: ClaudeStream, e: Record<string, unknown>): TranscriptEntry[] {
  const { out } = s;
  out.complete = true;
  out.turns = num(e.num_turns);
  out.costUsd = num(e.total_cost_usd);
  s.resultUsage = obj(e.usage);
  s.modelUsage = obj(e.modelUsage);
  const text = str(e.result);
  const subtype = str(e.subtype) ?? "";
  // error_max_turns is the agent running out of the turns it was given: its work is scored as
  // it stands. Any other error (API errors, rate limits, crashes during execution) is not the
  // agent's skill and makes the attempt an error.
  const failed = e.is_error === true && subtype !== "error_max_turns";
  const errors = Array.isArray(e.errors) ? e.errors.map((x) => String(x)).join("; ") : "";
  if (failed) {
    out.error = clip(text || errors || subtype || "the result event has is_error: true", 2000);
    noteTrouble(s.trouble, e, out.error);
  }
  // 2.1.x exits 1 here (2.0.x exited 0): the exit status is not an error of the run.
  if (subtype === "error_max_turns")
    out.stoppedBy = `it used all the turns it was given (error_max_turns after ${out.turns ?? "?"} turns)`;
  const entries: TranscriptEntry[] = [
    {
      type: "result",
      status: e.is_error === true ? "error" : "success",
      text: text === null ? null : clip(text),
      turns: out.turns,
      duration_ms: num(e.duration_ms),
    },
  ];
  if (failed) entries.push({ type: "error", message: out.error!, fatal: true });
  return entries;
}

/** The stream's outcome: tokens from the per-model usage when there is one, else the result's or the messages'. */
function outcomeOf(s: ClaudeStream): StreamOutcome {
  const { out, modelUsage, resultUsage, messageUsage } = s;
  out.toolCalls = s.toolCalls;
  const models = modelUsage
    ? Object.values(modelUsage)
        .map(obj)
        .filter((m) => m !== null)
    : [];
  if (models.length > 0) {
    // Every model the agent called (its main model and the small one it uses for side tasks),
    // which is what total_cost_usd covers.
    const sum = (k: string) => models.reduce((a, m) => a + (num(m[k]) ?? 0), 0);
    out.inputTokens = sum("inputTokens") + sum("cacheCreationInputTokens");
    out.cachedTokens = sum("cacheReadInputTokens");
    out.outputTokens = sum("outputTokens");
  } else {
    const usages = resultUsage ? [resultUsage] : [...messageUsage.values()];
    if (usages.length > 0) {
      const sum = (k: string) => usages.reduce((a, u) => a + (num(u[k]) ?? 0), 0);
      out.inputTokens = sum("input_tokens") + sum("cache_creation_input_tokens");
      out.cachedTokens = sum("cache_read_input_tokens");
      out.outputTokens = sum("output_tokens");
    }
  }
  if (!out.complete && messageUsage.size > 0) out.turns = messageUsage.size;
  out.infrastructure = s.trouble.evidence;
  return out;
}

export const claudeCode: Preset = {
  provider: "claude-code",
  bin: "claude",
  install: "npm install -g @anthropic-ai/claude-code",
  npmPackage: "@anthropic-ai/claude-code",
  credentials: [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
  ],
  env: {
    // No update checks, telemetry or error reporting from a CI job.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  },
  argv(target: TargetSpec) {
    const argv = ["-p", "--output-format", "stream-json", "--verbose"];
    if (target.model) argv.push("--model", target.model);
    // acceptEdits plus an allow-list rather than --dangerously-skip-permissions, which Claude Code
    // refuses to run as root (as CI containers often do). A target's own permission flags win.
    if (!hasFlag(target.args, ["--permission-mode", "--dangerously-skip-permissions"])) {
      argv.push("--permission-mode", "acceptEdits");
    }
    if (!hasFlag(target.args, ["--allowedTools", "--allowed-tools"])) {
      argv.push("--allowedTools", CLAUDE_ALLOWED_TOOLS.join(","));
    }
    return [...argv, ...target.args];
  },
  parser,
};
