/**
 * Putting entries of the prepared start tree back into a workspace, never through a link the agent
 * left: protected paths (protect.ts), setup-built trees (setup-trees.ts) and test configuration
 * (test-config.ts) are restored with these.
 */
import type { Stats } from "node:fs";
import { chmod, copyFile, lstat, mkdir, readdir, readlink, rm, symlink } from "node:fs/promises";
import { type CopyMethod, copyTree } from "./copy.js";
import { under } from "./git.js";

export type EntryKind = "file" | "symlink" | "dir" | "other";

export function kindOf(s: Stats): EntryKind {
  if (s.isSymbolicLink()) return "symlink";
  if (s.isFile()) return "file";
  if (s.isDirectory()) return "dir";
  return "other";
}

/**
 * Makes every folder on the way to `rel` inside `root` a real folder: a file or symlink the agent
 * put in the way is removed, so nothing is ever written through a symlink out of the workspace.
 */
export async function realParents(root: string, rel: Buffer | string): Promise<void> {
  const parts = (typeof rel === "string" ? Buffer.from(rel) : rel).toString("latin1").split("/").slice(0, -1);
  let at = Buffer.from(root);
  for (const part of parts) {
    at = Buffer.concat([at, Buffer.from(`/${part}`, "latin1")]);
    const s = await lstat(at).catch(() => undefined);
    if (s?.isDirectory()) continue;
    if (s) await rm(at, { recursive: true, force: true });
    await mkdir(at);
  }
}

/**
 * Replaces whatever is at `name` in `ws` with the start tree's entry there, a folder with all it
 * holds; removes it when the start tree has none.
 */
export async function putBackWhole(
  startDir: string,
  ws: string,
  name: Buffer,
  method: CopyMethod = "copy",
): Promise<void> {
  const dest = under(ws, name);
  const from = under(startDir, name);
  await realParents(ws, name);
  await rm(dest, { recursive: true, force: true });
  const s = await lstat(from).catch(() => undefined);
  if (!s) return;
  const text = from.toString("utf8");
  // cp takes names as arguments, which must be UTF-8; a name that is not is copied here instead.
  if (s.isDirectory() && Buffer.from(text).equals(from)) await copyTree(text, dest.toString("utf8"), method);
  else await copyEntry(from, dest, s);
}

/** Copies one entry (a folder with all it holds), by bytes, keeping modes and link targets. */
async function copyEntry(from: Buffer, dest: Buffer, s: Stats): Promise<void> {
  if (s.isSymbolicLink()) await symlink(await readlink(from, { encoding: "buffer" }), dest);
  else if (s.isFile()) {
    await copyFile(from, dest);
    await chmod(dest, s.mode & 0o7777);
  } else if (s.isDirectory()) {
    await mkdir(dest);
    for (const d of await readdir(from, { encoding: "buffer" })) {
      const f = Buffer.concat([from, Buffer.from("/"), d]);
      await copyEntry(f, Buffer.concat([dest, Buffer.from("/"), d]), await lstat(f));
    }
    await chmod(dest, s.mode & 0o7777);
  }
}
