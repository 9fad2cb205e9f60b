/**
 * The image of an environment, made ready once per run: an `image:` pulled when the engine does not
 * have it yet (a digest in the reference is checked by the engine), a `build:` built with the
 * engine's layer cache (kept across runs under a tag named after the Dockerfile and context). What
 * ran is recorded by digest: the registry's manifest digest where there is one, else the image id.
 */
import { createHash } from "node:crypto";
import { appendFile } from "node:fs/promises";
import path from "node:path";
import { type Engine, engineExec, firstLine } from "./engine.js";
import type { EnvironmentSpec } from "./types.js";

export interface PreparedImage {
  /** What `run` starts: the image id, so a tag moved during the run changes nothing. */
  id: string;
  /** The reference as the eval file gave it, or the tag evalgate built. */
  ref: string;
  /** `sha256:…`: the registry manifest digest of a pulled image, else the image id. */
  digest: string;
  /** The folder the workspace is mounted at: `workdir:`, else the image's WORKDIR, else /workspace. */
  workdir: string;
  /** Where the image came from this run: already present, pulled or built. */
  source: "present" | "pulled" | "built";
  durationMs: number;
}

export interface ImageFailure {
  error: string;
}

/** The registry of a reference, when it names one (`127.0.0.1:5000/x`, `ghcr.io/x`). */
export function registryOf(ref: string): string | undefined {
  const slash = ref.indexOf("/");
  if (slash < 0) return undefined;
  const first = ref.slice(0, slash);
  return first.includes(".") || first.includes(":") || first === "localhost" ? first : undefined;
}

/** Docker treats registries on loopback as plain HTTP; Podman must be told (`--tls-verify=false`). */
export function isLoopbackRegistry(registry: string | undefined): boolean {
  if (!registry) return false;
  const host = registry.startsWith("[") ? registry.slice(1, registry.indexOf("]")) : registry.split(":")[0]!;
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The repository of a reference, without tag or digest (`ghcr.io/a/b:1@sha256:…` → `ghcr.io/a/b`). */
export function repositoryOf(ref: string): string {
  const noDigest = ref.split("@")[0]!;
  const lastSlash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  return colon > lastSlash ? noDigest.slice(0, colon) : noDigest;
}

interface Inspected {
  id: string;
  repoDigests: string[];
  workdir: string;
}

async function inspect(engine: Engine, ref: string): Promise<Inspected | undefined> {
  const r = await engineExec(engine, ["image", "inspect", ref], { timeoutMs: 60_000 });
  if (r.exitCode !== 0) return undefined;
  try {
    const [info] = JSON.parse(r.stdout) as Record<string, unknown>[];
    const config = (info?.Config ?? {}) as Record<string, unknown>;
    const id = String(info?.Id ?? "");
    return {
      id: id.startsWith("sha256:") ? id : `sha256:${id}`,
      repoDigests: Array.isArray(info?.RepoDigests) ? info.RepoDigests.map(String) : [],
      workdir: typeof config.WorkingDir === "string" ? config.WorkingDir : "",
    };
  } catch {
    return undefined;
  }
}

/** The digest to record: the one the reference pins, the registry's for its repository, else the id. */
export function digestOf(ref: string, image: Inspected): string {
  const pinned = /@(sha256:[0-9a-f]{64})$/.exec(ref);
  if (pinned) return pinned[1]!;
  const repo = repositoryOf(ref);
  const short = repo.replace(/^(docker\.io\/)?(library\/)?/, "");
  const match = image.repoDigests.find((d) => {
    const r = d.split("@")[0]!;
    return r === repo || r.replace(/^(docker\.io\/)?(library\/)?/, "") === short;
  });
  return match ? match.split("@")[1]! : image.id;
}

function workdirOf(spec: EnvironmentSpec, image: Inspected): string {
  if (spec.workdir) return spec.workdir;
  const w = image.workdir.trim();
  return w && w !== "/" ? w : "/workspace";
}

/** The tag a build is kept under: one per Dockerfile and context, so the next run finds its layers. */
export function buildTag(dockerfile: string, context: string): string {
  const hash = createHash("sha256").update(`${dockerfile}\u0000${context}`).digest("hex").slice(0, 16);
  const name = path
    .basename(path.dirname(dockerfile))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "");
  return `localhost/evalgate-env/${name || "image"}:${hash}`;
}

async function pull(engine: Engine, ref: string, log?: string): Promise<string | undefined> {
  const tls = engine.kind === "podman" && isLoopbackRegistry(registryOf(ref)) ? ["--tls-verify=false"] : [];
  const r = await engineExec(engine, ["pull", ...tls, ref], { timeoutMs: 30 * 60_000 });
  if (log) await appendFile(log, `$ ${engine.kind} pull ${ref}\n${r.stderr}${r.stdout}\n`).catch(() => {});
  return r.exitCode === 0 ? undefined : `cannot pull ${ref}: ${firstLine(r)}`;
}

const BUILDX_MISSING = /buildx component is missing|buildx.*(not installed|missing)/i;

async function build(
  engine: Engine,
  spec: Extract<EnvironmentSpec, { kind: "build" }>,
  tag: string,
  log?: string,
): Promise<string | undefined> {
  const run = async (buildkit?: string) => {
    // The daemon's own builder leaves the container of a failed step behind unless told not to.
    const legacy = buildkit === "0" ? ["--force-rm"] : [];
    const r = await engineExec(engine, ["build", ...legacy, "-f", spec.dockerfile, "-t", tag, spec.context], {
      timeoutMs: 60 * 60_000,
      env: buildkit === undefined ? {} : { DOCKER_BUILDKIT: buildkit },
    });
    if (log)
      await appendFile(
        log,
        `$ ${buildkit === undefined ? "" : `DOCKER_BUILDKIT=${buildkit} `}${engine.kind} build ${spec.dockerfile}\n${r.stdout}${r.stderr}\n`,
      ).catch(() => {});
    return r;
  };
  const docker = engine.kind === "docker";
  let r = await run(docker ? (engine.env.DOCKER_BUILDKIT ?? "1") : undefined);
  // A Docker 23+ client builds with BuildKit through its buildx plugin, which not every install
  // has (Debian packages it apart): the daemon's own builder builds the same Dockerfile.
  if (docker && engine.env.DOCKER_BUILDKIT === undefined && r.exitCode !== 0 && BUILDX_MISSING.test(r.stderr))
    r = await run("0");
  if (r.exitCode === 0) return undefined;
  const lines = (r.stderr.trim() || r.stdout.trim()).split("\n");
  return `cannot build ${spec.dockerfile}: ${lines.slice(-3).join(" | ") || firstLine(r)}`;
}

/** Pulls or builds one environment's image (or finds it present); never throws for the engine's failure. */
export async function prepareImage(
  engine: Engine,
  spec: EnvironmentSpec,
  log?: string,
): Promise<PreparedImage | ImageFailure> {
  const t0 = performance.now();
  const done = (ref: string, image: Inspected, source: PreparedImage["source"]): PreparedImage => ({
    id: image.id,
    ref,
    digest: digestOf(ref, image),
    workdir: workdirOf(spec, image),
    source,
    durationMs: Math.round(performance.now() - t0),
  });
  if (spec.kind === "image") {
    const present = await inspect(engine, spec.image);
    if (present) return done(spec.image, present, "present");
    const failed = await pull(engine, spec.image, log);
    if (failed) return { error: failed };
    const pulled = await inspect(engine, spec.image);
    return pulled
      ? done(spec.image, pulled, "pulled")
      : { error: `${spec.image} was pulled but cannot be inspected` };
  }
  const tag = buildTag(spec.dockerfile, spec.context);
  const failed = await build(engine, spec, tag, log);
  if (failed) return { error: failed };
  const built = await inspect(engine, tag);
  return built ? done(tag, built, "built") : { error: `${tag} was built but cannot be inspected` };
}

/** Each environment's image, prepared once per run however many cases and attempts share it. */
export class ImageCache {
  private readonly images = new Map<string, Promise<PreparedImage | ImageFailure>>();

  constructor(
    private readonly engine: Engine,
    private readonly log?: string,
  ) {}

  get(spec: EnvironmentSpec): Promise<PreparedImage | ImageFailure> {
    const key = JSON.stringify(spec);
    let p = this.images.get(key);
    if (!p) {
      p = prepareImage(this.engine, spec, this.log);
      this.images.set(key, p);
    }
    return p;
  }
}
