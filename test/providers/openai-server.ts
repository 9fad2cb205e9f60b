/**
 * A local server on 127.0.0.1 that answers like OpenAI's Responses API with SSE streaming
 * (`response.created`, `response.output_item.added` / `.done` per output item, `response.completed`
 * with usage), checks the Bearer key, and plays a scripted tool-using conversation for Codex.
 *
 * The step of the conversation is the number of tool outputs (`function_call_output` and
 * `custom_tool_call_output` items) already in the request's input, so a retried request gets the same
 * answer. A WebSocket upgrade gets 404, as from a server without the realtime transport: Codex then
 * falls back to SSE over HTTP.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOnLoopback, recordRequest } from "./recorded.js";

export type OutputItem =
  | { type: "message"; text: string }
  | { type: "function_call"; name: string; arguments: Record<string, unknown> }
  /** A freeform tool call, such as Codex 0.16x's `exec` (JavaScript that calls tools.exec_command). */
  | { type: "custom_tool_call"; name: string; input: string };

export interface ResponseTurn {
  items: OutputItem[];
  usage?: { input_tokens: number; cached_tokens?: number; output_tokens: number };
}

/** A scripted HTTP error instead of a turn (a rate limit, a server error). */
export interface ErrorReply {
  status: number;
  message: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: {
    model?: string;
    stream?: boolean;
    input?: unknown[];
    tools?: unknown[];
    [k: string]: unknown;
  } | null;
  step: number | null;
}

export interface OpenAIServer {
  url: string;
  requests: RecordedRequest[];
  mainRequests(): RecordedRequest[];
  close(): Promise<void>;
}

let ids = 0;

function sse(res: ServerResponse, data: { type: string; [k: string]: unknown }): void {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify({ sequence_number: ++ids, ...data })}\n\n`);
}

function sendError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type: "invalid_request_error", code: null } }));
}

function wireItem(item: OutputItem): Record<string, unknown> {
  const id = ++ids;
  if (item.type === "message") {
    return {
      type: "message",
      id: `msg_${id}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: item.text, annotations: [] }],
    };
  }
  if (item.type === "custom_tool_call") {
    return {
      type: "custom_tool_call",
      id: `ctc_${id}`,
      status: "completed",
      call_id: `call_${id}`,
      name: item.name,
      input: item.input,
    };
  }
  return {
    type: "function_call",
    id: `fc_${id}`,
    status: "completed",
    call_id: `call_${id}`,
    name: item.name,
    arguments: JSON.stringify(item.arguments),
  };
}

function streamTurn(res: ServerResponse, model: string, turn: ResponseTurn): void {
  const u = turn.usage ?? { input_tokens: 100, output_tokens: 20 };
  const id = `resp_${++ids}`;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const base = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model };
  sse(res, { type: "response.created", response: { ...base, status: "in_progress", output: [] } });
  const output = turn.items.map(wireItem);
  output.forEach((item, output_index) => {
    sse(res, { type: "response.output_item.added", output_index, item: { ...item, status: "in_progress" } });
    sse(res, { type: "response.output_item.done", output_index, item });
  });
  sse(res, {
    type: "response.completed",
    response: {
      ...base,
      status: "completed",
      output,
      usage: {
        input_tokens: u.input_tokens,
        input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
        output_tokens: u.output_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: u.input_tokens + u.output_tokens,
      },
    },
  });
  res.end();
}

function toolOutputs(input: unknown[] | undefined): number {
  return (input ?? []).filter((i) => {
    const t = (i as { type?: string }).type;
    return t === "function_call_output" || t === "custom_tool_call_output";
  }).length;
}

export async function startOpenAIServer(opts: {
  apiKey: string;
  script: (ResponseTurn | ErrorReply)[];
}): Promise<OpenAIServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const rec: RecordedRequest = await recordRequest<NonNullable<RecordedRequest["body"]>>(req);
    const body = rec.body;
    requests.push(rec);
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method !== "POST" || !url.pathname.endsWith("/responses")) {
      return sendError(res, 404, `Not found: ${req.method} ${url.pathname}`);
    }
    if (req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendError(res, 401, "Incorrect API key provided");
    }
    if (!body || typeof body.model !== "string" || !Array.isArray(body.input)) {
      return sendError(res, 400, "model and input are required");
    }
    const step = toolOutputs(body.input);
    rec.step = step;
    const turn = opts.script[step];
    if (!turn) return sendError(res, 500, `the test server's script has no step ${step}`);
    if ("status" in turn) return sendError(res, turn.status, turn.message);
    streamTurn(res, body.model, turn);
  });
  return {
    ...(await listenOnLoopback(server)),
    requests,
    mainRequests: () => requests.filter((r) => r.step !== null),
  };
}
