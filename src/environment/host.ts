/**
 * What a run opens once for its environments and limits: the engine (probed, earlier runs' orphans
 * swept), each image prepared once, the internal network of allow-lists (made on first use), and
 * where cgroups can be made. Closed at the end of the run: the network and evalgate's cgroups go.
 */
import type { ProcessRunner } from "../sandbox/process.js";
import { type CgroupHost, probeCgroups, removeBase } from "./cgroup.js";
import { sweepOrphans } from "./cleanup.js";
import { type ContainerSetup, containerRunner } from "./container.js";
import { type Engine, probeEngine } from "./engine.js";
import { ImageCache, type ImageFailure, type PreparedImage } from "./image.js";
import { type HostLimits, prlimitProgram } from "./limits.js";
import { type AllowNetwork, createAllowNetwork, removeAllowNetwork } from "./network.js";
import type { EnvironmentSpec } from "./types.js";

/** Where this machine can bound processes on the host (no container). */
export function probeHostLimits(): HostLimits {
  const cgroups = probeCgroups();
  const prlimit = prlimitProgram();
  return {
    ...(typeof cgroups === "string" ? { cgroupsWhy: cgroups } : { cgroups }),
    ...(prlimit ? { prlimit } : {}),
  };
}

export class EnvironmentHost {
  private network?: Promise<AllowNetwork | string>;

  private constructor(
    readonly engine: Engine,
    readonly limits: HostLimits,
    private readonly images: ImageCache,
    /** What the host did on opening (runtime chosen, orphans removed), for the console. */
    readonly notes: string[],
  ) {}

  /**
   * Probes the engine and sweeps what killed runs left behind. A string says why no container can
   * run here (the preflight found an engine on PATH, but it does not answer).
   */
  static async open(opts: { env?: NodeJS.ProcessEnv; log?: string } = {}): Promise<EnvironmentHost | string> {
    const engine = await probeEngine(opts.env);
    if (typeof engine === "string") return engine;
    const notes = [...engine.notes];
    const swept = await sweepOrphans(engine);
    if (swept > 0)
      notes.push(`removed ${swept} container(s) and network(s) left by an evalgate that was killed`);
    return new EnvironmentHost(engine, probeHostLimits(), new ImageCache(engine, opts.log), notes);
  }

  get cgroups(): CgroupHost | undefined {
    return this.limits.cgroups;
  }

  /** The environment's image, pulled or built on first request. */
  image(spec: EnvironmentSpec): Promise<PreparedImage | ImageFailure> {
    return this.images.get(spec);
  }

  /** The run's internal network for allow-lists, made on first request; a string says why not. */
  allowNetwork(): Promise<AllowNetwork | string> {
    this.network ??= createAllowNetwork(this.engine);
    return this.network;
  }

  /** A runner for one attempt's processes in `image`. */
  runner(inner: ProcessRunner, setup: Omit<ContainerSetup, "engine" | "cgroups">): ProcessRunner {
    return containerRunner(inner, {
      ...setup,
      engine: this.engine,
      ...(this.limits.cgroups ? { cgroups: this.limits.cgroups } : {}),
    });
  }

  async close(): Promise<void> {
    const network = await this.network;
    if (network && typeof network !== "string") await removeAllowNetwork(this.engine, network);
    if (this.limits.cgroups) removeBase(this.limits.cgroups);
  }
}
