/**
 * Seeds: the starting tree of a workspace, materialized once per run into the prepared start's
 * folder as a git repository (path: copied; git: fetched at its ref; archive: checked, then
 * unpacked; empty: nothing).
 */
import { cp, mkdir } from "node:fs/promises";
import path from "node:path";
import type { SeedSpec } from "../config/types.js";
import { ArchiveRefused, SKIPPED_SEED_FOLDERS, unpackArchive } from "./archive.js";
import { WorkspaceError } from "./errors.js";
import { git } from "./git.js";
import { fetchGitSeed } from "./git-seed.js";

export function describeSeed(seed: SeedSpec): string {
  if (seed.kind === "path") return `folder ${seed.path}`;
  if (seed.kind === "archive") return `archive ${seed.path}`;
  if (seed.kind === "git") {
    return `git ${seed.url}${seed.ref ? ` at ${seed.ref}` : ""}${seed.subdir ? ` (subdir ${seed.subdir})` : ""}`;
  }
  return "empty repository";
}

/** Copies a folder seed, leaving out version-control and evalgate folders. */
async function copyFolder(from: string, to: string): Promise<void> {
  await cp(from, to, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true,
    filter: (src) => !SKIPPED_SEED_FOLDERS.includes(path.basename(src)),
  });
}

/** Materializes `seed` into `dir` (which must not exist yet) as a git repository. */
export async function materializeSeed(seed: SeedSpec, dir: string): Promise<void> {
  if (seed.kind === "git") {
    await mkdir(dir, { recursive: true });
    await fetchGitSeed(dir, seed);
    return;
  }
  if (seed.kind === "path") {
    try {
      await copyFolder(seed.path, dir);
    } catch (error) {
      throw new WorkspaceError("seed", `cannot copy ${seed.path}: ${(error as Error).message}`);
    }
  } else if (seed.kind === "archive") {
    try {
      await unpackArchive(seed.path, dir, seed.limits);
    } catch (error) {
      if (!(error instanceof ArchiveRefused)) {
        throw new WorkspaceError("seed", `cannot unpack ${seed.path}: ${(error as Error).message}`);
      }
      throw new WorkspaceError("config", `archive ${seed.path} refused: ${error.message}`, {
        key: "archive",
        hint: "archives may hold plain files and folders only (no links, devices, absolute or .. paths), within max_size, max_unpacked_size and max_entries (archive: { path, max_size, ... } raises them)",
      });
    }
  } else {
    await mkdir(dir, { recursive: true });
  }
  await git(["init", "-q", dir]);
}
