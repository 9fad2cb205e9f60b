/**
 * Files and folders the agent made unreadable to their owner (`chmod 000`). evalgate runs as the
 * agent's user, so without this `git add` fails on such a file (the attempt would end as a
 * `workspace_error`, an infrastructure error an agent could trade a sure failure for) and skips
 * such a folder with a mere warning (its files would be missing from the diff and the scorers'
 * view). The owner's read permission (and search, for folders) is given back before the capture;
 * git records only the executable bit of a file, so the diff is the same (docs/decisions/0076).
 * Only mode bits are looked at, so this behaves the same whether evalgate runs as root or not.
 */
import { chmod, lstat } from "node:fs/promises";
import { execa } from "execa";
import { nulParts, under } from "./git.js";

/** Nested locked folders are found one level per round; past this many, the capture says so. */
const MAX_ROUNDS = 64;

/** Entries under `workTree` (outside `.git`) that their owner cannot read or search, as bytes. */
async function locked(workTree: string): Promise<Buffer[]> {
  const r = await execa(
    "find",
    [
      ".",
      "(",
      "-name",
      ".git",
      "-prune",
      ")",
      "-o",
      "(",
      "-type",
      "d",
      "!",
      "-perm",
      "-u=rx",
      "-print0",
      ")",
      "-o",
      "(",
      "-type",
      "f",
      "!",
      "-perm",
      "-u=r",
      "-print0",
      ")",
    ],
    // find exits 1 when it met a folder it could not enter (not as root): that one is printed too.
    {
      cwd: workTree,
      encoding: "buffer",
      reject: false,
      extendEnv: false,
      env: { PATH: process.env.PATH ?? "" },
    },
  );
  if (r.exitCode !== 0 && r.exitCode !== 1) {
    throw new Error(
      `cannot look for unreadable files: ${Buffer.from(r.stderr ?? "")
        .toString("utf8")
        .trim()}`,
    );
  }
  return nulParts(Buffer.from(r.stdout ?? "")).map((p) => p.subarray(2)); // without "./"
}

/**
 * Gives the owner read permission on every file, and read and search permission on every folder,
 * of the workspace that lacks it. Returns the paths it changed (relative, decoded for messages).
 */
export async function unlockWorkspace(workTree: string): Promise<string[]> {
  const changed: string[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = await locked(workTree);
    if (found.length === 0) return changed;
    for (const rel of found) {
      const full = under(workTree, rel);
      const s = await lstat(full);
      await chmod(full, s.mode | (s.isDirectory() ? 0o500 : 0o400));
      changed.push(rel.toString("utf8"));
    }
  }
  throw new Error(`folders locked more than ${MAX_ROUNDS} levels deep`);
}
