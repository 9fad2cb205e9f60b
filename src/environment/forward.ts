/**
 * A model API on the runner's loopback (a local gateway, the tests' scripted servers) for an agent
 * CLI in a container: the container's 127.0.0.1 is its own, and the runner's loopback cannot be
 * reached from a network at all. For each loopback URL in the agent's environment or command line,
 * evalgate listens on the host, where the container's network reaches it (its gateway), accepts
 * connections from that network's subnet only, and pipes each to the loopback port; the URL is
 * rewritten to the gateway and the listening port (docs/decisions/0217). Under an allow-list only a
 * loopback host:port the list names is forwarded, and the gateway goes into NO_PROXY.
 */
import net from "node:net";
import type { Command } from "../sandbox/commands.js";
import type { ProcessSpec } from "../sandbox/process.js";
import type { Engine } from "./engine.js";
import { isAllowed } from "./hosts.js";
import { type Addressing, type AllowNetwork, defaultAddressing, inSubnet, openPort } from "./network.js";
import type { NetworkPolicy } from "./types.js";

const LOOPBACK_URL = /\b(https?):\/\/(127\.0\.0\.1|localhost|\[::1\])(?::(\d+))?(?=$|[/\s'"`?#])/g;

export interface LoopbackForward {
  /** The text with each forwarded loopback URL pointed at its forwarder. */
  rewrite(text: string): string;
  /** The `host:port` forwarded (as the agent named them). */
  forwarded: string[];
  close(): Promise<void>;
}

interface Found {
  authority: string;
  host: string;
  port: number;
}

/** The loopback URLs in some texts, each host:port once. */
export function loopbackUrls(texts: readonly string[]): Found[] {
  const out = new Map<string, Found>();
  for (const t of texts) {
    for (const m of t.matchAll(LOOPBACK_URL)) {
      const port = m[3] ? Number(m[3]) : m[1] === "https" ? 443 : 80;
      const host = m[2]!;
      out.set(`${host}:${port}`, { authority: `${host}:${port}`, host, port });
    }
  }
  return [...out.values()];
}

async function listen(target: Found, subnet: string): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const connectTo = target.host === "[::1]" ? "::1" : target.host === "localhost" ? "127.0.0.1" : target.host;
  const server = net.createServer((client) => {
    if (!inSubnet(client.remoteAddress ?? "", subnet)) {
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, connectTo);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Every address: the network's bridge may come up only with its first container.
    server.listen(0, "0.0.0.0", () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Forwarders for the loopback URLs in `texts`, reached from `network` (the run's allow network, or
 * the engine's default network's addressing); `allowed` says which host:port may be forwarded.
 */
export async function forwardLoopback(
  texts: readonly string[],
  network: Addressing | AllowNetwork,
  allowed: (host: string, port: number) => boolean = () => true,
): Promise<LoopbackForward | undefined> {
  const wanted = loopbackUrls(texts).filter((f) => allowed(f.host.replace(/^\[|\]$/g, ""), f.port));
  if (wanted.length === 0) return undefined;
  const closers: (() => Promise<void>)[] = [];
  const to = new Map<string, number>();
  try {
    for (const f of wanted) {
      const l = await listen(f, network.subnet);
      closers.push(l.close);
      if ("name" in network) closers.push(await openPort(network, l.port, "the loopback forwarder's"));
      to.set(f.authority, l.port);
    }
  } catch (error) {
    for (const c of closers.reverse()) await c();
    throw error;
  }
  return {
    forwarded: wanted.map((f) => f.authority),
    rewrite: (text) =>
      text.replace(LOOPBACK_URL, (all, scheme: string, host: string, port?: string) => {
        const p = port ? Number(port) : scheme === "https" ? 443 : 80;
        const via = to.get(`${host}:${p}`);
        return via === undefined ? all : `${scheme}://${network.gateway}:${via}`;
      }),
    close: async () => {
      for (const c of closers.reverse()) await c();
    },
  };
}

/** Forwarders for the loopback URLs of a process's command and environment, where its network allows. */
export async function forwardFor(
  setup: { engine: Engine; network: NetworkPolicy; allowNetwork?: AllowNetwork },
  spec: ProcessSpec,
): Promise<LoopbackForward | undefined> {
  const policy = setup.network;
  if (policy === false) return undefined;
  const texts = [
    ...Object.values(spec.env),
    ...("argv" in spec.command ? spec.command.argv : [spec.command.shell]),
  ];
  if (policy === true) {
    const addressing = await defaultAddressing(setup.engine);
    if (addressing) return forwardLoopback(texts, addressing);
    // Not silently: the agent would be left with a loopback URL that is its own container's.
    const urls = loopbackUrls(texts).map((f) => f.authority);
    if (urls.length === 0) return undefined;
    throw new Error(
      `cannot forward ${urls.join(", ")} into the container: ${setup.engine.kind}'s default network names no IPv4 gateway`,
    );
  }
  const network = setup.allowNetwork;
  return network
    ? forwardLoopback(texts, network, (host, port) => isAllowed(policy.allow, host, port))
    : undefined;
}

/** The process with its loopback URLs pointed at their forwarders. */
export function forwardedSpec(spec: ProcessSpec, forward: LoopbackForward): ProcessSpec {
  const env = Object.fromEntries(Object.entries(spec.env).map(([k, v]) => [k, forward.rewrite(v)]));
  const command: Command =
    "argv" in spec.command
      ? { argv: spec.command.argv.map((a) => forward.rewrite(a)) }
      : { shell: forward.rewrite(spec.command.shell) };
  return { ...spec, env, command };
}
