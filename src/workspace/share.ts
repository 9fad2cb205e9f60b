/**
 * What setup built, shared between attempts instead of copied into each (issue 31,
 * docs/decisions/0230). A folder the start tree ignores as a whole (`node_modules/`, `.venv/`) is
 * left out of the attempt's copy; its processes under bubblewrap see the start tree's folder through
 * an overlay whose upper layer is the attempt's own (sandbox/overlay.ts). That layer is exactly what
 * the agent changed there: it is read after the agent (`checkShared`), reported as tampering like a
 * change to a copied tree (setup-trees.ts), and emptied before the scorers see the tree.
 */
import type { Stats } from "node:fs";
import { chmod, lstat, mkdir, readdir, rm, utimes } from "node:fs/promises";
import path from "node:path";
import { OVERLAY_UNSAFE, type OverlayMount, overlaidCommand } from "../sandbox/overlay.js";
import type { CopyMethod } from "./copy.js";
import { GitError, gitBytes, nulInput, nulParts } from "./git.js";
import { isCache, sameEntry, setupTreesOf } from "./setup-trees.js";
import type { PreparedStart } from "./start.js";
import { runTool } from "./tool.js";

/**
 * How an attempt gets what setup built: `overlay`, shared (above); `reflink`, copied by the
 * filesystem's copy-on-write clones; `copy`, copied file by file (copy.ts).
 */
export type SharingMode = "overlay" | "reflink" | "copy";

type StartTree = Pick<PreparedStart, "dir" | "copyMethod">;

/**
 * Names a tree may have to be shared: they go into overlayfs's options (no `,` or `:`) and into
 * `find -path` patterns (no wildcards). Other trees are copied.
 */
const PLAIN = /^[A-Za-z0-9._@+=~ -]+(\/[A-Za-z0-9._@+=~ -]+)*$/;

const shareable = new WeakMap<StartTree, Promise<string[]>>();

/**
 * The start's setup-built trees that can be shared: folders (not links) that its rules ignore as a
 * whole, so git never looks inside them and nothing new in them is the agent's work (a folder that
 * only holds ignored files is copied: a new source file there belongs in the diff).
 */
export function shareableTrees(start: StartTree): Promise<string[]> {
  let p = shareable.get(start);
  if (!p) {
    p = (async () => {
      const trees = [...(await setupTreesOf(start))].filter((t) => PLAIN.test(t) && !OVERLAY_UNSAFE.test(t));
      const dirs: string[] = [];
      for (const t of trees) {
        const s = await lstat(path.join(start.dir, t)).catch(() => undefined);
        if (s?.isDirectory()) dirs.push(t);
      }
      if (dirs.length === 0) return [];
      const out = await gitBytes(["check-ignore", "-z", "--stdin", "--no-index"], {
        cwd: start.dir,
        input: nulInput(dirs.map((d) => Buffer.from(d))),
      }).catch((error: unknown) => {
        if (error instanceof GitError && error.exitCode === 1) return Buffer.alloc(0);
        throw error;
      });
      const whole = new Set(nulParts(out).map((n) => n.toString("utf8")));
      return dirs.filter((d) => whole.has(d)).sort();
    })();
    shareable.set(start, p);
    p.catch(() => shareable.delete(start));
  }
  return p;
}

const leans = new WeakMap<StartTree, Promise<string>>();

/**
 * The start tree without the shared trees (each an empty folder, where the overlay goes), made once
 * per start beside it: attempts copy this instead of the whole tree.
 */
export function leanStartOf(start: StartTree, trees: readonly string[]): Promise<string> {
  let p = leans.get(start);
  if (!p) {
    const dest = path.join(path.dirname(start.dir), "lean");
    p = (async () => {
      await rm(dest, { recursive: true, force: true });
      await copyExcept(start.dir, dest, "", trees, start.copyMethod ?? "copy");
      return dest;
    })();
    leans.set(start, p);
    p.catch(() => leans.delete(start));
  }
  return p;
}

/** Copies `src` to `dest` leaving the folders `trees` (relative to the start) empty. */
async function copyExcept(
  src: string,
  dest: string,
  rel: string,
  trees: readonly string[],
  method: CopyMethod,
): Promise<void> {
  const s = await lstat(src);
  await mkdir(dest);
  const plain: string[] = [];
  for (const name of await readdir(src, { encoding: "buffer" })) {
    const text = name.toString("utf8");
    // cp takes names as arguments: a name that is not UTF-8 beside a shared tree is not shared.
    if (!Buffer.from(text).equals(name)) throw new Error(`a name that is not UTF-8 in ${src}`);
    const k = rel ? `${rel}/${text}` : text;
    if (trees.includes(k)) await emptyLike(path.join(src, text), path.join(dest, text));
    else if (trees.some((t) => t.startsWith(`${k}/`))) {
      await copyExcept(path.join(src, text), path.join(dest, text), k, trees, method);
    } else plain.push(path.join(src, text));
  }
  if (plain.length > 0) {
    const r = await runTool("cp", [
      "-a",
      method === "reflink" ? "--reflink=always" : "--reflink=auto",
      "--",
      ...plain,
      dest,
    ]);
    if (r.code !== 0) throw new Error(`cannot copy ${src} to ${dest}: ${r.stderr.trim()}`);
  }
  await keepMode(dest, s);
}

async function emptyLike(src: string, dest: string): Promise<void> {
  await mkdir(dest);
  await keepMode(dest, await lstat(src));
}

async function keepMode(dest: string, s: Stats): Promise<void> {
  await chmod(dest, s.mode & 0o7777);
  await utimes(dest, s.atime, s.mtime);
}

/** The overlays of an attempt's shared trees: upper and work folders in `scratch`, outside its view. */
export async function overlaysFor(
  start: StartTree,
  ws: string,
  scratch: string,
  trees: readonly string[],
): Promise<OverlayMount[]> {
  const mounts: OverlayMount[] = [];
  for (const [i, t] of trees.entries()) {
    const m: OverlayMount = {
      lower: path.join(start.dir, t),
      upper: path.join(scratch, "upper", String(i)),
      work: path.join(scratch, "work", String(i)),
      target: path.join(ws, t),
    };
    await mkdir(m.work, { recursive: true });
    await mkdir(path.dirname(m.upper), { recursive: true });
    await emptyLayer(m);
    mounts.push(m);
  }
  return mounts;
}

/** A name as a lossless key (one character per byte): names need not be UTF-8. */
const key = (name: Buffer) => name.toString("latin1");
const label = (k: string, dir: boolean) => `${Buffer.from(k, "latin1").toString("utf8")}${dir ? "/" : ""}`;
const isWhiteout = (s: Stats) => s.isCharacterDevice() && s.rdev === 0;

export interface SharedCheck {
  /** What the agent changed in the shared trees (added, changed or removed), sorted. */
  tampered: string[];
  /** Cache entries its tools wrote there (not counted). */
  caches: number;
}

/**
 * Reads what the agent changed in the shared trees from their upper layers, compares each entry
 * with the start tree (a file copied up but left as it was is no change), and empties the layers:
 * the scorers see the start tree's folders as they are.
 */
export async function checkShared(
  start: StartTree,
  trees: readonly string[],
  mounts: readonly OverlayMount[],
): Promise<SharedCheck> {
  const found = new Set<string>();
  const result: SharedCheck = { tampered: [], caches: 0 };
  const note = (k: string, dir: boolean) => {
    if (isCache(k)) result.caches++;
    else found.add(label(k, dir));
  };
  /** Folders in an upper layer that lack some of the start's entries: removed, or just unchanged. */
  const unsure: { k: string; missing: string[] }[] = [];
  const walk = async (upper: Buffer, k: string): Promise<void> => {
    const inUpper = await readdir(upper, { encoding: "buffer" });
    const names = new Set(inUpper.map(key));
    for (const name of inUpper) {
      const child = `${k}/${key(name)}`;
      const at = Buffer.concat([upper, Buffer.from("/"), name]);
      const [now, was] = await Promise.all([
        lstat(at),
        lstat(startPath(start, child)).catch(() => undefined),
      ]);
      if (isWhiteout(now)) {
        if (was) note(child, was.isDirectory());
      } else if (!was) note(child, now.isDirectory());
      else if (now.isDirectory()) {
        if (!was.isDirectory() || (now.mode & 0o7777) !== (was.mode & 0o7777)) note(child, true);
        else await walk(at, child);
      } else if (!(await sameEntry(at, startPath(start, child)))) note(child, false);
    }
    const inStart = await readdir(startPath(start, k), { encoding: "buffer" }).catch(() => []);
    const missing = inStart.map(key).filter((n) => !names.has(n));
    if (missing.length > 0 && k !== "") unsure.push({ k, missing });
  };
  for (const [i, t] of trees.entries()) {
    const m = mounts[i]!;
    const top = await lstat(m.upper).catch(() => undefined);
    if (!top?.isDirectory()) {
      // The layer is evalgate's, outside the agent's view: gone means something is badly wrong.
      throw new Error(`the upper layer of ${t} is missing`);
    }
    if ((top.mode & 0o7777) !== ((await lstat(m.lower)).mode & 0o7777)) note(t, true);
    await walk(Buffer.from(m.upper), key(Buffer.from(t)));
  }
  // A folder removed and made again hides all of the start's entries (overlayfs marks it opaque):
  // only the merged view tells that from a folder whose other entries are unchanged.
  if (unsure.length > 0) {
    for (const { k, missing } of await removedInMerged(trees, mounts, unsure)) {
      for (const n of missing) {
        const child = `${k}/${n}`;
        note(child, (await lstat(startPath(start, child))).isDirectory());
      }
    }
  }
  for (const m of mounts) await emptyLayer(m);
  result.tampered = [...found].sort();
  return result;
}

function startPath(start: StartTree, k: string): Buffer {
  return Buffer.concat([Buffer.from(`${start.dir}/`), Buffer.from(k, "latin1")]);
}

/** Of the `unsure` folders, those whose merged view lacks entries of the start, with what it lacks. */
async function removedInMerged(
  trees: readonly string[],
  mounts: readonly OverlayMount[],
  unsure: { k: string; missing: string[] }[],
): Promise<{ k: string; missing: string[] }[]> {
  // The workspace root: each mount's target is the root joined with its tree.
  const root = mounts[0]!.target.slice(0, mounts[0]!.target.length - trees[0]!.length - 1);
  const dirs = unsure.map((u) => path.join(root, Buffer.from(u.k, "latin1").toString("utf8")));
  // One process for all: each entry as its folder and its name.
  const find = ["find", ...dirs, "-mindepth", "1", "-maxdepth", "1", "-printf", "%h\\0%f\\0"];
  const command = overlaidCommand({ argv: find }, mounts);
  const argv = "argv" in command ? command.argv : [];
  const r = await runTool(argv[0]!, argv.slice(1), { stdout: true });
  if (r.code !== 0)
    throw new Error(`cannot list the shared trees through their overlays: ${r.stderr.trim()}`);
  const parts = nulParts(r.stdout);
  const merged = new Map<string, Set<string>>();
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const dir = parts[i]!.toString("utf8");
    const set = merged.get(dir) ?? new Set<string>();
    merged.set(dir, set);
    set.add(key(parts[i + 1]!));
  }
  const out: { k: string; missing: string[] }[] = [];
  for (const [i, u] of unsure.entries()) {
    const seen = merged.get(dirs[i]!) ?? new Set<string>();
    const gone = u.missing.filter((n) => !seen.has(n));
    if (gone.length > 0) out.push({ k: u.k, missing: gone });
  }
  return out;
}

/**
 * Empties an overlay's upper and work folders. overlayfs leaves a folder without permissions in its
 * work folder: that one is opened first, by a process, only when a plain removal fails. The merged
 * tree's top takes the upper folder's mode: the start's.
 */
export async function emptyLayer(m: OverlayMount): Promise<void> {
  for (const d of [m.upper, m.work]) {
    const inside = await readdir(d).catch(() => undefined);
    if (inside?.length === 0) continue;
    try {
      await rm(d, { recursive: true, force: true });
    } catch {
      await runTool("chmod", ["-R", "u+rwX", "--", d]);
      await rm(d, { recursive: true, force: true });
    }
    await mkdir(d);
  }
  await chmod(m.upper, (await lstat(m.lower)).mode & 0o7777);
}
