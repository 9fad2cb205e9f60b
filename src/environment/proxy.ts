/**
 * The allow-list proxy: an HTTP proxy (CONNECT for TLS and any other TCP, absolute-form requests for
 * plain HTTP) that connects only to the hosts of `network: { allow: [...] }` and answers 403 to the
 * rest. An agent in an allow-list environment has no route anywhere else (network.ts): this proxy,
 * reached through HTTP_PROXY / HTTPS_PROXY, is its one way out, so a program that ignores those
 * variables reaches nothing at all (docs/decisions/0211).
 */
import http from "node:http";
import net from "node:net";
import { formatAllowedHost, isAllowed } from "./hosts.js";
import type { AllowedHost } from "./types.js";

export interface AllowListProxy {
  /** `http://address:port`, for the proxy variables. */
  url: string;
  port: number;
  /** `host:port` the agent asked for and was refused, in order, each once. */
  denied(): string[];
  close(): Promise<void>;
}

/** Splits `host:port` (or `[v6]:port`) of a CONNECT line; undefined when it is not one. */
function hostPort(authority: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(authority);
  if (!m) return undefined;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1]!.replace(/^\[|\]$/g, ""), port } : undefined;
}

const HOP_BY_HOP = ["proxy-connection", "proxy-authorization", "connection", "keep-alive"];

/**
 * Starts a proxy on `address` (a port of the system's choosing) letting through `allow` only. A
 * connection from an address `client` refuses is closed before a byte is read.
 */
export async function startAllowListProxy(
  allow: readonly AllowedHost[],
  address = "127.0.0.1",
  client: (remoteAddress: string) => boolean = () => true,
): Promise<AllowListProxy> {
  const denied = new Set<string>();
  const sockets = new Set<net.Socket>();
  const refuse = (what: string) => {
    denied.add(what);
    return `evalgate: ${what} is not on this target's network allow-list (${allow.map(formatAllowedHost).join(", ") || "empty"})`;
  };
  const server = http.createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("evalgate: a proxy request needs an absolute URL\n");
      return;
    }
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (url.protocol !== "http:" || !isAllowed(allow, host, port)) {
      res.writeHead(403, { "content-type": "text/plain" }).end(`${refuse(`${host}:${port}`)}\n`);
      return;
    }
    const headers = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    const upstream = http.request(
      { host, port, method: req.method, path: `${url.pathname}${url.search}`, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", (e) => {
      if (!res.headersSent) res.writeHead(502).end(`evalgate proxy: ${e.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  });
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const target = hostPort(req.url ?? "");
    if (!target || !isAllowed(allow, target.host, target.port)) {
      const why = target ? refuse(`${target.host}:${target.port}`) : "evalgate: CONNECT needs host:port";
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${why}\n`);
      return;
    }
    let established = false;
    const upstream = net.connect(target.port, target.host, () => {
      established = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", (e) => {
      if (!established && client.writable) {
        client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nevalgate proxy: ${e.message}\n`);
      } else client.destroy();
    });
  });
  // A plain HTTP client's keep-alive connections must not hold the proxy open at close.
  server.on("connection", (s: net.Socket) => {
    if (!client(s.remoteAddress ?? "")) {
      s.destroy();
      return;
    }
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, address, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;
  const shown = net.isIPv6(address) ? `[${address}]` : address;
  return {
    url: `http://${shown}:${port}`,
    port,
    denied: () => [...denied],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The variables that point HTTP clients (curl, pip, npm, the agent CLIs) at the proxy. */
export function proxyVariables(url: string): Record<string, string> {
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    NO_PROXY: "",
    no_proxy: "",
  };
}
