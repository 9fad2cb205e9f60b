/**
 * The hosts of `network: { allow: [host[:port], …] }`: parsed once from the eval file, matched by
 * the allow-list proxy (proxy.ts) against every host an agent asks for.
 */
import net from "node:net";
import type { AllowedHost } from "./types.js";

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * `host`, `host:port`, `*.domain`, `[::1]:443`, an IPv4 address: the entry, or the reason it is not
 * one (for the planner's message).
 */
export function parseAllowedHost(text: string): AllowedHost | string {
  const t = text.trim().toLowerCase();
  if (t.includes("://") || t.includes("/")) return "a host and optional port, without a scheme or path";
  let host = t;
  let portText: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(t);
  if (bracket) {
    host = bracket[1]!;
    portText = bracket[2];
    if (net.isIPv6(host)) return withPort({ host }, portText);
    return `${text} is not an IPv6 address`;
  }
  if (net.isIPv6(t)) return "an IPv6 address goes in brackets: [::1]:443";
  const colon = t.lastIndexOf(":");
  if (colon >= 0) {
    host = t.slice(0, colon);
    portText = t.slice(colon + 1);
  }
  if (net.isIPv4(host)) return withPort({ host }, portText);
  const name = host.startsWith("*.") ? host.slice(2) : host;
  const labels = name.split(".");
  if (name.length === 0 || name.length > 253 || !labels.every((l) => LABEL.test(l))) {
    return `${text} is not a host name (letters, digits, '-', '.'; *.domain for every name below domain)`;
  }
  return withPort({ host }, portText);
}

function withPort(h: AllowedHost, portText: string | undefined): AllowedHost | string {
  if (portText === undefined) return h;
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535)
    return `port ${portText} is not between 1 and 65535`;
  return { ...h, port };
}

/** Whether `host:port` (as a client asked for it) is on the list. */
export function isAllowed(list: readonly AllowedHost[], host: string, port: number): boolean {
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  return list.some((a) => {
    if (a.port !== undefined && a.port !== port) return false;
    if (a.host.startsWith("*.")) return h.endsWith(a.host.slice(1));
    return a.host === h;
  });
}

/** `host[:port]` as written back for messages and the bundle. */
export function formatAllowedHost(a: AllowedHost): string {
  const host = net.isIPv6(a.host) ? `[${a.host}]` : a.host;
  return a.port === undefined ? host : `${host}:${a.port}`;
}
