/**
 * What the scorers see besides the agent's work. Protected paths are compared with the prepared
 * start tree and put back as they were (edits, deletions, additions, mode and type changes, a folder
 * swapped for a symlink), and hidden verifiers are copied in fresh, after the agent has finished.
 * The comparison walks the trees themselves rather than trusting git: an agent can hide a new file
 * from `git add` with a .gitignore line, but not from a walk.
 */
import type { Dirent } from "node:fs";
import {
  chmod,
  copyFile,
  cp,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
} from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import type { VerifierSpec } from "../config/types.js";
import { under } from "./git.js";
import { pathMatcher } from "./path-glob.js";
import { type EntryKind, kindOf, realParents } from "./put-back.js";
import type { PreparedStart } from "./start.js";

interface Entry {
  /** The path relative to the tree, byte for byte (a name need not be UTF-8). */
  name: Buffer;
  kind: EntryKind;
  mode: number;
  size: number;
}

/** Matches a protected glob, or anything below a folder a glob names ("test" protects test/**). */
export function protectedMatcher(globs: readonly string[]): (rel: string) => boolean {
  const patterns = globs.flatMap((g) => (g.endsWith("/**") ? [g] : [g, `${g.replace(/\/+$/, "")}/**`]));
  return pathMatcher(patterns);
}

/** Whether anything below folder `rel` could match one of the globs (so the walk can skip it). */
function mayHoldMatches(globs: readonly string[]): (rel: string) => boolean {
  const bases = globs.map((g) => picomatch.scan(g).base.replace(/\/+$/, ""));
  return (rel) =>
    bases.some((b) => b === "" || b === rel || rel.startsWith(`${b}/`) || b.startsWith(`${rel}/`));
}

async function readDir(abs: Buffer): Promise<Dirent<Buffer>[]> {
  try {
    return await readdir(abs, { withFileTypes: true, encoding: "buffer" });
  } catch (error) {
    // An agent may have taken away the permission to read a folder: give it back and look again.
    if ((error as NodeJS.ErrnoException).code !== "EACCES") throw error;
    await chmod(abs, 0o755);
    return readdir(abs, { withFileTypes: true, encoding: "buffer" });
  }
}

type Tree = Map<string, Entry>;

/**
 * Every protected entry of a tree (never following symlinks, never inside the top .git), keyed by
 * its exact bytes (one character per byte). Globs match the UTF-8 reading of the name; a name that
 * is not UTF-8 keeps its own key, so two such names never stand for each other.
 */
async function walk(root: string, globs: readonly string[], skip: readonly string[]): Promise<Tree> {
  const matches = protectedMatcher(globs);
  const descend = mayHoldMatches(globs);
  const out = new Map<string, Entry>();
  const visit = async (relDir: Buffer): Promise<void> => {
    for (const d of await readDir(under(root, relDir))) {
      const name = relDir.length ? Buffer.concat([relDir, Buffer.from("/"), d.name]) : d.name;
      const rel = name.toString("utf8");
      // Shared setup-built trees (share.ts) are checked whole, from their upper layers.
      if (rel === ".git" || skip.includes(rel)) continue;
      const isDir = d.isDirectory();
      if (matches(rel)) {
        const s = await lstat(under(root, name));
        out.set(name.toString("latin1"), { name, kind: kindOf(s), mode: s.mode & 0o7777, size: s.size });
      }
      if (isDir && descend(rel)) await visit(name);
    }
  };
  await visit(Buffer.alloc(0));
  return out;
}

/** Walks of prepared start trees, per set of globs. */
const startWalks = new WeakMap<Pick<PreparedStart, "dir">, Map<string, Promise<Tree>>>();

/**
 * The protected entries of a prepared start tree. It never changes, so it is walked once per set of
 * globs and the walk is shared by all its attempts; a walk that failed is not kept.
 */
function walkStart(
  start: Pick<PreparedStart, "dir">,
  globs: readonly string[],
  skip: readonly string[],
): Promise<Tree> {
  const walks = startWalks.get(start) ?? new Map<string, Promise<Tree>>();
  startWalks.set(start, walks);
  const key = JSON.stringify([globs, skip]);
  let p = walks.get(key);
  if (!p) {
    p = walk(start.dir, globs, skip);
    walks.set(key, p);
    p.catch(() => walks.delete(key));
  }
  return p;
}

async function sameContent(a: Buffer, b: Buffer, entry: Entry): Promise<boolean> {
  if (entry.kind === "symlink") return (await readlink(a)) === (await readlink(b));
  if (entry.kind !== "file") return true;
  const [x, y] = await Promise.all([readFile(a), readFile(b)]);
  return x.equals(y);
}

async function putBack(startDir: string, ws: string, entry: Entry): Promise<void> {
  await realParents(ws, entry.name);
  const dest = under(ws, entry.name);
  const from = under(startDir, entry.name);
  if (entry.kind === "dir") {
    const s = await lstat(dest).catch(() => undefined);
    if (!s?.isDirectory()) {
      await rm(dest, { recursive: true, force: true });
      await mkdir(dest);
    }
    await chmod(dest, entry.mode);
    return;
  }
  await rm(dest, { recursive: true, force: true });
  if (entry.kind === "symlink") await symlink(await readlink(from), dest);
  else if (entry.kind === "file") {
    await copyFile(from, dest);
    await chmod(dest, entry.mode);
  }
}

/**
 * Compares the protected paths of the workspace with the start tree, puts back every difference, and
 * returns the paths the agent changed (sorted; a folder whose type or mode changed is listed with
 * a trailing `/`).
 */
export async function restoreProtected(
  prepared: Pick<PreparedStart, "dir">,
  ws: string,
  globs: readonly string[],
  /** Shared setup-built trees (share.ts): left out of both walks. */
  skip: readonly string[] = [],
): Promise<string[]> {
  if (globs.length === 0) return [];
  const startDir = prepared.dir;
  const [before, after] = await Promise.all([walkStart(prepared, globs, skip), walk(ws, globs, skip)]);
  const changed = new Set<string>();
  // Names are shown as UTF-8 (a byte that is not becomes U+FFFD).
  const label = (e: Entry) => `${e.name.toString("utf8")}${e.kind === "dir" ? "/" : ""}`;
  // Added by the agent: removed, deepest first.
  for (const [rel, e] of [...after].reverse()) {
    if (before.has(rel)) continue;
    await rm(under(ws, e.name), { recursive: true, force: true });
    // A new folder only matters for what is in it, which is listed on its own.
    if (e.kind !== "dir") changed.add(label(e));
  }
  // Changed or removed: put back, parents first.
  for (const [rel, b] of before) {
    const a = after.get(rel);
    const same =
      a !== undefined &&
      a.kind === b.kind &&
      a.mode === b.mode &&
      (b.kind === "dir" ||
        (a.size === b.size && (await sameContent(under(ws, b.name), under(startDir, b.name), b))));
    if (same) continue;
    // A folder that is gone is reported through the files it held.
    if (!(b.kind === "dir" && a === undefined)) changed.add(label(b));
    await putBack(startDir, ws, b);
  }
  return [...changed].sort();
}

/**
 * Copies the hidden verifiers into the workspace, replacing whatever the agent left at their
 * destinations. Called for every attempt after the agent finished, so the agent never sees them.
 */
export async function installVerifiers(ws: string, verifiers: readonly VerifierSpec[]): Promise<void> {
  for (const v of verifiers) {
    await realParents(ws, v.to);
    const dest = path.join(ws, v.to);
    await rm(dest, { recursive: true, force: true });
    await cp(v.from, dest, { recursive: true, verbatimSymlinks: true });
  }
}
