/**
 * The engine's client for one container (container.ts), run under evalgate's own watch: a timer
 * that stops the container at the command's timeout, the sampler of its cgroup's process count,
 * and the disk watch of its writable mounts.
 */
import type { ProcessOutcome, ProcessRunner, ProcessSpec } from "../sandbox/process.js";
import type { Cgroup } from "./cgroup.js";
import { removeContainer } from "./cleanup.js";
import { watchDisk } from "./disk.js";
import { type Engine, engineExec } from "./engine.js";
import type { ResourceSpec } from "./types.js";

/** Seconds, rounded up, for the engine's flags. */
export const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export interface ContainerWatch {
  engine: Engine;
  /** The container's name. */
  name: string;
  /** The command's own timeout, at which the container is stopped. */
  timeoutMs: number;
  grace: number;
  resources?: ResourceSpec;
  /** evalgate's cgroup around the container, when it has one. */
  group?: Cgroup;
  /** The host folders the container may write (the disk watch walks them). */
  writable: string[];
}

export interface Watched {
  outcome: ProcessOutcome;
  /** evalgate's timer stopped the container. */
  stopped: boolean;
  /** Bytes the writable mounts had grown by when the disk watch killed the container. */
  diskOver: number | undefined;
}

/** Runs the engine's client (`client`) under the watch; every watcher is stopped when it ends. */
export async function runWatched(
  inner: ProcessRunner,
  client: ProcessSpec,
  w: ContainerWatch,
): Promise<Watched> {
  const { engine, name, group } = w;
  let stopped = false;
  const timer = setTimeout(() => {
    stopped = true;
    // The engine sends SIGTERM, then SIGKILL after the grace; the client exits with the container.
    void engineExec(engine, ["stop", "-t", String(seconds(w.grace)), name], {
      timeoutMs: w.grace + 30_000,
    }).then(() => removeContainer(engine, name));
  }, w.timeoutMs);
  const sampler =
    group && w.resources?.pids !== undefined ? setInterval(() => group.sample(), 50) : undefined;
  let diskOver: number | undefined;
  const disk =
    w.resources?.diskBytes !== undefined
      ? watchDisk(w.writable, w.resources.diskBytes, (grown) => {
          diskOver = grown;
          void engineExec(engine, ["kill", name], { timeoutMs: 30_000 });
        })
      : undefined;
  let outcome: ProcessOutcome;
  try {
    outcome = await inner.run(client);
  } finally {
    clearTimeout(timer);
    if (sampler) clearInterval(sampler);
    await disk?.stop();
  }
  return { outcome, stopped, diskOver };
}
