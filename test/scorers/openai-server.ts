/**
 * A local server on 127.0.0.1 that answers like OpenAI's chat-completions API: the same request
 * checks (API key, JSON body, model, messages), the same error bodies, and a script of answers
 * per request (verdicts, malformed content, 429 with Retry-After, 5xx, slow answers).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Reply =
  /** 200 with this message content. */
  | { content: string; usage?: { prompt_tokens: number; completion_tokens: number; cost?: number } }
  /** 200 whose body is not JSON at all (a broken proxy). */
  | { rawBody: string }
  /** An HTTP error with OpenAI's error body. */
  | { status: number; message?: string; headers?: Record<string, string> }
  /** Waits, then answers (or never answers when `then` is absent). */
  | { delayMs: number; then?: Reply };

export interface RecordedRequest {
  at: number;
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: { model?: string; messages?: { role: string; content: string }[]; [k: string]: unknown } | null;
}

export interface OpenAIServer {
  /** The base_url to configure: http://127.0.0.1:PORT/v1 */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

const ERROR_TYPES: Record<number, [string, string | null]> = {
  400: ["invalid_request_error", null],
  401: ["invalid_request_error", "invalid_api_key"],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
  500: ["server_error", null],
  502: ["server_error", null],
  503: ["server_error", null],
};

export async function startOpenAIServer(opts: {
  apiKey?: string;
  models?: string[];
  script: Reply[];
}): Promise<OpenAIServer> {
  const requests: RecordedRequest[] = [];
  const script = [...opts.script];
  const models = opts.models ?? ["judge-1"];

  async function answer(reply: Reply, req: RecordedRequest, res: ServerResponse): Promise<void> {
    if ("delayMs" in reply) {
      await sleep(reply.delayMs);
      if (res.destroyed || res.writableEnded) return;
      if (reply.then) await answer(reply.then, req, res);
      return;
    }
    if ("rawBody" in reply) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(reply.rawBody);
      return;
    }
    if ("status" in reply) {
      const [type, code] = ERROR_TYPES[reply.status] ?? ["server_error", null];
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(
        JSON.stringify({
          error: { message: reply.message ?? `status ${reply.status}`, type, param: null, code },
        }),
      );
      return;
    }
    const prompt = (req.body?.messages ?? []).reduce((n, m) => n + m.content.length, 0);
    const usage = reply.usage ?? {
      prompt_tokens: Math.ceil(prompt / 4),
      completion_tokens: Math.ceil(reply.content.length / 4),
    };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: req.body?.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: reply.content },
            logprobs: null,
            finish_reason: "stop",
          },
        ],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }),
    );
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: RecordedRequest["body"] = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    const rec: RecordedRequest = {
      at: performance.now(),
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body,
    };
    requests.push(rec);
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      return sendError(
        res,
        404,
        `Unknown request URL: ${req.method} ${req.url}`,
        "invalid_request_error",
        "unknown_url",
      );
    }
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendError(res, 401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key");
    }
    if (!String(req.headers["content-type"] ?? "").startsWith("application/json") || body === null) {
      return sendError(
        res,
        400,
        "We could not parse the JSON body of your request.",
        "invalid_request_error",
        null,
      );
    }
    if (typeof body.model !== "string") {
      return sendError(res, 400, "you must provide a model parameter", "invalid_request_error", null);
    }
    const messages = body.messages;
    if (
      !Array.isArray(messages) ||
      messages.length === 0 ||
      !messages.every(
        (m) => ["system", "user", "assistant"].includes(m?.role) && typeof m.content === "string",
      )
    ) {
      return sendError(
        res,
        400,
        "Invalid 'messages': expected an array of messages",
        "invalid_request_error",
        null,
      );
    }
    if (!models.includes(body.model)) {
      return sendError(
        res,
        404,
        `The model \`${body.model}\` does not exist.`,
        "invalid_request_error",
        "model_not_found",
      );
    }
    const reply = script.shift();
    if (!reply) return sendError(res, 500, "the test server's script is exhausted", "server_error", null);
    await answer(reply, rec, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
