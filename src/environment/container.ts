/**
 * A `ProcessRunner` whose every process runs in a fresh container of one image: the folders it is
 * given mounted where the image sees them (the workspace at `workdir`), exactly the environment it
 * is given (PATH excepted: the image's own), the network its target allows, the case's resources,
 * and a timeout that stops the container (its whole PID namespace) and removes it. Paths in the
 * command, the working folder and the environment are rewritten from the host's to the container's.
 */
import { statSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "../sandbox/commands.js";
import type { ProcessOutcome, ProcessRunner, ProcessSpec } from "../sandbox/process.js";
import type { Cgroup, CgroupHost } from "./cgroup.js";
import { makeCgroup } from "./cgroup.js";
import { ownedName, removeContainer, trackContainer, untrackContainer } from "./cleanup.js";
import { runWatched, seconds } from "./container-watch.js";
import { type Engine, engineExec, isEngineVariable } from "./engine.js";
import { forwardedSpec, forwardFor, type LoopbackForward } from "./forward.js";
import type { PreparedImage } from "./image.js";
import { type AllowNetwork, proxyFor } from "./network.js";
import { type AllowListProxy, proxyVariables } from "./proxy.js";
import { engineResourceFlags, limitHitOf } from "./resources.js";
import type { NetworkPolicy, ResourceSpec } from "./types.js";

export interface Mount {
  host: string;
  container: string;
  readOnly?: boolean;
}

export interface ContainerSetup {
  engine: Engine;
  image: PreparedImage;
  /** Part of each container's name (the case and attempt), for `docker ps` and the sweep. */
  label: string;
  mounts: Mount[];
  network: NetworkPolicy;
  /** The run's internal network, for an allow-list. */
  allowNetwork?: AllowNetwork;
  resources?: ResourceSpec;
  /** Where evalgate may make cgroups: each container gets one as its parent, to read what it used. */
  cgroups?: CgroupHost;
  /** Host paths never shown, even inside a read-only mount (the answer key, the run's state). */
  hidden?: readonly string[];
  /** A URL on the runner's loopback in the command or its environment is forwarded (forward.ts). */
  forwardLoopback?: boolean;
}

/** The container path of a host path under one of the mounts (the deepest), or undefined. */
export function toContainerPath(mounts: readonly Mount[], hostPath: string): string | undefined {
  const best = deepestMount(mounts, hostPath);
  return best ? best.container + hostPath.slice(best.host.length) : undefined;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The deepest mount holding a host path. */
function deepestMount(mounts: readonly Mount[], hostPath: string): Mount | undefined {
  let best: Mount | undefined;
  for (const m of mounts) {
    if (
      (hostPath === m.host || hostPath.startsWith(`${m.host}/`)) &&
      (!best || m.host.length > best.host.length)
    )
      best = m;
  }
  return best;
}

/** Every mounted host path inside `text` (a shell line, a variable) rewritten to the container's. */
export function rewritePaths(mounts: readonly Mount[], text: string): string {
  const sorted = [...mounts].sort((a, b) => b.host.length - a.host.length);
  if (sorted.length === 0) return text;
  const re = new RegExp(`(${sorted.map((m) => escapeRegExp(m.host)).join("|")})(?=$|[/\\s'"\`:;=)])`, "g");
  return text.replace(re, (host) => sorted.find((m) => m.host === host)!.container);
}

function argvIn(mounts: readonly Mount[], command: Command): string[] {
  if ("shell" in command) return ["/bin/sh", "-c", rewritePaths(mounts, command.shell)];
  return command.argv.map((a) => rewritePaths(mounts, a));
}

/**
 * The engine's environment flags: each variable by name only (`-e NAME`), its value passed in the
 * engine program's own environment, so a secret never appears on a command line. Names the engine's
 * program reads itself (HOME, TMPDIR, …) go as `-e NAME=value`: they are paths, not secrets.
 */
export function envFlags(
  mounts: readonly Mount[],
  env: Record<string, string>,
  extra: Record<string, string> = {},
): { flags: string[]; values: Record<string, string> } {
  const flags: string[] = [];
  const values: Record<string, string> = {};
  for (const [name, raw] of Object.entries({ ...env, ...extra })) {
    // The image's own PATH finds the image's programs; the runner's would point at folders it lacks.
    if (name === "PATH") continue;
    const value = rewritePaths(mounts, raw);
    if (isEngineVariable(name)) flags.push("-e", `${name}=${value}`);
    else {
      flags.push("-e", name);
      values[name] = value;
    }
  }
  return { flags, values };
}

function mountFlags(mounts: readonly Mount[], hidden: readonly string[], engine: Engine["kind"]): string[] {
  const flags = mounts.flatMap((m) => {
    if (m.host.includes(":") || m.container.includes(":")) {
      throw new Error(`internal: a mount path holds ':' (${m.host} → ${m.container})`);
    }
    return ["-v", `${m.host}:${m.container}:${m.readOnly ? "ro" : "rw"}`];
  });
  return [...flags, ...maskFlags(mounts, hidden, engine)];
}

/**
 * Masks over what must stay out of sight inside a read-only mount (verifiers, references, the
 * bundle: `hidden`, and `.git` / `.evalgate` at its top): an empty read-only tmpfs over a folder,
 * /dev/null over a file. Never inside a writable mount: that is the process's own.
 */
export function maskFlags(
  mounts: readonly Mount[],
  hidden: readonly string[],
  engine?: Engine["kind"],
): string[] {
  const wanted = new Set<string>();
  for (const m of mounts) {
    if (!m.readOnly) continue;
    for (const name of [".git", ".evalgate"]) wanted.add(path.join(m.host, name));
    for (const h of hidden) if (h === m.host || h.startsWith(`${m.host}/`)) wanted.add(h);
  }
  const flags: string[] = [];
  for (const h of wanted) {
    // A mounted file (an agent CLI's program) has no `.git` beneath it: ENOTDIR.
    const s = (() => {
      try {
        return statSync(h, { throwIfNoEntry: false });
      } catch {
        return undefined;
      }
    })();
    const inside = toContainerPath(mounts, h);
    if (!s || !inside || inside.includes(":") || inside.includes(",") || !deepestMount(mounts, h)?.readOnly)
      continue;
    // Podman copies what lies beneath into a tmpfs unless told not to.
    const tmpfs = `${inside}:ro,size=4k${engine === "podman" ? ",notmpcopyup" : ""}`;
    flags.push(...(s.isDirectory() ? ["--tmpfs", tmpfs] : ["-v", `/dev/null:${inside}:ro`]));
  }
  return flags;
}

/**
 * What the engine (or its init, catatonit or tini) prints when it could not start the command at
 * all, as opposed to the command's own failure.
 */
const ENGINE_REFUSED =
  /OCI runtime|Error response from daemon|executable file not found|error during container init|failed to exec pid1|\[FATAL tini.*exec .* failed/;

export function containerRunner(inner: ProcessRunner, setup: ContainerSetup): ProcessRunner {
  return { run: (spec) => runInContainer(inner, setup, spec) };
}

async function runInContainer(
  inner: ProcessRunner,
  setup: ContainerSetup,
  spec: ProcessSpec,
): Promise<ProcessOutcome> {
  const { engine, mounts } = setup;
  const name = ownedName(setup.label);
  const cwd = toContainerPath(mounts, spec.cwd);
  if (cwd === undefined) throw new Error(`internal: ${spec.cwd} is not mounted in the container`);
  const grace = spec.killGraceMs ?? 2000;
  let proxy: AllowListProxy | undefined;
  let group: Cgroup | undefined;
  let forward: LoopbackForward | undefined;
  try {
    const net = await networkFlags(setup);
    proxy = net.proxy;
    forward = setup.forwardLoopback ? await forwardFor(setup, spec) : undefined;
    if (forward) spec = forwardedSpec(spec, forward);
    const proxyEnv = proxy ? proxyVariables(proxy.url) : {};
    // The forwarder is reached directly, not through the allow-list proxy.
    if (proxy && forward) {
      const gateway = /^http:\/\/([^:/]+)/.exec(proxy.url)?.[1] ?? "";
      Object.assign(proxyEnv, { NO_PROXY: gateway, no_proxy: gateway });
    }
    const env = envFlags(mounts, spec.env, proxyEnv);
    // A cgroup evalgate made around the container: where it reads the memory peak and the
    // processes. With a cgroupfs engine only (a systemd engine takes slice names).
    if (setup.cgroups && engine.cgroupManager === "cgroupfs" && setup.resources) {
      try {
        group = makeCgroup(setup.cgroups, name).group;
      } catch {
        // The engine's own word is asked instead (below).
      }
    }
    // Without such a group the engine's own word on an OOM kill is needed, so the container is kept
    // until it has been asked.
    const keep = setup.resources?.memoryBytes !== undefined && !group;
    const args = engineRunArgs(setup, spec, {
      name,
      cwd,
      keep,
      group,
      grace,
      flags: [
        ...net.flags,
        ...engineResourceFlags(setup.resources),
        ...mountFlags(mounts, setup.hidden ?? [], engine.kind),
        ...env.flags,
      ],
    });
    trackContainer(name, engine);
    const { outcome, stopped, diskOver } = await runWatched(
      inner,
      {
        ...spec,
        command: { argv: [engine.program, ...args] },
        env: { ...engine.env, ...env.values },
        // evalgate's own timer stops the container; this one only frees a client that hangs.
        timeoutMs: spec.timeoutMs + grace + 60_000,
        // Not under the run's reaper: it would kill the engine's monitor (conmon) that the client forks.
        contained: true,
      },
      {
        engine,
        name,
        timeoutMs: spec.timeoutMs,
        grace,
        ...(setup.resources ? { resources: setup.resources } : {}),
        ...(group ? { group } : {}),
        writable: mounts.filter((m) => !m.readOnly).map((m) => m.host),
      },
    );
    const engineOom = keep ? await oomKilled(engine, name) : undefined;
    if (keep || stopped || outcome.timedOut || outcome.exitCode === 125 || outcome.signal) {
      await removeContainer(engine, name);
    }
    untrackContainer(name);
    await giveBack(setup, name);
    return await finish(setup, spec, outcome, { stopped, diskOver, engineOom, group, proxy });
  } finally {
    await proxy?.close();
    await forward?.close();
    await group?.remove();
  }
}

/**
 * The engine's `run` arguments for one process: its container named `o.name`, removed when it ends
 * unless kept to be asked about an OOM kill, under evalgate's cgroup when there is one; `o.flags`
 * are its network, resources, mounts and environment.
 */
function engineRunArgs(
  setup: ContainerSetup,
  spec: ProcessSpec,
  o: { name: string; cwd: string; keep: boolean; group: Cgroup | undefined; grace: number; flags: string[] },
): string[] {
  const { engine } = setup;
  return [
    ...engine.globalArgs,
    "run",
    ...(o.keep ? [] : ["--rm"]),
    "--name",
    o.name,
    "--hostname",
    "evalgate",
    "--log-driver",
    "none",
    ...(spec.input !== undefined ? ["-i"] : []),
    ...(engine.init ? ["--init"] : []),
    // Should evalgate itself be killed, Podman's monitor still stops the container in time.
    ...(engine.kind === "podman" ? ["--timeout", String(seconds(spec.timeoutMs + o.grace) + 60)] : []),
    ...(o.group ? ["--cgroup-parent", o.group.relative] : []),
    ...(o.group && engine.kind === "podman" ? ["--cgroups", "no-conmon"] : []),
    ...engine.runArgs,
    ...o.flags,
    "-w",
    o.cwd,
    setup.image.id,
    ...argvIn(setup.mounts, spec.command),
  ];
}

/**
 * Rootful Docker with evalgate as a normal user: the files the container's root left in the writable
 * mounts are given back to evalgate's user, by one more container of the same image (its `chown`).
 */
async function giveBack(setup: ContainerSetup, name: string): Promise<void> {
  const { engine } = setup;
  const writable = setup.mounts.filter((m) => !m.readOnly);
  if (!engine.chownAfter || writable.length === 0) return;
  const args = [
    "run",
    "--rm",
    "--name",
    `${name}-chown`,
    "--network",
    "none",
    "--user",
    "0",
    "--entrypoint",
    "chown",
    ...mountFlags(writable, [], engine.kind),
    setup.image.id,
    "-R",
    engine.chownAfter,
    ...writable.map((m) => m.container),
  ];
  await engineExec(engine, args, { timeoutMs: 300_000 });
}

async function networkFlags(setup: ContainerSetup): Promise<{ flags: string[]; proxy?: AllowListProxy }> {
  const policy = setup.network;
  if (policy === false) return { flags: ["--network", "none"] };
  if (policy === true) return { flags: [] };
  if (!setup.allowNetwork)
    throw new Error("internal: a network allow-list without the run's internal network");
  const proxy = await proxyFor(setup.allowNetwork, policy.allow);
  return { flags: ["--network", setup.allowNetwork.name], proxy };
}

async function oomKilled(engine: Engine, name: string): Promise<boolean | undefined> {
  const r = await engineExec(engine, ["inspect", "--format", "{{.State.OOMKilled}}", name], {
    timeoutMs: 60_000,
  });
  return r.exitCode === 0 ? r.stdout.trim() === "true" : undefined;
}

/** The client's outcome as the command's: the engine's refusal as a start error, a limit named. */
async function finish(
  setup: ContainerSetup,
  spec: ProcessSpec,
  outcome: ProcessOutcome,
  facts: { stopped: boolean; diskOver?: number; engineOom?: boolean; group?: Cgroup; proxy?: AllowListProxy },
): Promise<ProcessOutcome> {
  const out: ProcessOutcome = { ...outcome, timedOut: outcome.timedOut || facts.stopped };
  const code = outcome.exitCode;
  if (
    !facts.stopped &&
    (code === 125 || (code !== null && [1, 126, 127].includes(code) && ENGINE_REFUSED.test(outcome.tail)))
  ) {
    const line = outcome.tail.split("\n").find((l) => ENGINE_REFUSED.test(l) || /^Error/.test(l));
    out.spawnError = `the container could not run the command: ${(line ?? outcome.tail).trim().slice(0, 500)}`;
    out.exitCode = null;
  }
  if ((facts.stopped || facts.diskOver !== undefined) && code !== null && code > 128) {
    out.exitCode = null;
    out.signal = code === 143 ? "SIGTERM" : "SIGKILL";
  }
  const limit = limitHitOf(setup.resources, {
    exitCode: out.exitCode,
    signal: out.signal,
    stoppedByEvalgate: facts.stopped || facts.diskOver !== undefined,
    ...(facts.diskOver !== undefined ? { diskGrown: facts.diskOver } : {}),
    ...(facts.group ? { usage: facts.group.usage() } : {}),
    ...(facts.engineOom !== undefined ? { engineOom: facts.engineOom } : {}),
  });
  if (limit) {
    out.limit = limit;
    if (limit.kind === "memory") {
      out.exitCode = null;
      out.signal = "SIGKILL";
    }
  }
  const denied = facts.proxy?.denied() ?? [];
  if (denied.length > 0 && spec.logFile) {
    await appendFile(
      spec.logFile,
      `\nevalgate: refused (not on the network allow-list): ${denied.slice(0, 20).join(", ")}${denied.length > 20 ? ", …" : ""}\n`,
    ).catch(() => undefined);
  }
  return out;
}
