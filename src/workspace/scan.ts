/**
 * The one pass over a workspace before its capture: a single `find` that reports, outside `.git`,
 * the entries the agent made unreadable to their owner, the regular files over the size limit and
 * every ignore file (`.gitignore`). Before, the capture walked the tree twice (a `find` for locked
 * entries, a `git ls-files` for big ones) and listed ignored files with one more git process on
 * every attempt (docs/decisions/0170). Given the attempt's copy mark (workspace/change-mark.ts), the
 * same pass lists every entry whose status changed after the copy: what setup-built trees and test
 * configuration are checked against (docs/decisions/0190).
 *
 * Unreadable entries (`chmod 000`): evalgate runs as the agent's user, so without this `git add`
 * fails on such a file (the attempt would end as a `workspace_error`, an infrastructure error an
 * agent could trade a sure failure for) and skips such a folder with a mere warning (its files would
 * be missing from the diff and the scorers' view). The owner's read permission (and search, for
 * folders) is given back before the capture; git records only the executable bit of a file, so the
 * diff is the same (docs/decisions/0076). Only mode bits are looked at, so this behaves the same
 * whether evalgate runs as root or not.
 */
import { chmod, lstat, readFile, readlink } from "node:fs/promises";
import { nulParts, under } from "./git.js";
import type { PreparedStart } from "./start.js";
import { runTool } from "./tool.js";

/** Nested locked folders are found one level per round; this deep, all below is opened at once. */
const MAX_ROUNDS = 64;

export interface WorkspaceScan {
  /** Entries made readable again (relative paths, decoded for messages). */
  unlocked: string[];
  /** Regular files larger than the limit, as bytes (names need not be UTF-8). */
  big: Buffer[];
  /** Every entry named `.gitignore`, as bytes. */
  ignoreFiles: Buffer[];
  /**
   * With a change mark: every entry (outside `.git`) whose status changed after it, the workspace
   * root as the empty name. Absent without a mark.
   */
  changed?: Buffer[];
  /** The folders left out of the pass (shared setup-built trees, plain names). */
  pruned?: readonly string[];
}

interface Found {
  locked: Buffer[];
  big: Buffer[];
  ignoreFiles: Buffer[];
  changed: Buffer[];
}

/** `find -newerct` takes the mark as `@seconds.nanoseconds`: nanoseconds kept exactly. */
function findTime(ns: bigint): string {
  return `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, "0")}`;
}

/**
 * One `find` over `root`, `.git` folders pruned. Each record is a letter and a path relative to
 * `root` (`%P`; the root itself is the empty path): L for a folder its owner cannot read or search
 * or a file its owner cannot read, B for a regular file over `maxBytes`, G for an ignore file, C for
 * an entry whose status changed after `since` (nanoseconds; a ctime no unprivileged process can set
 * back). G and C entries go on to the other tests, so a locked ignore file is reported as G and L.
 */
async function find(
  root: string,
  maxBytes?: number,
  since?: bigint,
  prune: readonly string[] = [],
): Promise<Found> {
  const args = [".", "(", "-name", ".git", "-prune", ")"];
  // Shared setup-built trees (share.ts): their changes are read from their upper layers instead.
  for (const p of prune) args.push("-o", "(", "-path", `./${p}`, "-prune", ")");
  args.push("-o", "(", "-name", ".gitignore", "-printf", "G%P\\0", "-false", ")");
  if (since !== undefined) {
    args.push("-o", "(", "-newerct", findTime(since), "-printf", "C%P\\0", "-false", ")");
  }
  args.push("-o", "(", "-type", "d", "!", "-perm", "-u=rx", "-printf", "L%P\\0", ")");
  args.push("-o", "(", "-type", "f", "!", "-perm", "-u=r", "-printf", "L%P\\0", ")");
  if (maxBytes !== undefined) {
    args.push("-o", "(", "-type", "f", "-size", `+${maxBytes}c`, "-printf", "B%P\\0", ")");
  }
  const r = await runTool("find", args, { cwd: root, env: { PATH: process.env.PATH ?? "" }, stdout: true });
  // find exits 1 when it met a folder it could not enter (not as root): that one is listed too.
  if (r.code !== 0 && r.code !== 1) {
    throw new Error(`cannot look for unreadable files: ${r.stderr.trim() || `find exited ${r.code}`}`);
  }
  const found: Found = { locked: [], big: [], ignoreFiles: [], changed: [] };
  for (const record of nulParts(r.stdout)) {
    const name = record.subarray(1);
    if (record[0] === 0x4c) found.locked.push(name);
    else if (record[0] === 0x42) found.big.push(name);
    else if (record[0] === 0x47) found.ignoreFiles.push(name);
    else if (record[0] === 0x43) found.changed.push(name);
  }
  return found;
}

/**
 * Gives the owner read permission on every file, and read and search permission on every folder,
 * of the workspace that lacks it, and reports the files over `maxBytes` and the ignore files as the
 * workspace is then, and the entries changed after `changedSince` when it is given. A locked folder
 * hides what is inside it until it is opened, so the pass is repeated only when it opened something
 * (the last pass sees the whole tree, so its lists are complete).
 */
export async function scanWorkspace(
  workTree: string,
  maxBytes?: number,
  changedSince?: bigint,
  prune: readonly string[] = [],
): Promise<WorkspaceScan> {
  const unlocked: string[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = await find(workTree, maxBytes, changedSince, prune);
    if (found.locked.length === 0) {
      const scan: WorkspaceScan = { unlocked, big: found.big, ignoreFiles: found.ignoreFiles };
      if (changedSince !== undefined) scan.changed = found.changed;
      if (prune.length > 0) scan.pruned = prune;
      return scan;
    }
    for (const rel of found.locked) {
      const full = under(workTree, rel);
      const s = await lstat(full);
      await chmod(full, s.mode | (s.isDirectory() ? 0o500 : 0o400));
      unlocked.push(rel.toString("utf8"));
    }
    // Deeper still: what is below the last ones found is opened in one pass. Before, this was an
    // error (a workspace_error the agent could choose with 70 nested `chmod 000` folders).
    if (round === MAX_ROUNDS - 2) {
      await unlockBelow(workTree);
      unlocked.push(`and every folder below ${unlocked.at(-1)}`);
    }
  }
  throw new Error(`folders locked more than ${MAX_ROUNDS} levels deep`);
}

/**
 * Opens, in one pass, every locked folder below `root` (outside `.git`) and all that is below it
 * (`chmod -R u+rX`, run by `find` so that names are passed as bytes).
 */
async function unlockBelow(root: string): Promise<void> {
  const args = [".", "(", "-name", ".git", "-prune", ")", "-o", "(", "-type", "d", "!", "-perm", "-u=rx"];
  args.push("-exec", "chmod", "-R", "u+rX", "--", "{}", "+", ")");
  const r = await runTool("find", args, { cwd: root, env: { PATH: process.env.PATH ?? "" } });
  // find exits 1 for the folders it could not enter before chmod opened them.
  if (r.code !== 0 && r.code !== 1)
    throw new Error(`cannot open the folders the agent locked: ${r.stderr.trim()}`);
}

/** Gives the owner back what the agent locked (see `scanWorkspace`); returns the paths it changed. */
export async function unlockWorkspace(workTree: string): Promise<string[]> {
  return (await scanWorkspace(workTree)).unlocked;
}

/** An ignore file's kind and, for a file or link, its content or target. */
interface IgnoreFile {
  kind: "file" | "symlink" | "other";
  data?: Buffer;
}

async function readIgnoreFile(root: string, name: Buffer): Promise<IgnoreFile | undefined> {
  const full = under(root, name);
  const s = await lstat(full).catch(() => undefined);
  if (!s) return undefined;
  if (s.isFile()) return { kind: "file", data: await readFile(full) };
  if (s.isSymbolicLink()) return { kind: "symlink", data: await readlink(full, { encoding: "buffer" }) };
  return { kind: "other" };
}

type StartTree = Pick<PreparedStart, "dir">;

/**
 * The ignore files of each prepared start tree (outside the pruned folders), read once per list of
 * pruned folders: the tree never changes once prepared.
 */
const startIgnoreFiles = new WeakMap<StartTree, Map<string, Promise<Map<string, IgnoreFile>>>>();

function ignoreFilesOf(start: StartTree, prune: readonly string[]): Promise<Map<string, IgnoreFile>> {
  const startDir = start.dir;
  const byPrune = startIgnoreFiles.get(start) ?? new Map<string, Promise<Map<string, IgnoreFile>>>();
  startIgnoreFiles.set(start, byPrune);
  const pruneKey = prune.join("\0");
  let p = byPrune.get(pruneKey);
  if (!p) {
    p = (async () => {
      const out = new Map<string, IgnoreFile>();
      for (const name of (await find(startDir, undefined, undefined, prune)).ignoreFiles) {
        const f = await readIgnoreFile(startDir, name);
        if (f) out.set(name.toString("latin1"), f);
      }
      return out;
    })();
    byPrune.set(pruneKey, p);
    p.catch(() => byPrune.delete(pruneKey));
  }
  return p;
}

/**
 * Whether the workspace's ignore files (`names`, from its scan) are those of the prepared start
 * tree, byte for byte. git's other sources of ignore rules (the capture store's `info/exclude`, its
 * configuration, evalgate's own environment) are out of the agent's reach, so then every file the
 * workspace ignores is one the start tree's rules ignore too, and the agent cannot have hidden a
 * file from `git add -A` with rules of its own.
 */
export async function sameIgnoreFiles(
  startTree: StartTree,
  workTree: string,
  names: Buffer[],
  /** The folders the workspace's pass left out: the start tree's are read without them too. */
  prune: readonly string[] = [],
): Promise<boolean> {
  const start = await ignoreFilesOf(startTree, prune);
  if (names.length !== start.size) return false;
  for (const name of names) {
    const was = start.get(name.toString("latin1"));
    if (!was) return false;
    const now = await readIgnoreFile(workTree, name);
    if (!now || now.kind !== was.kind) return false;
    if (was.data && !(now.data && was.data.equals(now.data))) return false;
  }
  return true;
}
