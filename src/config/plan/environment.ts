/**
 * `environment:` and `resources:` of an eval file and its tests → each case's EnvironmentSpec and
 * ResourceSpec: a test's environment replaces the file's, its resources replace the file's key by
 * key. And what only the whole plan shows: a container engine for every case in an environment (the
 * run's preflight answers), and an environment for every case whose target has an allow-list.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { EnvironmentSpec, ResourceSpec } from "../../environment/types.js";
import type { EnvironmentInput, ResourcesInput } from "../schema/environment.js";
import { parseSize } from "../size.js";
import type { CaseSpec } from "../types.js";
import type { PathKey, YamlSource } from "../yaml.js";
import type { Origin, PlanContext } from "./context.js";

export interface EnvironmentSource {
  input?: EnvironmentInput;
  src: YamlSource;
  at: PathKey[];
  dir: string;
}

async function isFile(abs: string): Promise<boolean> {
  return (await stat(abs).catch(() => undefined))?.isFile() === true;
}

async function isDirectory(abs: string): Promise<boolean> {
  return (await stat(abs).catch(() => undefined))?.isDirectory() === true;
}

/** Resolves one `environment:` (the test's, else the file's). Undefined: the runner's own system. */
export async function resolveEnvironment(
  ctx: PlanContext,
  file: EnvironmentSource,
  test: EnvironmentSource,
): Promise<EnvironmentSpec | undefined> {
  const from = test.input ? test : file.input ? file : undefined;
  if (!from?.input) return undefined;
  const { input, src, at, dir } = from;
  if ((input.image === undefined) === (input.build === undefined)) {
    ctx.problem(
      src,
      at,
      input.image === undefined
        ? "environment needs an image or a build"
        : "environment has both image and build",
      "give exactly one: image: python:3.11-slim, or build: { dockerfile: environment/Dockerfile }",
    );
    return undefined;
  }
  const workdir =
    input.workdir !== undefined
      ? { workdir: path.posix.normalize(input.workdir).replace(/(.)\/$/, "$1") }
      : {};
  let spec: EnvironmentSpec;
  if (input.image !== undefined) spec = { kind: "image", image: input.image, ...workdir };
  else {
    const build = input.build!;
    const dockerfile = path.resolve(dir, build.dockerfile);
    const context = build.context !== undefined ? path.resolve(dir, build.context) : path.dirname(dockerfile);
    if (!(await isFile(dockerfile))) {
      ctx.problem(
        src,
        [...at, "build", "dockerfile"],
        `${ctx.display(dockerfile)} does not exist`,
        ctx.relativeHint(dir),
      );
    }
    if (!(await isDirectory(context))) {
      ctx.problem(
        src,
        [...at, "build", "context"],
        `folder ${ctx.display(context)} does not exist`,
        ctx.relativeHint(dir),
      );
    }
    spec = { kind: "build", dockerfile, context, ...workdir };
  }
  ctx.environmentOrigins.set(spec, { src, at });
  return spec;
}

/** A test's resources over its file's, key by key. */
export function resolveResources(
  file: ResourcesInput | undefined,
  test: ResourcesInput | undefined,
): ResourceSpec | undefined {
  const r = { ...file, ...test };
  const out: ResourceSpec = {};
  if (r.memory !== undefined) out.memoryBytes = parseSize(r.memory);
  if (r.cpus !== undefined) out.cpus = r.cpus;
  if (r.pids !== undefined) out.pids = r.pids;
  if (r.disk !== undefined) out.diskBytes = parseSize(r.disk);
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Every case in an environment needs a container engine on this machine (asked once), and every
 * case whose target has a network allow-list needs an environment: the allow-list is enforced by the
 * container's network, which the runner's own system does not have.
 */
export function checkEnvironments(ctx: PlanContext, cases: readonly CaseSpec[]): void {
  const ask = ctx.checks.containerEngine;
  const why = ask && cases.some((c) => c.environment) ? ask() : undefined;
  for (const c of cases) {
    const env = c.environment;
    if (env && why) {
      const origin: Origin | undefined = ctx.environmentOrigins.get(env);
      if (origin) {
        const what =
          env.kind === "image" ? `image ${env.image}` : `a build of ${ctx.display(env.dockerfile)}`;
        ctx.problem(
          origin.src,
          origin.at,
          `test "${c.test.id}" runs in an environment (${what}), but ${why}`,
          "install Docker, or Podman with runc (apt-get install podman runc); EVALGATE_CONTAINER=docker|podman picks one",
        );
      }
    }
    if (!env && c.target.networkAllow) {
      const origin = ctx.targetOrigins.get(c.target);
      if (origin) {
        ctx.problem(
          origin.src,
          [...origin.at, "sandbox", "network"],
          `target "${c.target.name}" may reach only the hosts of its allow-list, which is enforced inside an environment, but test "${c.test.id}" has none`,
          "give the test (or the file) an environment:, or use network: true",
        );
      }
    }
  }
}
