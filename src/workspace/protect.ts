/**
 * What the scorers see besides the agent's work. Protected paths are compared with the prepared
 * baseline and put back as they were (edits, deletions, additions, mode and type changes, a folder
 * swapped for a symlink), and hidden verifiers are copied in fresh, after the agent has finished.
 * The comparison walks the trees themselves rather than trusting git: an agent can hide a new file
 * from `git add` with a .gitignore line, but not from a walk.
 */
import type { Dirent, Stats } from "node:fs";
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

interface Entry {
  kind: "file" | "symlink" | "dir" | "other";
  mode: number;
  size: number;
}

function kindOf(s: Stats): Entry["kind"] {
  if (s.isSymbolicLink()) return "symlink";
  if (s.isFile()) return "file";
  if (s.isDirectory()) return "dir";
  return "other";
}

/** Matches a protected glob, or anything below a folder a glob names ("test" protects test/**). */
export function protectedMatcher(globs: readonly string[]): (rel: string) => boolean {
  const patterns = globs.flatMap((g) => (g.endsWith("/**") ? [g] : [g, `${g.replace(/\/+$/, "")}/**`]));
  const isMatch = picomatch(patterns, { dot: true });
  return (rel) => isMatch(rel);
}

/** Whether anything below folder `rel` could match one of the globs (so the walk can skip it). */
function mayHoldMatches(globs: readonly string[]): (rel: string) => boolean {
  const bases = globs.map((g) => picomatch.scan(g).base.replace(/\/+$/, ""));
  return (rel) =>
    bases.some((b) => b === "" || b === rel || rel.startsWith(`${b}/`) || b.startsWith(`${rel}/`));
}

async function readDir(abs: string): Promise<Dirent[]> {
  try {
    return await readdir(abs, { withFileTypes: true });
  } catch (error) {
    // An agent may have taken away the permission to read a folder: give it back and look again.
    if ((error as NodeJS.ErrnoException).code !== "EACCES") throw error;
    await chmod(abs, 0o755);
    return readdir(abs, { withFileTypes: true });
  }
}

/** Every protected entry of a tree (never following symlinks, never inside the top .git). */
async function walk(root: string, globs: readonly string[]): Promise<Map<string, Entry>> {
  const matches = protectedMatcher(globs);
  const descend = mayHoldMatches(globs);
  const out = new Map<string, Entry>();
  const visit = async (relDir: string): Promise<void> => {
    for (const d of await readDir(path.join(root, relDir))) {
      const rel = relDir ? `${relDir}/${d.name}` : d.name;
      if (rel === ".git") continue;
      const isDir = d.isDirectory();
      if (matches(rel)) {
        const s = await lstat(path.join(root, rel));
        out.set(rel, { kind: kindOf(s), mode: s.mode & 0o7777, size: s.size });
      }
      if (isDir && descend(rel)) await visit(rel);
    }
  };
  await visit("");
  return out;
}

async function sameContent(a: string, b: string, entry: Entry): Promise<boolean> {
  if (entry.kind === "symlink") return (await readlink(a)) === (await readlink(b));
  if (entry.kind !== "file") return true;
  const [x, y] = await Promise.all([readFile(a), readFile(b)]);
  return x.equals(y);
}

/**
 * Makes every folder on the way to `rel` inside `root` a real folder: a file or symlink the agent
 * put in the way is removed, so nothing is ever written through a symlink out of the workspace.
 */
async function realParents(root: string, rel: string): Promise<void> {
  const parts = rel.split("/").slice(0, -1);
  let at = root;
  for (const part of parts) {
    at = path.join(at, part);
    const s = await lstat(at).catch(() => undefined);
    if (s?.isDirectory()) continue;
    if (s) await rm(at, { recursive: true, force: true });
    await mkdir(at);
  }
}

async function putBack(baseline: string, ws: string, rel: string, entry: Entry): Promise<void> {
  await realParents(ws, rel);
  const dest = path.join(ws, rel);
  const from = path.join(baseline, rel);
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
 * Compares the protected paths of the workspace with the baseline, puts back every difference, and
 * returns the paths the agent changed (sorted; a folder whose type or mode changed is listed with
 * a trailing `/`).
 */
export async function restoreProtected(
  baseline: string,
  ws: string,
  globs: readonly string[],
): Promise<string[]> {
  if (globs.length === 0) return [];
  const [before, after] = await Promise.all([walk(baseline, globs), walk(ws, globs)]);
  const changed = new Set<string>();
  const label = (rel: string, e: Entry) => (e.kind === "dir" ? `${rel}/` : rel);
  // Added by the agent: removed, deepest first.
  for (const [rel, e] of [...after].reverse()) {
    if (before.has(rel)) continue;
    if (e.kind === "dir") {
      // A new folder only matters for what is in it, which is listed on its own.
      await rm(path.join(ws, rel), { recursive: true, force: true });
      continue;
    }
    changed.add(label(rel, e));
    await rm(path.join(ws, rel), { recursive: true, force: true });
  }
  // Changed or removed: put back, parents first.
  for (const [rel, b] of before) {
    const a = after.get(rel);
    const same =
      a !== undefined &&
      a.kind === b.kind &&
      a.mode === b.mode &&
      (b.kind === "dir" ||
        (a.size === b.size && (await sameContent(path.join(ws, rel), path.join(baseline, rel), b))));
    if (same) continue;
    // A folder that is gone is reported through the files it held.
    if (!(b.kind === "dir" && a === undefined)) changed.add(label(rel, b));
    await putBack(baseline, ws, rel, b);
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
