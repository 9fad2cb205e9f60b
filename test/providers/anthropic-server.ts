/**
 * A local server on 127.0.0.1 that answers like Anthropic's Messages API with SSE streaming
 * (`message_start`, `content_block_*` with `text_delta` / `input_json_delta`, `message_delta` with
 * the stop reason and output tokens, `message_stop`), checks the API key, and plays a scripted
 * tool-using conversation.
 *
 * The step of the conversation is the number of assistant turns already in the request's messages,
 * so a retried request gets the same answer. Requests that are not part of the agent's main
 * conversation (no tools offered: title generation, command-prefix checks, quota probes) get a short
 * text answer and do not advance the script.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOnLoopback, recordRequest } from "./recorded.js";

export type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; name: string; input: Record<string, unknown> };

export interface Turn {
  blocks: Block[];
  usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number };
}

export type Reply = Turn | { status: number; errorType: string; message: string };
/** A reply, or a function of the agent's working directory (read from its system prompt). */
export type Step = Reply | ((ctx: { cwd: string | null }) => Reply);

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: {
    model?: string;
    stream?: boolean;
    tools?: { name: string }[];
    messages?: { role: string; content: unknown }[];
    [k: string]: unknown;
  } | null;
  /** The script step this request was answered with, or null for side requests. */
  step: number | null;
}

export interface AnthropicServer {
  url: string;
  requests: RecordedRequest[];
  /** Main-conversation requests only. */
  mainRequests(): RecordedRequest[];
  close(): Promise<void>;
}

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json", "request-id": `req_${Date.now()}` });
  res.end(JSON.stringify({ type: "error", error: { type, message } }));
}

let ids = 0;

/** Claude Code tells the model its working directory in the system prompt ("Working directory: …"). */
function workingDirectory(body: NonNullable<RecordedRequest["body"]>): string | null {
  // 2.0.x: "Working directory: /…" in the system prompt; 2.1.x: " - Primary working directory: /…",
  // in the system prompt or the first user message.
  const system = JSON.stringify([body.system ?? "", body.messages?.[0] ?? ""]);
  return /[Ww]orking directory: ([^\\"]+)/.exec(system)?.[1]?.trim() ?? null;
}

/** Claude Code warms its prompt cache with a "Warmup" message; that is not the conversation. */
function isWarmup(body: NonNullable<RecordedRequest["body"]>): boolean {
  const first = body.messages?.[0]?.content;
  const text =
    typeof first === "string" ? first : Array.isArray(first) ? (first[0] as { text?: string })?.text : "";
  return text === "Warmup";
}

function streamTurn(res: ServerResponse, model: string, turn: Turn): void {
  const usage = turn.usage ?? { input_tokens: 100, output_tokens: 20 };
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "request-id": `req_${++ids}`,
  });
  sse(res, "message_start", {
    type: "message_start",
    message: {
      id: `msg_${String(++ids).padStart(6, "0")}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
        output_tokens: 1,
      },
    },
  });
  turn.blocks.forEach((block, index) => {
    if (block.type === "text") {
      sse(res, "content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "text", text: "" },
      });
      sse(res, "content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text: block.text },
      });
    } else {
      sse(res, "content_block_start", {
        type: "content_block_start",
        index,
        content_block: {
          type: "tool_use",
          id: `toolu_${String(++ids).padStart(6, "0")}`,
          name: block.name,
          input: {},
        },
      });
      const json = JSON.stringify(block.input);
      // Sent in two pieces, as the real API splits partial JSON.
      const cut = Math.floor(json.length / 2);
      for (const part of [json.slice(0, cut), json.slice(cut)]) {
        sse(res, "content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: part },
        });
      }
    }
    sse(res, "content_block_stop", { type: "content_block_stop", index });
  });
  const toolUse = turn.blocks.some((b) => b.type === "tool_use");
  sse(res, "message_delta", {
    type: "message_delta",
    delta: { stop_reason: toolUse ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  sse(res, "message_stop", { type: "message_stop" });
  res.end();
}

export async function startAnthropicServer(opts: {
  apiKey: string;
  script: Step[];
}): Promise<AnthropicServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const rec: RecordedRequest = await recordRequest<NonNullable<RecordedRequest["body"]>>(req);
    const body = rec.body;
    requests.push(rec);
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "HEAD" || (req.method === "GET" && url.pathname === "/")) {
      res.writeHead(200).end();
      return;
    }
    if (req.method !== "POST" || !url.pathname.startsWith("/v1/messages")) {
      return sendError(res, 404, "not_found_error", `Not found: ${req.method} ${url.pathname}`);
    }
    const key = req.headers["x-api-key"] ?? String(req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (key !== opts.apiKey) return sendError(res, 401, "authentication_error", "invalid x-api-key");
    if (!body || typeof body.model !== "string" || !Array.isArray(body.messages)) {
      return sendError(res, 400, "invalid_request_error", "model and messages are required");
    }
    if (url.pathname === "/v1/messages/count_tokens") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ input_tokens: 100 }));
      return;
    }
    const main = (body.tools ?? []).some((t) => t.name === "Write" || t.name === "Bash") && !isWarmup(body);
    if (!main) {
      const side: Turn = {
        blocks: [{ type: "text", text: "none" }],
        usage: { input_tokens: 10, output_tokens: 1 },
      };
      if (body.stream) return streamTurn(res, body.model, side);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `msg_side_${++ids}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content: [{ type: "text", text: "none" }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 1 },
        }),
      );
      return;
    }
    const step = body.messages.filter((m) => m.role === "assistant").length;
    rec.step = step;
    const scripted = opts.script[step];
    const reply = typeof scripted === "function" ? scripted({ cwd: workingDirectory(body) }) : scripted;
    if (!reply) return sendError(res, 500, "api_error", `the test server's script has no step ${step}`);
    if ("status" in reply) return sendError(res, reply.status, reply.errorType, reply.message);
    if (!body.stream) return sendError(res, 400, "invalid_request_error", "this server only streams");
    streamTurn(res, body.model, reply);
  });
  return {
    ...(await listenOnLoopback(server)),
    requests,
    mainRequests: () => requests.filter((r) => r.step !== null),
  };
}
