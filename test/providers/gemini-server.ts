/**
 * A local server on 127.0.0.1 that answers like the Gemini API (generativelanguage v1beta):
 * `POST /v1beta/models/M:streamGenerateContent?alt=sse` streams `data: {candidates, usageMetadata}`
 * chunks, checks the API key (`x-goog-api-key` or `?key=`), and plays a scripted tool-using
 * conversation for Gemini CLI. The step is the number of `functionResponse` parts already in the
 * request's contents, so a retried request gets the same answer. Requests without the CLI's tools
 * (its side requests: routing, loop and next-speaker checks, `countTokens`) get a short answer and do
 * not advance the script.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOnLoopback, recordRequest } from "./recorded.js";

export type Part = { text: string } | { functionCall: { name: string; args: Record<string, unknown> } };

export interface GeminiTurn {
  parts: Part[];
  usage?: { prompt: number; cached?: number; output: number };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: {
    contents?: { role?: string; parts?: Record<string, unknown>[] }[];
    tools?: unknown[];
    [k: string]: unknown;
  } | null;
  step: number | null;
}

export interface GeminiServer {
  url: string;
  requests: RecordedRequest[];
  mainRequests(): RecordedRequest[];
  close(): Promise<void>;
}

function sendError(res: ServerResponse, status: number, message: string, reason: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { code: status, message, status: reason } }));
}

function chunk(model: string, turn: GeminiTurn) {
  const u = turn.usage ?? { prompt: 100, output: 20 };
  return {
    candidates: [{ content: { role: "model", parts: turn.parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: u.prompt,
      cachedContentTokenCount: u.cached ?? 0,
      candidatesTokenCount: u.output,
      totalTokenCount: u.prompt + u.output,
    },
    modelVersion: model,
    responseId: `resp_${Date.now()}`,
  };
}

function functionResponses(body: NonNullable<RecordedRequest["body"]>): number {
  return (body.contents ?? []).flatMap((c) => c.parts ?? []).filter((p) => "functionResponse" in p).length;
}

/** A scripted HTTP error instead of a turn (a rate limit, a server error). */
export interface ErrorReply {
  status: number;
  message: string;
  /** The google.rpc status name, e.g. RESOURCE_EXHAUSTED. */
  reason: string;
}

export async function startGeminiServer(opts: {
  apiKey: string;
  script: (GeminiTurn | ErrorReply)[];
}): Promise<GeminiServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const rec: RecordedRequest = await recordRequest<NonNullable<RecordedRequest["body"]>>(req);
    const body = rec.body;
    requests.push(rec);
    const url = new URL(req.url ?? "/", "http://x");
    const m = /^\/v1beta\/models\/([^:/]+):(\w+)$/.exec(url.pathname);
    if (req.method !== "POST" || !m)
      return sendError(res, 404, `Not found: ${req.method} ${url.pathname}`, "NOT_FOUND");
    const key = req.headers["x-goog-api-key"] ?? url.searchParams.get("key");
    if (key !== opts.apiKey)
      return sendError(res, 400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT");
    const [, model, method] = m as unknown as [string, string, string];
    if (!body) return sendError(res, 400, "invalid JSON", "INVALID_ARGUMENT");
    if (method === "countTokens") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ totalTokens: 100 }));
      return;
    }
    const main = Array.isArray(body.tools) && body.tools.length > 0;
    let turn: GeminiTurn;
    if (main) {
      const step = functionResponses(body);
      rec.step = step;
      const scripted = opts.script[step];
      if (!scripted) return sendError(res, 500, `the test server's script has no step ${step}`, "INTERNAL");
      if ("status" in scripted) return sendError(res, scripted.status, scripted.message, scripted.reason);
      turn = scripted;
    } else {
      // Side requests ask for JSON (a routing decision, a next-speaker check): an answer that stops.
      turn = {
        parts: [{ text: JSON.stringify({ next_speaker: "user", reasoning: "done", model_choice: "flash" }) }],
        usage: { prompt: 10, output: 1 },
      };
    }
    if (method === "streamGenerateContent") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(chunk(model, turn))}\r\n\r\n`);
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(chunk(model, turn)));
  });
  return {
    ...(await listenOnLoopback(server)),
    requests,
    mainRequests: () => requests.filter((r) => r.step !== null),
  };
}
