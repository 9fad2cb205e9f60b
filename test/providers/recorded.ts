/** What the scripted model servers keep of each request: its line, headers and JSON body. */
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Recorded<Body> {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  /** The parsed JSON body; null when there was none or it was not JSON. */
  body: Body | null;
  /** The script step that answered, once one did. */
  step: number | null;
}

/** Reads the whole request and records it (the body as JSON when it parses). */
export async function recordRequest<Body>(req: IncomingMessage): Promise<Recorded<Body>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  let body: Body | null = null;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Body;
  } catch {
    body = null;
  }
  return { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, step: null };
}

/** Starts `server` on a free loopback port; `close` also ends the connections an agent kept open. */
export async function listenOnLoopback(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
