/**
 * `environment:` (the image a case runs in), `resources:` (per-attempt limits) and a target's
 * `sandbox.network` allow-list. docs/environments.md explains them.
 */
import { z } from "zod";
import { size } from "./values.js";

export const environmentSchema = z
  .strictObject({
    image: z
      .string()
      .min(1)
      .regex(/^[^\s]+$/, "an image reference without spaces")
      .optional()
      .describe(
        "An image to pull (once per run, kept by the engine): python:3.11-slim, ghcr.io/org/img:tag, or pinned: name@sha256:…",
      ),
    build: z
      .strictObject({
        dockerfile: z.string().min(1).describe("The Dockerfile or Containerfile, relative to the eval file"),
        context: z
          .string()
          .min(1)
          .optional()
          .describe("The build context folder, relative to the eval file (default: the Dockerfile's folder)"),
      })
      .optional()
      .describe("An image to build (once per run; the engine's layer cache keeps it across runs)"),
    workdir: z
      .string()
      .regex(/^\//, "an absolute path inside the image, such as /app")
      .optional()
      .describe(
        "Where the workspace is mounted and the agent, setup and scorers start (default: the image's WORKDIR, else /workspace)",
      ),
  })
  .describe(
    "The container image the case's agent, setup and scorers run in (Docker or Podman): exactly one of image or build",
  );

export const resourcesSchema = z
  .strictObject({
    memory: size.optional().describe("Memory (and swap) of each process tree of an attempt, e.g. 2GiB"),
    cpus: z.number().positive().max(1024).optional().describe("CPU time as a number of CPUs, e.g. 1.5"),
    pids: z.number().int().min(8).max(4_194_304).optional().describe("Most processes and threads at once"),
    disk: size
      .optional()
      .describe("Most an attempt may write into its workspace, HOME and TMPDIR, e.g. 5GiB"),
  })
  .describe(
    "Per-attempt limits; an attempt that hits one is recorded as such (failure_kind), the run goes on",
  );

export const networkSchema = z
  .union([
    z.boolean(),
    z.strictObject({
      allow: z
        .array(z.string().min(1))
        .describe(
          "host, host:port, *.domain or [v6]:port: the only places the agent may reach (through a proxy)",
        ),
    }),
  ])
  .describe(
    "What the agent may reach: false (nothing), true (everything), or { allow: [...] } (those hosts only; enforced inside an environment)",
  );

export type EnvironmentInput = z.infer<typeof environmentSchema>;
export type ResourcesInput = z.infer<typeof resourcesSchema>;
