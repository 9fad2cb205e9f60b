/**
 * The bundle's records of a case's environment and resources (summary.json, result.json): split
 * from wire-schema.ts by concern.
 */
import { z } from "zod";

/** Where a case ran: the image as the eval file named it (or evalgate built it), its digest, the workspace's path in it. */
export const environmentSchema = z.looseObject({
  image: z.string(),
  digest: z.string(),
  workdir: z.string(),
  engine: z.string(),
});

/** A case's `resources:` as applied: each resource's bound (engine, cgroup, rlimit, watch) or why none. */
export const resourcesSchema = z.looseObject({
  memory_bytes: z.number().nullable(),
  cpus: z.number().nullable(),
  pids: z.number().nullable(),
  disk_bytes: z.number().nullable(),
  applied: z.array(
    z.looseObject({
      resource: z.enum(["memory", "cpus", "pids", "disk"]),
      by: z.enum(["engine", "cgroup", "rlimit", "watch"]).nullable(),
      note: z.string().nullable(),
    }),
  ),
});
