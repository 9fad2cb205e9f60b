/**
 * Setup's npm cache that outlives the run (docs/decisions/0220): an evalgate-owned store of npm
 * tarballs, filed by their sha512 digest the way npm's own content store (cacache) files them.
 * Setup never sees the store. Before setup, the tarballs the tree's lockfiles name by integrity are
 * copied into the private npm cache in setup's own HOME (`~/.npm/_cacache/content-v2`), where npm
 * finds them by digest; after setup, the tarballs npm added there are copied back into the store,
 * each kept only if its bytes hash to the digest it is filed under. Index entries (npm's cached
 * registry responses, which nothing verifies) never leave the run.
 */
import { createHash, randomBytes } from "node:crypto";
import { constants, createReadStream } from "node:fs";
import { chmod, copyFile, lstat, mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { git } from "./git.js";

/** What setup's npm cache did in one start: tarballs given to setup, kept from it, and refused. */
export interface NpmCacheUse {
  /** Tarballs the lockfiles named that the store had, copied into setup's cache. */
  reused: number;
  /** Tarballs setup's npm downloaded, verified and added to the store. */
  kept: number;
  /** Files in setup's cache whose bytes do not hash to the digest they are filed under (never kept). */
  rejected: number;
}

/** New bytes one setup may add to the store: a setup cannot fill the runner's disk through it. */
const KEEP_LIMIT_BYTES = 2 * 1024 ** 3;

/**
 * The store's root: `EVALGATE_CACHE_DIR`, else `$XDG_CACHE_HOME/evalgate` or `~/.cache/evalgate`;
 * undefined when `EVALGATE_CACHE_DIR=off`. npm's tarballs are in its `npm/` folder.
 */
export function packageCacheRoot(env: NodeJS.ProcessEnv): string | undefined {
  const set = env.EVALGATE_CACHE_DIR;
  if (set === "off") return undefined;
  if (set) return path.resolve(set);
  const base = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), ".cache");
  return path.join(base, "evalgate");
}

/** The run's option naming the package cache, when it has one. */
export function packageCacheOption(env: NodeJS.ProcessEnv): { packageCache?: string } {
  const root = packageCacheRoot(env);
  return root ? { packageCache: root } : {};
}

/** Where npm files content of digest `hex` (sha512, hex) under a content folder: `ab/cd/ef…`. */
function contentPath(root: string, hex: string): string {
  return path.join(root, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

/** setup's npm content folder inside its HOME (npm's default cache is `~/.npm`). */
export function npmContentDir(home: string): string {
  return path.join(home, ".npm", "_cacache", "content-v2", "sha512");
}

/** The sha512 digests (hex) of every lockfile entry's integrity in the tree, git-ignored ones aside. */
async function lockfileDigests(tree: string): Promise<Set<string>> {
  const listed = await git(
    [
      "ls-files",
      "-z",
      "--cached",
      "--others",
      "--exclude-standard",
      "--",
      ":(glob)**/package-lock.json",
      ":(glob)**/npm-shrinkwrap.json",
    ],
    { cwd: tree },
  ).catch(() => "");
  const out = new Set<string>();
  for (const file of listed.split("\0").filter(Boolean)) {
    const text = await readFile(path.join(tree, file), "utf8").catch(() => "");
    for (const m of text.matchAll(/"integrity"\s*:\s*"([^"]*)"/g)) {
      for (const h of m[1]!.matchAll(/sha512-([A-Za-z0-9+/]+={0,2})/g)) {
        const hex = Buffer.from(h[1]!, "base64").toString("hex");
        if (hex.length === 128) out.add(hex);
      }
    }
  }
  return out;
}

/**
 * Copies into setup's npm cache (in `home`) every tarball of the store that a lockfile of `tree`
 * names, each checked against its digest (a store written to outside evalgate, by a run without
 * bubblewrap, is not trusted either: a copy that does not match is dropped, and so is the store's
 * file). Copies, not links: what setup does to its cache never reaches the store.
 */
export async function seedNpmCache(
  storeRoot: string,
  tree: string,
  home: string,
): Promise<Pick<NpmCacheUse, "reused" | "rejected">> {
  const store = path.join(storeRoot, "npm");
  const into = npmContentDir(home);
  let reused = 0;
  let rejected = 0;
  for (const hex of await lockfileDigests(tree)) {
    const from = contentPath(store, hex);
    if (!(await lstat(from).catch(() => undefined))?.isFile()) continue;
    const dest = contentPath(into, hex);
    await mkdir(path.dirname(dest), { recursive: true });
    await copyFile(from, dest, constants.COPYFILE_FICLONE);
    if ((await sha512Hex(dest)) === hex) reused++;
    else {
      rejected++;
      await rm(dest, { force: true });
      await rm(from, { force: true });
    }
  }
  return { reused, rejected };
}

async function sha512Hex(file: string): Promise<string> {
  const hash = createHash("sha512");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * The regular files under `dir` at depth 3 (`ab/cd/rest`) with their names joined back to a
 * digest. Links are not npm's content (a setup could point one anywhere) and are not followed.
 */
async function filedContent(dir: string): Promise<{ file: string; hex: string; size: number }[]> {
  const out: { file: string; hex: string; size: number }[] = [];
  const entries = (d: string) => readdir(d, { withFileTypes: true }).catch(() => []);
  for (const a of (await entries(dir)).filter((e) => e.isDirectory())) {
    const da = path.join(dir, a.name);
    for (const b of (await entries(da)).filter((e) => e.isDirectory())) {
      const db = path.join(da, b.name);
      for (const rest of (await entries(db)).filter((e) => e.isFile())) {
        const file = path.join(db, rest.name);
        const { size } = await lstat(file);
        out.push({ file, hex: `${a.name}${b.name}${rest.name}`, size });
      }
    }
  }
  return out;
}

/** Whether `file` starts as gzip does: a tarball, not one of npm's cached registry responses. */
async function isGzip(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/**
 * Copies the tarballs setup's npm added to its cache (in `home`) into the store, each only if its
 * bytes hash to the digest it is filed under: the copy is hashed, not setup's file, so nothing setup
 * left running can change it between the check and the store.
 */
export async function keepNpmContent(storeRoot: string, home: string): Promise<Omit<NpmCacheUse, "reused">> {
  const store = path.join(storeRoot, "npm");
  const tmpDir = path.join(storeRoot, "tmp");
  let kept = 0;
  let rejected = 0;
  let budget = KEEP_LIMIT_BYTES;
  const found = await filedContent(npmContentDir(home));
  if (found.length === 0) return { kept, rejected };
  // Made private (0700) when evalgate creates it: the runner's other users have no reason to read it.
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  for (const { file, hex, size } of found) {
    const dest = contentPath(store, hex);
    if (!/^[0-9a-f]{128}$/.test(hex)) {
      rejected++;
      continue;
    }
    if ((await lstat(dest).catch(() => undefined))?.isFile() || size > budget) continue;
    const tmp = path.join(tmpDir, randomBytes(8).toString("hex"));
    try {
      await copyFile(file, tmp, constants.COPYFILE_FICLONE);
      // Registry responses are content too, but only a tarball is ever asked for by digest.
      if (!(await isGzip(tmp))) continue;
      if ((await sha512Hex(tmp)) !== hex) {
        rejected++;
        continue;
      }
      await chmod(tmp, 0o444);
      await mkdir(path.dirname(dest), { recursive: true });
      await rename(tmp, dest);
      kept++;
      budget -= size;
    } finally {
      await rm(tmp, { force: true });
    }
  }
  return { kept, rejected };
}
