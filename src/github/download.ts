/**
 * Downloading bundle artifacts of workflow runs through the REST API (needs `actions: read`):
 * the base branch's bundle (baseline), this run's shard bundles (merge), the triggering run's bundle
 * (workflow_run). The zip is fetched from the address the API redirects to, without the token, and
 * extracted as untrusted input.
 */
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ArchiveLimits } from "../config/types.js";
import { UsageError } from "../errors.js";
import { ArchiveRefused, unpackArchive } from "../workspace/archive.js";
import { tempRoot } from "../workspace/temp.js";
import { apiStatus, explainApiError, type GitHubClient } from "./client.js";

export interface ArtifactRef {
  id: number;
  name: string;
  expired: boolean;
}

/** A download that failed for a reason worth telling the user (expired, forbidden, too large). */
export class DownloadError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "DownloadError";
  }
}

/** A fresh folder to download into, under the runner's temp folder. */
export function scratchDir(env: NodeJS.ProcessEnv, prefix: string): Promise<string> {
  return mkdtemp(path.join(tempRoot(env), prefix));
}

/** `call` to GitHub's Actions API, whose failure stops the step: saying what failed and that it needs actions: read. */
export async function actionsApi<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new UsageError(explainApiError(error, what, "actions: read"));
  }
}

/** Artifacts of one workflow run, every page, optionally only those named `name`. */
export async function listRunArtifacts(
  client: GitHubClient,
  repo: { owner: string; repo: string },
  runId: number,
  name?: string,
): Promise<ArtifactRef[]> {
  const all = await client.paginate(client.rest.actions.listWorkflowRunArtifacts, {
    owner: repo.owner,
    repo: repo.repo,
    run_id: runId,
    per_page: 100,
    ...(name ? { name } : {}),
  });
  return all
    .filter((a) => !name || a.name === name)
    .map((a) => ({ id: a.id, name: a.name, expired: a.expired }));
}

const MAX_ZIP_BYTES = 2 * 1024 ** 3;

/** Downloads artifact `id` and extracts it into `dest`. */
export async function downloadArtifact(
  client: GitHubClient,
  repo: { owner: string; repo: string },
  artifact: { id: number; name: string },
  dest: string,
  tmpRoot: string = tempRoot(),
): Promise<void> {
  let location: string | undefined;
  try {
    const res = await client.rest.actions.downloadArtifact({
      owner: repo.owner,
      repo: repo.repo,
      artifact_id: artifact.id,
      archive_format: "zip",
      request: { redirect: "manual" },
    });
    location = (res.headers as Record<string, string | undefined>).location;
  } catch (error) {
    if (apiStatus(error) === 410) throw new DownloadError(`artifact ${artifact.name} has expired`, 410);
    throw error;
  }
  if (!location) throw new DownloadError(`GitHub gave no download address for artifact ${artifact.name}`);

  // The address is signed: no token goes with it.
  const response = await fetch(location, { redirect: "follow" });
  if (!response.ok || !response.body) {
    throw new DownloadError(
      `downloading artifact ${artifact.name} failed: ${response.status} ${response.statusText}`,
      response.status,
    );
  }
  const tmp = await mkdtemp(path.join(tmpRoot, "evalgate-artifact-"));
  try {
    const zipFile = path.join(tmp, "artifact.zip");
    let bytes = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        if (bytes > MAX_ZIP_BYTES) done(new DownloadError(`artifact ${artifact.name} is larger than 2 GiB`));
        else done(null, chunk);
      },
    });
    await pipeline(
      Readable.fromWeb(response.body as import("node:stream/web").ReadableStream),
      cap,
      createWriteStream(zipFile),
    );
    await extractArtifact(zipFile, dest, artifact.name);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** What one bundle artifact may hold: bundles are large, but not unbounded. */
export const ARTIFACT_LIMITS: ArchiveLimits = {
  maxSize: MAX_ZIP_BYTES,
  maxUnpackedSize: 2 * 1024 ** 3,
  maxEntries: 200_000,
};

/**
 * Extracts a downloaded artifact zip into `dest` as untrusted input, with the checks of archive
 * seeds (workspace/archive.ts): the whole zip is read and found safe before anything is written.
 */
export async function extractArtifact(
  zipFile: string,
  dest: string,
  name: string,
  limits: ArchiveLimits = ARTIFACT_LIMITS,
): Promise<void> {
  try {
    await unpackArchive(zipFile, dest, limits);
  } catch (error) {
    if (error instanceof ArchiveRefused)
      throw new DownloadError(`artifact ${name} was refused: ${error.message}`);
    throw error;
  }
}
