/**
 * The `gemini-cli` preset: `gemini --output-format stream-json --yolo`, the task on stdin.
 *
 * Stream (one JSON object per line): `init` (session_id, model), `message` (role, content; the
 * assistant's text arrives in `delta: true` pieces), `tool_use` (tool_name, tool_id, parameters),
 * `tool_result` (tool_id, status, output, error), `error` (severity warning|error, message) and a
 * final `result` (status success|error, error, stats {input_tokens, output_tokens, cached, input,
 * tool_calls, duration_ms}). A fatal API error ends the process with status 1 and a message on
 * stderr. Gemini CLI reports no cost: it comes from the price table for the model.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { TargetSpec } from "../config/types.js";
import { ApiTrouble } from "./api-trouble.js";
import { emptyOutcome, hasFlag, type Preset, type StreamOutcome, type StreamParser } from "./stream.js";
import { clip, clipValue, num, obj, str, type TranscriptEntry } from "./transcript.js";

/** The result event's token counts and tool calls, into the outcome. */
function readStats(out: StreamOutcome, stats: Record<string, unknown>): void {
  const cached = num(stats.cached);
  const total = num(stats.input_tokens);
  // input_tokens counts cached tokens too; `input` is the uncached part.
  out.inputTokens = num(stats.input) ?? (total !== null ? Math.max(0, total - (cached ?? 0)) : null);
  out.cachedTokens = cached;
  out.outputTokens = num(stats.output_tokens);
  out.toolCalls = num(stats.tool_calls);
}

function toolCall(e: Record<string, unknown>): TranscriptEntry {
  return {
    type: "tool_call",
    id: str(e.tool_id),
    name: str(e.tool_name) ?? "?",
    input: clipValue(e.parameters ?? null),
  };
}

function toolResult(e: Record<string, unknown>): TranscriptEntry {
  const error = str(obj(e.error)?.message);
  return {
    type: "tool_result",
    id: str(e.tool_id),
    output: clip(error ?? str(e.output) ?? ""),
    is_error: e.status === "error" || error !== null,
  };
}

function parser(): StreamParser {
  const out: StreamOutcome = emptyOutcome();
  let text = "";
  let toolUses = 0;
  let responses = 0;
  /** The model is producing a response (text or tool calls) since the last user or tool input. */
  let inResponse = false;
  let resultError: string | null = null;
  let lastError: string | null = null;
  const trouble = new ApiTrouble();

  const flush = (): TranscriptEntry[] => {
    if (!text) return [];
    const entry: TranscriptEntry = { type: "message", role: "assistant", text: clip(text) };
    text = "";
    return [entry];
  };
  const modelOutput = () => {
    if (!inResponse) responses++;
    inResponse = true;
    trouble.answered();
  };

  return {
    event(e) {
      const entries: TranscriptEntry[] = [];
      const isDelta = e.type === "message" && e.role === "assistant";
      if (!isDelta) entries.push(...flush());
      switch (e.type) {
        case "init":
          out.model = str(e.model);
          entries.push({ type: "session", model: out.model, version: null, session_id: str(e.session_id) });
          break;
        case "message": {
          const content = str(e.content) ?? "";
          if (e.role === "assistant") {
            modelOutput();
            text += content;
            if (e.delta !== true) entries.push(...flush());
          } else {
            inResponse = false;
            entries.push({ type: "message", role: "user", text: clip(content) });
          }
          break;
        }
        case "tool_use":
          modelOutput();
          toolUses++;
          entries.push(toolCall(e));
          break;
        case "tool_result": {
          inResponse = false;
          entries.push(toolResult(e));
          break;
        }
        case "error": {
          const message = str(e.message) ?? "error";
          if (e.severity === "error") lastError = message;
          trouble.text(message);
          entries.push({ type: "error", message: clip(message, 2000), fatal: false });
          break;
        }
        case "result": {
          out.complete = true;
          const stats = obj(e.stats);
          if (stats) readStats(out, stats);
          if (e.status === "error") {
            resultError = str(obj(e.error)?.message) ?? lastError ?? "the result event has status error";
            trouble.text(resultError);
            entries.push({ type: "error", message: clip(resultError, 2000), fatal: true });
          }
          entries.push({
            type: "result",
            status: e.status === "error" ? "error" : "success",
            text: null,
            turns: responses > 0 ? responses : null,
            duration_ms: stats ? num(stats.duration_ms) : null,
          });
          break;
        }
      }
      return entries;
    },
    flush,
    // API errors and their retries ("Attempt 3 failed with status 429. Retrying with backoff...")
    // go to stderr only: a run stuck retrying until its time limit shows nothing else.
    stderr(line) {
      trouble.text(line);
    },
    finish() {
      out.turns = responses > 0 ? responses : null;
      out.toolCalls ??= toolUses;
      out.error = resultError ?? (out.complete ? null : lastError);
      out.infrastructure = trouble.evidence;
      return out;
    },
  };
}

export const geminiCli: Preset = {
  provider: "gemini-cli",
  bin: "gemini",
  install: "npm install -g @google/gemini-cli",
  npmPackage: "@google/gemini-cli",
  credentials: [
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_APPLICATION_CREDENTIALS",
  ],
  // Every attempt's workspace is a new folder: 0.6x refuses to run headless in an untrusted one
  // (exit 55, "not running in a trusted directory").
  env: { GEMINI_CLI_TRUST_WORKSPACE: "true" },
  // With GOOGLE_GEMINI_BASE_URL set (a gateway), 0.6x picks a "gateway" auth mode that headless runs
  // reject (exit 41, "Invalid auth method selected"): with an API key, the user settings of the
  // attempt's own HOME select key auth. Not a system settings file (GEMINI_CLI_SYSTEM_SETTINGS_PATH):
  // the CLI skips one under a world-writable folder such as /tmp, where attempts usually live.
  async prepare(env): Promise<Record<string, string>> {
    if (!env.GEMINI_API_KEY || !env.HOME || env.GOOGLE_GENAI_USE_VERTEXAI) return {};
    const dir = path.join(env.HOME, ".gemini");
    await mkdir(dir, { recursive: true });
    const settings = { security: { auth: { selectedType: "gemini-api-key" } } };
    // "wx": a settings file already there (a target's own setup) is kept.
    await writeFile(path.join(dir, "settings.json"), `${JSON.stringify(settings)}\n`, { flag: "wx" }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      },
    );
    return {};
  },
  argv(target: TargetSpec) {
    const argv = ["--output-format", "stream-json"];
    if (target.model) argv.push("--model", target.model);
    // --yolo approves every tool call: nobody is there to answer a prompt. A target's own
    // approval flags win.
    if (!hasFlag(target.args, ["--yolo", "-y", "--approval-mode"])) argv.push("--yolo");
    return [...argv, ...target.args];
  },
  versionArgs: ["--version"],
  parser,
};
