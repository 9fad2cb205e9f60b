/**
 * No container outlives its attempt. A container runs under the engine (conmon, dockerd), not under
 * evalgate, so killing the client's process group leaves it running: every container evalgate
 * starts is named, removed when its process ends (`--rm`), removed by name on a timeout, removed
 * when evalgate exits or is interrupted, and, should evalgate itself be killed outright, removed by
 * the next run on this machine, which finds it by the dead owner in its name. Podman's `--timeout`
 * kills such a container even before that.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import os from "node:os";
import { type Engine, engineExec } from "./engine.js";

/** Names start with this and the machine's tag, so a sweep touches no other machine's containers. */
const PREFIX = "evalgate-";

/** A short tag of this machine: an engine shared by several machines (DOCKER_HOST) keeps them apart. */
export function machineTag(hostname = os.hostname()): string {
  return createHash("sha256").update(hostname).digest("hex").slice(0, 6);
}

let counter = 0;

/** A container (or network) name for this process: `evalgate-<machine>-<pid>-<n>-<label>`. */
export function ownedName(label: string): string {
  counter += 1;
  const safe = label
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 60);
  return `${PREFIX}${machineTag()}-${process.pid}-${counter}${safe ? `-${safe}` : ""}`;
}

/** The owning process of a name this machine gave, or undefined for any other name. */
export function ownerOf(name: string, tag = machineTag()): number | undefined {
  const m = new RegExp(`^${PREFIX}${tag}-(\\d+)-\\d+`).exec(name);
  return m ? Number(m[1]) : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const live = new Map<string, Engine>();
let hooked = false;

/** Removes every container still registered, synchronously (evalgate is exiting). */
export function removeLiveContainers(): void {
  const byProgram = new Map<Engine, string[]>();
  for (const [name, engine] of live) byProgram.set(engine, [...(byProgram.get(engine) ?? []), name]);
  live.clear();
  for (const [engine, names] of byProgram) {
    const force = engine.kind === "podman" ? ["rm", "-f", "-t", "0"] : ["rm", "-f"];
    spawnSync(engine.program, [...engine.globalArgs, ...force, ...names], {
      env: engine.env,
      stdio: "ignore",
      timeout: 30_000,
    });
  }
}

function installHook(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", removeLiveContainers);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(sig, () => {
      removeLiveContainers();
      // The last handler standing re-raises, so evalgate still ends of the signal (as process.ts does).
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    });
  }
}

/** Registers a container about to start, so that evalgate's exit removes it. */
export function trackContainer(name: string, engine: Engine): void {
  installHook();
  live.set(name, engine);
}

export function untrackContainer(name: string): void {
  live.delete(name);
}

/** Containers still registered (for tests and the check that none is left). */
export function liveContainers(): string[] {
  return [...live.keys()];
}

/** Removes a container by name now; quiet when it is already gone. */
export async function removeContainer(engine: Engine, name: string): Promise<void> {
  const force = engine.kind === "podman" ? ["rm", "-f", "-t", "0", "--ignore"] : ["rm", "-f"];
  await engineExec(engine, [...force, name], { timeoutMs: 60_000 });
}

/**
 * Removes the containers and networks of earlier evalgate processes on this machine that are no
 * longer running (killed before they could clean up). Returns how many it removed.
 */
export async function sweepOrphans(engine: Engine): Promise<number> {
  const tag = machineTag();
  const ps = await engineExec(
    engine,
    ["ps", "-a", "--filter", `name=${PREFIX}${tag}-`, "--format", "{{.Names}}"],
    { timeoutMs: 60_000 },
  );
  const dead = (names: string) =>
    names
      .split("\n")
      .map((n) => n.trim())
      .filter((n) => {
        const pid = ownerOf(n, tag);
        return pid !== undefined && pid !== process.pid && !alive(pid);
      });
  const containers = ps.exitCode === 0 ? dead(ps.stdout) : [];
  if (containers.length > 0) {
    const force = engine.kind === "podman" ? ["rm", "-f", "-t", "0", "--ignore"] : ["rm", "-f"];
    await engineExec(engine, [...force, ...containers], { timeoutMs: 120_000 });
  }
  const nets = await engineExec(engine, ["network", "ls", "--format", "{{.Name}}"], { timeoutMs: 60_000 });
  const networks = nets.exitCode === 0 ? dead(nets.stdout) : [];
  for (const n of networks) await engineExec(engine, ["network", "rm", "-f", n], { timeoutMs: 60_000 });
  return containers.length + networks.length;
}
