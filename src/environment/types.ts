/**
 * What a case declares about where and within what its processes run: an environment (a container
 * image, pulled or built), per-attempt resources, and what an agent may reach on the network. The
 * plan (config/) resolves eval files into these; everything below runs them.
 */
import type { ProcessOutcome } from "../sandbox/process.js";

/** `environment:` of an eval file or test: an image to pull or a Dockerfile to build. */
export type EnvironmentSpec =
  | { kind: "image"; image: string; workdir?: string }
  | {
      kind: "build";
      /** Absolute path of the Dockerfile or Containerfile. */
      dockerfile: string;
      /** Absolute path of the build context folder. */
      context: string;
      workdir?: string;
    };

/** `resources:` of an eval file or test: limits on each process of an attempt. */
export interface ResourceSpec {
  memoryBytes?: number;
  /** CPUs, as a fraction (1.5 = one and a half cores of time). */
  cpus?: number;
  /** Most processes (and threads) at once. */
  pids?: number;
  /** Most bytes the attempt may write into its attempt folder (workspace, HOME, TMPDIR). */
  diskBytes?: number;
}

/** One entry of `network: { allow: [...] }`: a host (or `*.domain`) and an optional port. */
export interface AllowedHost {
  /** Lower case; `*.example.com` matches every name below example.com (not example.com itself). */
  host: string;
  /** Undefined: any port. */
  port?: number;
}

/** A target's `sandbox.network`: nothing (false), everything (true), or the listed hosts only. */
export type NetworkPolicy = boolean | { allow: AllowedHost[] };

/** A resource limit a process ran into; an attempt's `failure_kind` is named after `kind`. */
export type LimitHit = NonNullable<ProcessOutcome["limit"]>;

/** How one resource was applied to an attempt's processes, or why it could not be. */
export interface ResourceApplied {
  resource: "memory" | "cpus" | "pids" | "disk";
  /** engine: the container engine's flag; cgroup: a cgroup evalgate made; rlimit: setrlimit; watch: evalgate polls. */
  by?: "engine" | "cgroup" | "rlimit" | "watch";
  /** Set when the limit could not be applied (then `by` is absent), or applies only in part. */
  note?: string;
}
