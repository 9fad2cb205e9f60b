/**
 * The allow-list proxy and its host list, on loopback: CONNECT and plain HTTP to a listed host go
 * through, everything else is answered 403 and remembered, a client outside the network is closed.
 */
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatAllowedHost, isAllowed, parseAllowedHost } from "../../src/environment/hosts.js";
import { inSubnet } from "../../src/environment/network.js";
import { type AllowListProxy, startAllowListProxy } from "../../src/environment/proxy.js";

describe("allowed hosts", () => {
  it("parses host, host:port, *.domain, IPv4 and bracketed IPv6, lower-cased", () => {
    expect(parseAllowedHost("API.Anthropic.com:443")).toEqual({ host: "api.anthropic.com", port: 443 });
    expect(parseAllowedHost("*.example.com")).toEqual({ host: "*.example.com" });
    expect(parseAllowedHost("10.0.0.1:8080")).toEqual({ host: "10.0.0.1", port: 8080 });
    expect(parseAllowedHost("[::1]:443")).toEqual({ host: "::1", port: 443 });
    expect(parseAllowedHost("::1")).toMatch(/in brackets/);
    expect(parseAllowedHost("http://x.com")).toMatch(/without a scheme/);
    expect(parseAllowedHost("x.com:0")).toMatch(/between 1 and 65535/);
    expect(parseAllowedHost("bad host")).toMatch(/not a host name/);
  });

  it("matches a port only where one is given, and *.domain below the domain only", () => {
    const list = [{ host: "api.example.com", port: 443 }, { host: "*.cdn.example.com" }];
    expect(isAllowed(list, "api.example.com", 443)).toBe(true);
    expect(isAllowed(list, "API.example.com.", 443)).toBe(true);
    expect(isAllowed(list, "api.example.com", 80)).toBe(false);
    expect(isAllowed(list, "a.cdn.example.com", 8443)).toBe(true);
    expect(isAllowed(list, "cdn.example.com", 443)).toBe(false);
    expect(isAllowed(list, "evilcdn.example.com", 443)).toBe(false);
    expect(formatAllowedHost({ host: "::1", port: 1 })).toBe("[::1]:1");
  });

  it("knows which addresses are in a subnet", () => {
    expect(inSubnet("10.89.3.7", "10.89.3.0/24")).toBe(true);
    expect(inSubnet("::ffff:10.89.3.7", "10.89.3.0/24")).toBe(true);
    expect(inSubnet("10.89.4.7", "10.89.3.0/24")).toBe(false);
    expect(inSubnet("127.0.0.1", "10.89.3.0/24")).toBe(false);
  });
});

describe("startAllowListProxy", () => {
  let allowed: http.Server;
  let other: http.Server;
  let allowedPort: number;
  let otherPort: number;
  let proxy: AllowListProxy;
  beforeAll(async () => {
    allowed = http.createServer((req, res) => res.end(`allowed ${req.method} ${req.url}`));
    other = http.createServer((_, res) => res.end("other"));
    await new Promise<void>((r) => allowed.listen(0, "127.0.0.1", r));
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
    allowedPort = (allowed.address() as net.AddressInfo).port;
    otherPort = (other.address() as net.AddressInfo).port;
    proxy = await startAllowListProxy([{ host: "127.0.0.1", port: allowedPort }]);
  });
  afterAll(async () => {
    await proxy.close();
    allowed.close();
    other.close();
  });

  /** A plain HTTP request through the proxy (absolute-form), as curl and wget send it. */
  function viaProxy(url: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: proxy.port, path: url, method: "GET" }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
  }

  /** A CONNECT tunnel, then one HTTP request through it, as HTTPS clients do. */
  function tunnel(port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const s = net.connect(proxy.port, "127.0.0.1", () => {
        s.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      });
      let text = "";
      let sent = false;
      s.on("data", (d) => {
        text += d.toString();
        if (!sent && text.startsWith("HTTP/1.1 200")) {
          sent = true;
          s.write("GET /through HTTP/1.0\r\n\r\n");
        }
      });
      s.on("end", () => resolve(text));
      s.on("error", reject);
    });
  }

  it("lets a listed host through, by plain HTTP and by CONNECT", async () => {
    expect(await viaProxy(`http://127.0.0.1:${allowedPort}/x?y=1`)).toEqual({
      status: 200,
      body: "allowed GET /x?y=1",
    });
    expect(await tunnel(allowedPort)).toContain("allowed GET /through");
  });

  it("answers 403 to any other host or port, and remembers what was refused", async () => {
    const r = await viaProxy(`http://127.0.0.1:${otherPort}/`);
    expect(r.status).toBe(403);
    expect(r.body).toMatch(/not on this target's network allow-list/);
    expect(await tunnel(otherPort)).toMatch(/^HTTP\/1\.1 403/);
    expect(proxy.denied()).toEqual([`127.0.0.1:${otherPort}`]);
  });

  it("closes a client its filter refuses before answering anything", async () => {
    const closed = await startAllowListProxy([{ host: "127.0.0.1" }], "127.0.0.1", () => false);
    try {
      const text = await new Promise<string>((resolve) => {
        const s = net.connect(closed.port, "127.0.0.1", () =>
          s.write("GET http://127.0.0.1/ HTTP/1.0\r\n\r\n"),
        );
        let t = "";
        s.on("data", (d) => (t += d));
        s.on("close", () => resolve(t));
        s.on("error", () => resolve(t));
      });
      expect(text).toBe("");
    } finally {
      await closed.close();
    }
  });
});
