/**
 * A case's environment and resources in the attempt lifecycle: which processes of a case run in its
 * image (setup, the agent, the scorers that run commands), what each is shown there (the workspace
 * at `workdir`, its own folders under /evalgate, the eval file's folder read-only with the answer
 * key masked: never the runner's checkout), and the limits every process of an attempt runs within,
 * in a container or on the host. What does not run yet is refused before the run starts.
 */
import path from "node:path";
import type { CaseSpec, TargetSpec } from "../config/types.js";
import { AgentRuntimes, runnerArchitecture } from "../environment/agent-runtime.js";
import type { Mount } from "../environment/container.js";
import { engineExec } from "../environment/engine.js";
import { EnvironmentHost, probeHostLimits } from "../environment/host.js";
import type { PreparedImage } from "../environment/image.js";
import { appliedOnHost, type HostLimits, limitedRunner } from "../environment/limits.js";
import type { AllowNetwork } from "../environment/network.js";
import { appliedInContainer } from "../environment/resources.js";
import type { NetworkPolicy, ResourceApplied, ResourceSpec } from "../environment/types.js";
import { type ContainedView, sandboxedRunner } from "../sandbox/bwrap.js";
import type { OverlayMount } from "../sandbox/overlay.js";
import type { ProcessOutcome, ProcessRunner } from "../sandbox/process.js";
import type { AttemptResult, EnvironmentRecord } from "./types.js";

/** Where one case's processes run: its image on the run's engine. */
export interface CasePlace {
  host: EnvironmentHost;
  image: PreparedImage;
  /** Part of each container's name (the case), for `docker ps` and the sweep. */
  label: string;
  /** The run's agent CLI runtimes, for a preset target in the image. */
  runtimes?: AgentRuntimes;
}

/** What one process is shown in the image. */
export interface PlaceView {
  /** Mounted writable at the image's workdir. */
  workspace: string;
  /** More writable folders (HOME, TMPDIR, a report folder), each under /evalgate. */
  writable: readonly string[];
  /** Folders shown read-only under /evalgate (the eval file's folder), with `hidden` masked. */
  readOnly: readonly string[];
  hidden: readonly string[];
  network: NetworkPolicy;
  /** The case's resources, for the processes of an attempt (not setup, which is shared). */
  resources?: ResourceSpec;
  /** An agent CLI's runtime, mounted read-only at /evalgate/agent (environment/agent-runtime.ts). */
  runtime?: readonly Mount[];
}

/** The mounts of a view: the workspace at workdir, every other folder at /evalgate/<its name>. */
export function mountsOf(workdir: string, view: PlaceView): Mount[] {
  // /evalgate/agent is the agent CLI's runtime.
  const used = new Set<string>(view.runtime ? ["agent"] : []);
  const at = (host: string) => {
    const base = path.basename(host).replace(/[^A-Za-z0-9._-]+/g, "-") || "folder";
    let name = base;
    for (let i = 2; used.has(name); i++) name = `${base}-${i}`;
    used.add(name);
    return `/evalgate/${name}`;
  };
  return [
    { host: view.workspace, container: workdir },
    ...view.writable.map((host) => ({ host, container: at(host) })),
    ...view.readOnly.map((host) => ({ host, container: at(host), readOnly: true })),
    ...(view.runtime ?? []),
  ];
}

function refusedOutcome(why: string): ProcessOutcome {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    durationMs: 0,
    spawnError: why,
    stdout: "",
    tail: "",
    droppedBytes: 0,
  };
}

/** A runner whose every process runs in a fresh container of the case's image, shown `view`. */
export function placedRunner(inner: ProcessRunner, place: CasePlace, view: PlaceView): ProcessRunner {
  const mounts = mountsOf(place.image.workdir, view);
  return {
    run: async (spec) => {
      let allowNetwork: AllowNetwork | undefined;
      if (typeof view.network === "object") {
        const made = await place.host.allowNetwork();
        if (typeof made === "string")
          return refusedOutcome(`the network allow-list cannot be set up: ${made}`);
        allowNetwork = made;
      }
      return place.host
        .runner(inner, {
          image: place.image,
          label: place.label,
          mounts,
          network: view.network,
          ...(allowNetwork ? { allowNetwork } : {}),
          ...(view.resources ? { resources: view.resources } : {}),
          hidden: view.hidden,
          ...(view.runtime ? { forwardLoopback: true } : {}),
        })
        .run(spec);
    },
  };
}

/** The case's resources on the host (no environment): a cgroup, or per-process rlimits. */
export function hostLimited(
  inner: ProcessRunner,
  resources: ResourceSpec | undefined,
  limits: HostLimits | undefined,
  writable: readonly string[],
): ProcessRunner {
  return resources && limits ? limitedRunner(inner, resources, limits, writable) : inner;
}

/** How the case's resources were applied to its attempts, for the bundle. */
export function appliedResources(
  spec: CaseSpec,
  place: CasePlace | undefined,
  limits: HostLimits | undefined,
): ResourceApplied[] | undefined {
  if (!spec.resources) return undefined;
  return place ? appliedInContainer(spec.resources) : appliedOnHost(spec.resources, limits ?? {});
}

/** What an attempt records of where it ran: the image by digest, and how its resources were applied. */
export function placeFacts(
  spec: CaseSpec,
  place: CasePlace | undefined,
  limits: HostLimits | undefined,
): Pick<AttemptResult, "environment" | "resources"> {
  const applied = appliedResources(spec, place, limits);
  return {
    ...(place ? { environment: environmentRecord(place) } : {}),
    ...(applied ? { resources: applied } : {}),
  };
}

export function environmentRecord(place: CasePlace): EnvironmentRecord {
  return {
    image: place.image.ref,
    digest: place.image.digest,
    workdir: place.image.workdir,
    engine: place.host.engine.kind,
  };
}

/** The agent CLIs that run in an environment through their mounted runtime (docs/decisions/0216). */
const IN_IMAGE = new Set<string>(["claude-code", "codex", "gemini-cli"]);

/**
 * Why a case cannot run in this build, or undefined. An agent CLI preset runs in the image through
 * its mounted runtime; the reference is evalgate's own act (its patch applied to the mounted
 * workspace, its script run in the image) and `noop` does nothing: all run.
 */
export function notRunnable(c: CaseSpec): string | undefined {
  if (!c.environment) return undefined;
  const { provider, name } = c.target;
  if (provider === "command" || provider === "noop" || provider === "reference" || IN_IMAGE.has(provider))
    return undefined;
  return `target "${name}" (provider ${provider}) cannot run in an environment yet. Give the case a provider: command target whose command runs an agent the image has, or run the case without environment: (limit the target to other tests with targets: [...])`;
}

/**
 * What the reference run is shown in the image: the eval file's folder, and the folder of a
 * reference script that lies outside it; its own script unmasked (the answer key is the
 * reference's own; every other test's stays masked). A Harbor reference finds its solution beside it.
 */
function referenceView(spec: CaseSpec, hidden: readonly string[]): { readOnly: string[]; hidden: string[] } {
  const script = spec.test.referenceKind === "script" ? spec.test.reference : undefined;
  const inEvalDir = (p: string) => p.startsWith(`${spec.evalDir}${path.sep}`);
  return {
    readOnly: [spec.evalDir, ...(script && !inEvalDir(script) ? [path.dirname(script)] : [])],
    hidden: hidden.filter((h) => h !== spec.test.reference && !(script && h === path.dirname(script))),
  };
}

/** A ContainedView (setup's, a scorer's: the workspace first among the writable) in the case's image. */
export function placeFor(
  place: CasePlace,
  resources?: ResourceSpec,
): (inner: ProcessRunner, view: ContainedView) => ProcessRunner {
  return (inner, view) =>
    placedRunner(inner, place, {
      workspace: view.writable[0]!,
      writable: view.writable.slice(1),
      readOnly: view.readOnly,
      hidden: view.hidden ?? [],
      network: view.network,
      ...(resources ? { resources } : {}),
    });
}

/** What the agent may reach: its allow-list, else its sandbox's network; `sandbox: none` has it all. */
function agentNetwork(t: TargetSpec): NetworkPolicy {
  if (t.networkAllow) return { allow: t.networkAllow };
  return t.sandbox ? t.sandbox.network : true;
}

export interface AgentPlacement {
  spec: CaseSpec;
  workspace: string;
  /** The attempt's folder (workspace, HOME, TMPDIR, prompt, output file): all the agent may write. */
  workDir: string;
  place?: CasePlace;
  hostLimits?: HostLimits;
  bwrap?: string;
  /** What a sandboxed agent may not read wherever it lies (given with `bwrap`). */
  hidden?: readonly string[];
  /** The run's hidden list: what the agent may not read in its image either. */
  containment?: { hidden: readonly string[] };
  /** What setup built, shared with an upper layer of the attempt's own (run/share.ts). */
  overlays?: readonly OverlayMount[];
}

/**
 * The agent's runner: in the case's image (the container is its sandbox), else under bubblewrap,
 * else under the run's reaper (`runner` applies it), or as it is for `sandbox: none`; the case's
 * resources in every case (beneath bubblewrap, which hides /sys from a process joining a cgroup).
 */
export function agentRunnerFor(runner: ProcessRunner, a: AgentPlacement): ProcessRunner {
  const target = a.spec.target;
  if (a.place) {
    const hidden = a.containment?.hidden ?? [];
    const reference = target.provider === "reference" ? referenceView(a.spec, hidden) : undefined;
    const placed = IN_IMAGE.has(target.provider) ? presetInPlace : placedRunner;
    return placed(runner, a.place, {
      workspace: a.workspace,
      writable: [a.workDir],
      // auto's read-only folders hold the eval file's; sandbox: none's agent saw it too.
      readOnly: reference?.readOnly ?? target.sandbox?.readOnly ?? [a.spec.evalDir],
      hidden: reference?.hidden ?? hidden,
      network: agentNetwork(target),
      ...(a.spec.resources ? { resources: a.spec.resources } : {}),
    });
  }
  const limited = hostLimited(runner, a.spec.resources, a.hostLimits, [a.workDir]);
  if (target.sandbox?.kind === "bwrap" && !a.bwrap) {
    throw new Error("internal: sandbox: bwrap without a checked bubblewrap program");
  }
  // The agent may write its attempt folder only (workspace, HOME, TMPDIR, its output file).
  if (target.sandbox && a.bwrap)
    return sandboxedRunner(limited, a.bwrap, target.sandbox, [a.workDir], a.hidden, undefined, a.overlays);
  // sandbox: none opts out of all isolation, the reaper's PID namespace included.
  if (!target.sandbox) return { run: (s) => limited.run({ ...s, reap: false }) };
  return limited;
}

/**
 * An agent CLI of the runner's in the case's image: its program (the command's first word, a host
 * path the preset resolved) started through its runtime, mounted at /evalgate/agent; a runner of
 * another architecture than the image's is refused.
 */
function presetInPlace(inner: ProcessRunner, place: CasePlace, view: PlaceView): ProcessRunner {
  return {
    run: async (spec) => {
      if (!("argv" in spec.command) || !place.runtimes)
        throw new Error("internal: an agent CLI in an image needs its program's argv and the run's runtimes");
      const [program, ...rest] = spec.command.argv;
      const arch = await imageArchitecture(place);
      const own = runnerArchitecture();
      if (arch && arch !== own)
        return refusedOutcome(
          `the image ${place.image.ref} is for ${arch} and the runner is ${own}: the agent CLI is a program of the runner's and cannot run in it. Run the case on a ${arch} runner, or give it a provider: command target whose command runs an agent the image has`,
        );
      const runtime = await place.runtimes.of(program!);
      if (typeof runtime === "string")
        return refusedOutcome(`the agent CLI cannot run in the image: ${runtime}`);
      return placedRunner(inner, place, { ...view, runtime: runtime.mounts }).run({
        ...spec,
        command: { argv: [...runtime.head, ...rest] },
        env: { ...spec.env, ...runtime.env },
      });
    },
  };
}

const architectures = new Map<string, Promise<string | undefined>>();

/** The image's architecture (amd64, arm64), as its engine says; undefined where it does not. */
function imageArchitecture(place: CasePlace): Promise<string | undefined> {
  let p = architectures.get(place.image.id);
  if (!p) {
    p = engineExec(place.host.engine, ["image", "inspect", "--format", "{{.Architecture}}", place.image.id], {
      timeoutMs: 60_000,
    }).then((r) => (r.exitCode === 0 && r.stdout.trim() ? r.stdout.trim() : undefined));
    architectures.set(place.image.id, p);
  }
  return p;
}

/** The target the reference runs as wherever a case's own target is another (verifier calibration). */
const REFERENCE_TARGET: TargetSpec = {
  name: "reference",
  provider: "reference",
  args: [],
  env: {},
  envPassthrough: [],
};

/**
 * The runner of a reference script that calibrates the case's verifier: in the case's image, shown
 * the calibration's folder (`workDir`, its workspace `workspace`) as the reference target is; the
 * run's runner on the host, as the reference target's.
 */
export function referenceRunnerFor(
  runner: ProcessRunner,
  a: Pick<AgentPlacement, "spec" | "place" | "containment">,
  workspace: string,
  workDir: string,
): ProcessRunner {
  if (!a.place) return runner;
  return agentRunnerFor(runner, { ...a, spec: { ...a.spec, target: REFERENCE_TARGET }, workspace, workDir });
}

/** The scorers' runner: in the case's image (`placed`), or on the host within the case's resources. */
export function scorerPlacement(
  runner: ProcessRunner,
  a: Pick<AgentPlacement, "spec" | "place" | "hostLimits">,
  workspace: string,
): { scorerRunner: ProcessRunner; placed?: ReturnType<typeof placeFor> } {
  const inScorer = scorerResources(a.spec.resources);
  if (a.place) return { scorerRunner: runner, placed: placeFor(a.place, inScorer) };
  return { scorerRunner: hostLimited(runner, inScorer, a.hostLimits, [workspace]) };
}

/** A runner that remembers the last limit one of its processes ran into. */
export function limitWatch(inner: ProcessRunner): {
  runner: ProcessRunner;
  hit: () => ProcessOutcome["limit"];
} {
  let hit: ProcessOutcome["limit"];
  return {
    runner: {
      run: async (spec) => {
        const outcome = await inner.run(spec);
        if (outcome.limit) hit = outcome.limit;
        return outcome;
      },
    },
    hit: () => hit,
  };
}

/** The resources a scorer runs within: the attempt's, but for disk (the scorer's builds are not the agent's). */
export function scorerResources(r: ResourceSpec | undefined): ResourceSpec | undefined {
  if (!r) return undefined;
  const { diskBytes: _disk, ...rest } = r;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** The run's places: each case's image made ready once, and the host's limits where cases need them. */
export interface RunPlaces {
  /** The case's place (undefined: the runner's own system), or why its image is not ready. */
  forCase(c: CaseSpec): Promise<CasePlace | { error: string } | undefined>;
  hostLimits?: HostLimits;
  close(): Promise<void>;
}

/** What makes a start differ between images (its setup ran in one): the environment as declared. */
export function setupPlaceKey(c: CaseSpec): { key: string } | undefined {
  return c.environment ? { key: JSON.stringify(c.environment) } : undefined;
}

function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 40);
}

/** Opens the engine when a case has an environment (images made ready on first request). */
export async function openPlaces(cases: readonly CaseSpec[], workRoot?: string): Promise<RunPlaces> {
  const host = cases.some((c) => c.environment) ? await EnvironmentHost.open() : undefined;
  const runtimes = workRoot && host && typeof host !== "string" ? new AgentRuntimes(workRoot) : undefined;
  const hostLimits = cases.some((c) => c.resources && !c.environment) ? probeHostLimits() : undefined;
  return {
    ...(hostLimits ? { hostLimits } : {}),
    async forCase(c) {
      if (!c.environment) return undefined;
      if (host === undefined || typeof host === "string")
        return { error: `no container engine can run it: ${host ?? "none was found"}` };
      const image = await host.image(c.environment);
      if ("error" in image) return { error: image.error };
      return { host, image, label: slug(c.test.id), ...(runtimes ? { runtimes } : {}) };
    },
    close: async () => {
      if (host && typeof host !== "string") await host.close();
    },
  };
}
