/**
 * Uploading the run bundle as a workflow artifact (@actions/artifact, the Actions results service).
 * An upload that cannot happen is a warning: the bundle stays on disk and the verdict is unchanged.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { DefaultArtifactClient } from "@actions/artifact";

export interface UploadedArtifact {
  id: number;
  size: number;
}

/** Where bundles go; the action uses the Actions artifact service. */
export interface ArtifactStore {
  upload(name: string, dir: string, retentionDays?: number): Promise<UploadedArtifact>;
}

export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

export class ActionsArtifactStore implements ArtifactStore {
  async upload(name: string, dir: string, retentionDays?: number): Promise<UploadedArtifact> {
    const files = await filesUnder(dir);
    const result = await new DefaultArtifactClient().uploadArtifact(name, files, dir, {
      ...(retentionDays ? { retentionDays } : {}),
    });
    if (result.id === undefined) throw new Error("the artifact service returned no artifact id");
    return { id: result.id, size: result.size ?? 0 };
  }
}

/** Why an upload cannot be attempted here, or undefined when it can. */
export function uploadProblem(env: NodeJS.ProcessEnv): string | undefined {
  if (!env.ACTIONS_RUNTIME_TOKEN || !env.ACTIONS_RESULTS_URL)
    return "ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL are not set (not running in a GitHub Actions job)";
  return undefined;
}

export function artifactUrl(
  ctx: { serverUrl: string; owner: string; repo: string; runId: number | null },
  id: number,
): string | undefined {
  return ctx.runId
    ? `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}/actions/runs/${ctx.runId}/artifacts/${id}`
    : undefined;
}

/**
 * The artifact name of this run attempt. "Re-run jobs" keeps the run id and bumps
 * GITHUB_RUN_ATTEMPT, and a name can be used once per run (a second upload answers 409): a re-run
 * uploads as NAME-attempt-N. The first attempt keeps the plain name.
 */
export function attemptArtifactName(name: string, attempt: number | null): string {
  return attempt && attempt > 1 ? `${name}-attempt-${attempt}` : name;
}

/** NAME or NAME-attempt-N: the attempt it was uploaded by (1 for the plain name), else undefined. */
export function artifactAttempt(artifact: string, name: string): number | undefined {
  if (artifact === name) return 1;
  if (!artifact.startsWith(`${name}-attempt-`)) return undefined;
  const m = /^(\d+)$/.exec(artifact.slice(name.length + "-attempt-".length));
  return m ? Number(m[1]) : undefined;
}

/** Of a run's artifacts, the one of `name` uploaded by the newest attempt (a re-run's, not the first's). */
export function newestAttempt<T extends { name: string }>(
  artifacts: readonly T[],
  name: string,
): T | undefined {
  let best: { a: T; attempt: number } | undefined;
  for (const a of artifacts) {
    const attempt = artifactAttempt(a.name, name);
    if (attempt !== undefined && (!best || attempt > best.attempt)) best = { a, attempt };
  }
  return best?.a;
}

/** The artifact name of shard I of N: the merge step finds the shards by this name. */
export function shardArtifactName(name: string, shard: { index: number; total: number }): string {
  return `${name}-shard-${shard.index}-of-${shard.total}`;
}

/** Shard I of N of NAME-shard-I-of-N (or of a re-run's NAME-shard-I-of-N-attempt-K), with the attempt. */
export function parseShardArtifactName(
  name: string,
  artifactName: string,
): { index: number; total: number; attempt: number } | undefined {
  if (!name.startsWith(`${artifactName}-shard-`)) return undefined;
  const m = /^(\d+)-of-(\d+)(?:-attempt-(\d+))?$/.exec(name.slice(artifactName.length + "-shard-".length));
  return m ? { index: Number(m[1]), total: Number(m[2]), attempt: m[3] ? Number(m[3]) : 1 } : undefined;
}
