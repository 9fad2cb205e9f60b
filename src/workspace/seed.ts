/**
 * Seeds: the starting tree of a workspace, materialized once per run into the prepared start's
 * folder as a git repository (path: copied; git: fetched at its ref; archive: checked, then
 * unpacked; empty: nothing).
 */
import { mkdir } from "node:fs/promises";
import { execa } from "execa";
import type { SeedSpec } from "../config/types.js";
import { ArchiveRefused, SKIPPED_SEED_FOLDERS, unpackArchive } from "./archive.js";
import { WorkspaceError } from "./errors.js";
import { firstLines, git } from "./git.js";
import { fetchGitSeed } from "./git-seed.js";
import { runTool } from "./tool.js";

export function describeSeed(seed: SeedSpec): string {
  if (seed.kind === "path") return `folder ${seed.path}`;
  if (seed.kind === "archive") return `archive ${seed.path}`;
  if (seed.kind === "git") {
    return `git ${seed.url}${seed.ref ? ` at ${seed.ref}` : ""}${seed.subdir ? ` (subdir ${seed.subdir})` : ""}`;
  }
  return "empty repository";
}

/**
 * Copies a folder seed, leaving out version-control and evalgate folders (at any depth): one `tar`
 * writing, one reading, as the copy keeps links as links, modes and times, and makes each hard link
 * a file of its own; special files (FIFOs, sockets, devices) are left out (docs/decisions/0178;
 * Node's `fs.cp` took 1.2 s for 2,000 files, the pipe 40 ms).
 */
async function copyFolder(from: string, to: string, leftOut: readonly string[] = []): Promise<void> {
  await mkdir(to, { recursive: true });
  // The seed's `exclude:` paths are anchored at its top; .git and .evalgate are left out at any depth.
  const anchored =
    leftOut.length > 0 ? ["--anchored", ...leftOut.map((p) => `--exclude=./${p}`), "--no-anchored"] : [];
  const exclude = [...anchored, ...SKIPPED_SEED_FOLDERS.map((name) => `--exclude=${name}`)];
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" };
  const opts = { env, extendEnv: false, reject: false } as const;
  const writer = execa("tar", ["-C", from, "-cf", "-", "--hard-dereference", ...exclude, "."], {
    ...opts,
    stdin: "ignore",
  });
  const reader = writer.pipe("tar", ["-C", to, "-xpf", "-", "--no-same-owner"], opts);
  // The writer's failure first: when it cannot read the seed, the reader only sees a short archive.
  const failed = (await Promise.all([writer, reader])).find((r) => r.failed);
  if (failed) throw new Error(firstLines(String(failed.stderr || failed.shortMessage)));
  // FIFOs and devices hold nothing git can commit, and a device would be the agent's to open: left
  // out, as tar leaves out sockets.
  const special = ["(", "-type", "p", "-o", "-type", "b", "-o", "-type", "c", ")", "-delete"];
  const r = await runTool("find", [to, "-mindepth", "1", ...special], { env });
  if (r.code !== 0) throw new Error(`cannot leave out special files: ${r.stderr.trim()}`);
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
      await copyFolder(seed.path, dir, seed.exclude);
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
