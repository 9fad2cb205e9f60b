/**
 * The `codex` preset: `codex exec --json --sandbox workspace-write -`, the task on stdin.
 *
 * Stream (`codex exec --json`, one JSON object per line): `thread.started`, `turn.started`,
 * `item.started` / `item.updated` / `item.completed` with an `item` (`agent_message`, `reasoning`,
 * `command_execution`, `file_change`, `mcp_tool_call`, `web_search`, `todo_list`, `error`, ...),
 * `turn.completed` with `usage` {input_tokens, cached_input_tokens, output_tokens}, `turn.failed`
 * with `error.message`, and top-level `error` events. Codex reports no cost and no model: the cost
 * comes from the price table for the target's `model`.
 */
import type { TargetSpec } from "../config/types.js";
import { ApiTrouble } from "./api-trouble.js";
import { emptyOutcome, hasFlag, type Preset, type StreamOutcome, type StreamParser } from "./stream.js";
import { clip, clipValue, num, obj, str, type TranscriptEntry, textOf } from "./transcript.js";

const TOOL_ITEMS = new Set([
  "command_execution",
  "file_change",
  "mcp_tool_call",
  "web_search",
  "collab_tool_call",
]);

function toolName(item: Record<string, unknown>): string {
  switch (item.type) {
    case "command_execution":
      return "shell";
    case "file_change":
      return "apply_patch";
    case "mcp_tool_call":
      return `${str(item.server) ?? "mcp"}.${str(item.tool) ?? "?"}`;
    case "collab_tool_call":
      return str(item.tool) ?? "collab";
    default:
      return String(item.type);
  }
}

function toolInput(item: Record<string, unknown>): unknown {
  switch (item.type) {
    case "command_execution":
      return { command: item.command ?? null };
    case "file_change":
      return { changes: item.changes ?? [] };
    case "mcp_tool_call":
      return clipValue(item.arguments ?? null);
    case "web_search":
      return { query: item.query ?? null };
    default:
      return clipValue({ ...item, id: undefined, type: undefined, status: undefined });
  }
}

function toolResult(item: Record<string, unknown>): { output: string; isError: boolean } {
  const status = str(item.status);
  switch (item.type) {
    case "command_execution": {
      const code = num(item.exit_code);
      return {
        output: clip(`${str(item.aggregated_output) ?? ""}${code === null ? "" : `\n[exit ${code}]`}`.trim()),
        isError: status === "failed" || status === "declined" || (code !== null && code !== 0),
      };
    }
    case "file_change": {
      const changes = Array.isArray(item.changes) ? item.changes : [];
      const lines = changes.map((c) => `${str(obj(c)?.kind) ?? "?"} ${str(obj(c)?.path) ?? "?"}`);
      return { output: clip(lines.join("\n")), isError: status === "failed" };
    }
    case "mcp_tool_call": {
      const error = str(obj(item.error)?.message);
      return {
        output: clip(error ?? textOf(obj(item.result)?.content ?? "")),
        isError: status === "failed" || error !== null,
      };
    }
    default:
      return { output: "", isError: status === "failed" };
  }
}

/** The transcript entries of one item: a tool call and its result, a message, reasoning, an error. */
function itemEntries(
  completed: boolean,
  item: Record<string, unknown>,
  started: Set<string>,
  call: (item: Record<string, unknown>, id: string | null) => TranscriptEntry,
): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  const id = str(item.id);
  const kind = str(item.type);
  if (kind && TOOL_ITEMS.has(kind)) {
    if (!completed) {
      if (id) started.add(id);
      entries.push(call(item, id));
    } else {
      if (!id || !started.has(id)) entries.push(call(item, id));
      const r = toolResult(item);
      entries.push({ type: "tool_result", id, output: r.output, is_error: r.isError });
    }
    return entries;
  }
  if (!completed) return entries;
  if (kind === "agent_message") {
    entries.push({ type: "message", role: "assistant", text: clip(str(item.text) ?? "") });
  } else if (kind === "reasoning" || kind === "plan") {
    entries.push({ type: "reasoning", text: clip(str(item.text) ?? "") });
  } else if (kind === "error") {
    entries.push({ type: "error", message: clip(str(item.message) ?? "error", 2000), fatal: false });
  }
  return entries;
}

function parser(): StreamParser {
  const out: StreamOutcome = emptyOutcome();
  const started = new Set<string>();
  const tools = new Set<string>();
  let anonymousTools = 0;
  let turns = 0;
  let failed: string | null = null;
  let lastError: string | null = null;
  let usageSeen = false;
  const trouble = new ApiTrouble();
  let input = 0;
  let cached = 0;
  let output = 0;

  const call = (item: Record<string, unknown>, id: string | null): TranscriptEntry => {
    if (id) tools.add(id);
    else anonymousTools++;
    return { type: "tool_call", id, name: toolName(item), input: toolInput(item) };
  };

  return {
    event(e) {
      const entries: TranscriptEntry[] = [];
      switch (e.type) {
        case "thread.started":
          entries.push({ type: "session", model: null, version: null, session_id: str(e.thread_id) });
          break;
        case "turn.completed": {
          turns++;
          out.complete = true;
          failed = null;
          trouble.answered();
          const u = obj(e.usage);
          if (u) {
            usageSeen = true;
            const inTokens = num(u.input_tokens) ?? 0;
            const cachedTokens = Math.min(num(u.cached_input_tokens) ?? 0, inTokens);
            // OpenAI counts cached tokens inside input_tokens; evalgate's input is the uncached part.
            input += inTokens - cachedTokens;
            cached += cachedTokens;
            output += num(u.output_tokens) ?? 0;
          }
          entries.push({ type: "result", status: "success", text: null, turns, duration_ms: null });
          break;
        }
        case "turn.failed": {
          turns++;
          out.complete = true;
          failed = str(obj(e.error)?.message) ?? "the turn failed";
          trouble.text(failed);
          entries.push({ type: "error", message: clip(failed, 2000), fatal: true });
          entries.push({ type: "result", status: "error", text: null, turns, duration_ms: null });
          break;
        }
        case "error": {
          // Also sent for transient trouble the agent retries ("Reconnecting... 2/5"): fatal only
          // if the run does not complete afterwards.
          lastError = str(e.message) ?? "error";
          trouble.text(lastError);
          entries.push({ type: "error", message: clip(lastError, 2000), fatal: false });
          break;
        }
        case "item.started":
        case "item.completed": {
          const item = obj(e.item);
          if (!item) break;
          const kind = str(item.type);
          // The model's answers (its messages, reasoning, tool calls) come only from a request that worked.
          if (kind && kind !== "error") trouble.answered();
          entries.push(...itemEntries(e.type === "item.completed", item, started, call));
          break;
        }
      }
      return entries;
    },
    finish() {
      out.turns = turns > 0 ? turns : null;
      out.toolCalls = tools.size + anonymousTools;
      if (usageSeen) {
        out.inputTokens = input;
        out.cachedTokens = cached;
        out.outputTokens = output;
      }
      out.error = failed ?? (out.complete ? null : lastError);
      out.infrastructure = trouble.evidence;
      return out;
    },
  };
}

export const codex: Preset = {
  provider: "codex",
  bin: "codex",
  install: "npm install -g @openai/codex",
  npmPackage: "@openai/codex",
  credentials: ["CODEX_API_KEY", "OPENAI_API_KEY", "CODEX_HOME"],
  env: {},
  // Codex 0.16x reads its key from CODEX_API_KEY only (with OPENAI_API_KEY alone it sends no
  // Authorization header): the conventional name, passed through, is given under the one it reads.
  async prepare(env): Promise<Record<string, string>> {
    return !env.CODEX_API_KEY && env.OPENAI_API_KEY ? { CODEX_API_KEY: env.OPENAI_API_KEY } : {};
  },
  argv(target: TargetSpec, env, inEnvironment) {
    const argv = ["exec", "--json", "--color", "never"];
    // It ignores OPENAI_BASE_URL too: a gateway is a config override (a TOML string, quoted).
    if (env.OPENAI_BASE_URL && !target.args.some((a) => a.includes("openai_base_url")))
      argv.push("-c", `openai_base_url=${JSON.stringify(env.OPENAI_BASE_URL)}`);
    if (target.model) argv.push("--model", target.model);
    // workspace-write: edits and commands inside the workspace, no network for commands. A target
    // that sets its own sandbox (or bypasses it inside an already isolated runner) keeps its choice.
    if (
      !hasFlag(target.args, [
        "--sandbox",
        "-s",
        "--dangerously-bypass-approvals-and-sandbox",
        "--yolo",
        "--full-auto",
      ])
    ) {
      // In a case's image the container is the sandbox (codex's own needs a bwrap the image lacks).
      argv.push("--sandbox", inEnvironment ? "danger-full-access" : "workspace-write");
    }
    // `-`: read the prompt from stdin (it must be the last argument).
    return [...argv, ...target.args, "-"];
  },
  versionArgs: ["--version"],
  parser,
};
