/**
 * A real git smart-HTTP server on 127.0.0.1 for tests: `git http-backend` (git's own CGI program)
 * behind a node http server that demands `Authorization: Basic base64(x-access-token:TOKEN)` on
 * every request, as GitHub does for private repositories, and answers 401 otherwise.
 */
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface GitHttpServer {
  /** Base URL; a bare repository `R` under the project root is at `${url}/R`. */
  url: string;
  /** Every request: its path and whether it carried the right credentials. */
  requests: { method: string; path: string; authorized: boolean; authorization?: string }[];
  close(): Promise<void>;
}

export async function startGitHttpServer(projectRoot: string, token: string): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  const requests: GitHttpServer["requests"] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    const authorization = req.headers.authorization;
    const authorized = authorization === expected;
    requests.push({
      method: req.method ?? "GET",
      path: u.pathname,
      authorized,
      ...(authorization ? { authorization } : {}),
    });
    if (!authorized) {
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="evalgate-test"', "Content-Type": "text/plain" });
      res.end("authentication required\n");
      return;
    }
    const child = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: "1",
        REQUEST_METHOD: req.method ?? "GET",
        PATH_INFO: decodeURIComponent(u.pathname),
        QUERY_STRING: u.search.replace(/^\?/, ""),
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"] ?? ""),
        GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
        REMOTE_ADDR: "127.0.0.1",
        REMOTE_USER: "x-access-token",
      },
      stdio: ["pipe", "pipe", "inherit"],
    });
    req.pipe(child.stdin);
    // CGI output: header lines, a blank line, then the body.
    let head = Buffer.alloc(0);
    let streaming = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (streaming) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
      streaming = true;
    });
    child.stdout.on("end", () => res.end());
    child.on("error", () => {
      res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
