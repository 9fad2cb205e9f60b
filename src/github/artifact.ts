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

/** The artifact name of shard I of N: the merge step finds the shards by this name. */
export function shardArtifactName(name: string, shard: { index: number; total: number }): string {
  return `${name}-shard-${shard.index}-of-${shard.total}`;
}

export function parseShardArtifactName(
  name: string,
  artifactName: string,
): { index: number; total: number } | undefined {
  if (!name.startsWith(`${artifactName}-shard-`)) return undefined;
  const m = /^(\d+)-of-(\d+)$/.exec(name.slice(artifactName.length + "-shard-".length));
  return m ? { index: Number(m[1]), total: Number(m[2]) } : undefined;
}
