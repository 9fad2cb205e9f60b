/**
 * What an agent in a container may reach, by its target's `sandbox.network`:
 *
 *   false            `--network none`: a loopback interface and nothing else
 *   true             the engine's default network (the runner's network, the internet)
 *   { allow: [...] } an *internal* network (no route off the machine) whose one way out is evalgate's
 *                    allow-list proxy (proxy.ts), reached at the network's gateway address through
 *                    HTTP_PROXY / HTTPS_PROXY; the proxy serves the network's addresses only
 *
 * The internal network is made once per run and removed at its end (or by the next run's sweep).
 * The gateway is the host itself, so a service on the runner that listens on every address would be
 * reachable there too; where evalgate runs as root with iptables, a firewall rule on the network's
 * interface lets through only the live proxies' own ports and DNS (docs/decisions/0211).
 */
import net from "node:net";
import os from "node:os";
import { execa } from "execa";
import { findProgram } from "../sandbox/commands.js";
import { ownedName } from "./cleanup.js";
import { type Engine, engineExec, firstLine } from "./engine.js";
import { type AllowListProxy, startAllowListProxy } from "./proxy.js";
import type { AllowedHost } from "./types.js";

export interface AllowNetwork {
  name: string;
  /** The host's address on the network: where containers reach the proxy. */
  gateway: string;
  /** `10.89.3.0/24`: the only addresses the proxy answers. */
  subnet: string;
  /** The host's interface on the network (podman1, br-…), when the engine said. */
  iface?: string;
  /** The iptables rules that close the host to the network but for the proxies (to delete at the end). */
  firewall?: string[][];
  /** Why there is no such rule: the host's services on all addresses are reachable from the network. */
  firewallGap?: string;
}

/** Whether an IPv4 address lies in `a.b.c.d/n`. */
export function inSubnet(address: string, subnet: string): boolean {
  const [base, bitsText] = subnet.split("/");
  const bits = Number(bitsText);
  const v4 = address.replace(/^::ffff:/, "");
  if (!net.isIPv4(v4) || !base || !net.isIPv4(base) || !(bits >= 0 && bits <= 32)) return false;
  const toInt = (ip: string) => ip.split(".").reduce((n, part) => (n << 8) + Number(part), 0) >>> 0;
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (toInt(v4) & mask) === (toInt(base) & mask);
}

export type Addressing = { gateway: string; subnet: string; iface?: string };

/** The first host address of an IPv4 subnet (`172.17.0.0/16` → `172.17.0.1`). */
function firstHost(subnet: string): string | undefined {
  const [base, bits] = subnet.split("/");
  if (!base || !net.isIPv4(base) || Number(bits) > 30) return undefined;
  const n = (base.split(".").reduce((a, part) => (a << 8) + Number(part), 0) >>> 0) + 1;
  return [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join(".");
}

/**
 * Docker's default `bridge` network names no gateway in its IPAM config (only the subnet): the
 * gateway is the bridge interface's own address on this host (`--bip` may make it any address of
 * the subnet), else the subnet's first address, which is Docker's default.
 */
function bridgeAddress(
  iface: string | undefined,
  subnet: string,
  interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]>,
): string | undefined {
  const own = (iface ? (interfaces[iface] ?? []) : []).find(
    (a) => a.family === "IPv4" && inSubnet(a.address, subnet),
  );
  return own?.address ?? firstHost(subnet);
}

/** The gateway, subnet and host interface of a network, from the engine's `network inspect`. */
export function addressingOf(
  kind: Engine["kind"],
  text: string,
  interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces(),
): Addressing | undefined {
  try {
    const [info] = JSON.parse(text) as Record<string, unknown>[];
    if (kind === "podman") {
      const subnets = (info?.subnets ?? []) as { subnet?: string; gateway?: string }[];
      const v4 = subnets.find((s) => s.gateway && net.isIPv4(s.gateway));
      const iface = typeof info?.network_interface === "string" ? info.network_interface : undefined;
      return v4?.gateway && v4.subnet
        ? { gateway: v4.gateway, subnet: v4.subnet, ...(iface ? { iface } : {}) }
        : undefined;
    }
    const ipam = (info?.IPAM ?? {}) as { Config?: { Subnet?: string; Gateway?: string }[] };
    const options = (info?.Options ?? {}) as Record<string, string>;
    const id = typeof info?.Id === "string" ? info.Id : "";
    const iface = options["com.docker.network.bridge.name"] ?? (id ? `br-${id.slice(0, 12)}` : undefined);
    const v4 = (ipam.Config ?? []).find((c) => c.Subnet && net.isIPv4(c.Subnet.split("/")[0] ?? ""));
    const gateway =
      v4?.Gateway && net.isIPv4(v4.Gateway)
        ? v4.Gateway
        : v4?.Subnet && info?.Driver === "bridge"
          ? bridgeAddress(iface, v4.Subnet, interfaces)
          : undefined;
    return gateway && v4?.Subnet ? { gateway, subnet: v4.Subnet, ...(iface ? { iface } : {}) } : undefined;
  } catch {
    return undefined;
  }
}

function iptablesProgram(): string | undefined {
  return findProgram("iptables", process.env.PATH ?? "") ?? findProgram("iptables", "/usr/sbin:/sbin");
}

/** Every rule evalgate adds names its network, so deleting one never takes another run's twin. */
const tagged = (network: string, match: string[], target: string): string[] => [
  ...match,
  "-m",
  "comment",
  "--comment",
  `evalgate ${network}`,
  "-j",
  target,
];

async function addRules(rules: readonly string[][]): Promise<string[][] | string> {
  const iptables = iptablesProgram();
  if (!iptables) return "iptables is not installed";
  const added: string[][] = [];
  for (const rule of rules) {
    const r = await execa(iptables, ["-w", "-I", "INPUT", ...rule], { reject: false, timeout: 30_000 });
    if (r.exitCode !== 0) {
      await deleteRules(added);
      return `iptables refused a rule: ${String(r.stderr).split("\n")[0]}`;
    }
    added.push(rule);
  }
  return added;
}

async function deleteRules(rules: readonly string[][]): Promise<void> {
  const iptables = iptablesProgram();
  if (!iptables) return;
  for (const rule of rules)
    await execa(iptables, ["-w", "-D", "INPUT", ...rule], { reject: false, timeout: 30_000 });
}

/**
 * Closes the host to the network's interface but for DNS. Each proxy opens its own port while it
 * lives (`proxyFor`): a service of the runner's on any other port stays closed. Returns the rules
 * added (to delete at the end), or why none could be.
 */
async function closeHost(name: string, iface: string | undefined): Promise<string[][] | string> {
  if (!iface) return "the engine did not name the network's interface";
  if (process.getuid?.() !== 0) return "evalgate does not run as root";
  // Inserted at the top in reverse: the accepts end up above the reject.
  return addRules([
    tagged(name, ["-i", iface], "REJECT"),
    tagged(name, ["-i", iface, "-p", "udp", "--dport", "53"], "ACCEPT"),
    tagged(name, ["-i", iface, "-p", "tcp", "--dport", "53"], "ACCEPT"),
  ]);
}

/** Makes the run's internal network; a string says why it cannot be made. */
export async function createAllowNetwork(engine: Engine): Promise<AllowNetwork | string> {
  const name = ownedName("allow");
  const made = await engineExec(engine, ["network", "create", "--internal", name], { timeoutMs: 60_000 });
  if (made.exitCode !== 0)
    return `cannot make an internal network for network allow-lists: ${firstLine(made)}`;
  const r = await engineExec(engine, ["network", "inspect", name], { timeoutMs: 60_000 });
  const g = r.exitCode === 0 ? addressingOf(engine.kind, r.stdout) : undefined;
  if (!g) {
    await engineExec(engine, ["network", "rm", "-f", name], { timeoutMs: 60_000 });
    return `the internal network ${name} has no IPv4 gateway address for the allow-list proxy`;
  }
  const network: AllowNetwork = { name, ...g };
  const closed = await closeHost(name, g.iface);
  if (typeof closed === "string") network.firewallGap = closed;
  else network.firewall = closed;
  return network;
}

export async function removeAllowNetwork(engine: Engine, network: AllowNetwork): Promise<void> {
  if (network.firewall) await deleteRules(network.firewall);
  await engineExec(engine, ["network", "rm", "-f", network.name], { timeoutMs: 60_000 });
}

/**
 * A proxy for one container on the allow network. It listens on every address of the host (the
 * network's bridge may come up only with its first container, so its gateway address cannot be
 * bound before) and refuses every connection that does not come from the network's subnet.
 */
export async function proxyFor(
  network: AllowNetwork,
  allow: readonly AllowedHost[],
): Promise<AllowListProxy> {
  const proxy = await startAllowListProxy(allow, "0.0.0.0", (remote) => inSubnet(remote, network.subnet));
  const url = `http://${network.gateway}:${proxy.port}`;
  let closePort: () => Promise<void>;
  try {
    closePort = await openPort(network, proxy.port, "the allow-list proxy's");
  } catch (error) {
    await proxy.close();
    throw error;
  }
  return {
    ...proxy,
    url,
    close: async () => {
      await closePort();
      await proxy.close();
    },
  };
}

/** Opens one port of the host to the network (where its firewall closes the rest); returns its undo. */
export async function openPort(
  network: AllowNetwork,
  port: number,
  whose: string,
): Promise<() => Promise<void>> {
  if (!network.firewall || !network.iface) return async () => undefined;
  const opened = await addRules([
    tagged(network.name, ["-i", network.iface, "-p", "tcp", "--dport", String(port)], "ACCEPT"),
  ]);
  if (typeof opened === "string")
    throw new Error(`cannot open ${whose} port ${port} to ${network.name}: ${opened}`);
  return () => deleteRules(opened);
}

const defaults = new Map<string, Promise<Addressing | undefined>>();

/** The gateway and subnet of the engine's default network (`network: true`), asked once. */
export function defaultAddressing(engine: Engine): Promise<Addressing | undefined> {
  const key = `${engine.program} ${engine.kind}`;
  let p = defaults.get(key);
  if (!p) {
    const name = engine.kind === "podman" ? "podman" : "bridge";
    p = engineExec(engine, ["network", "inspect", name], { timeoutMs: 60_000 }).then((r) =>
      r.exitCode === 0 ? addressingOf(engine.kind, r.stdout) : undefined,
    );
    defaults.set(key, p);
  }
  return p;
}
