/**
 * The trees setup built: what the start tree's ignore rules ignore (`node_modules/`, `.venv/`,
 * build output, single ignored files). git never shows them in the diff, yet the scorers run on
 * them: an agent that adds a `.pth` file loading a pytest plugin that passes every test to `.venv`
 * would pass with an empty diff. So after the agent, every entry under them whose status changed
 * after the copy (workspace/scan.ts with the attempt's change mark) is compared with the start tree;
 * a difference is put back and reported as tampering (docs/decisions/0190).
 *
 * The check reads only "what changed since the copy": a later overlay of these trees (their upper
 * layer) can hand the same list in.
 */
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { GitError, gitBytes, nulInput, nulParts, under } from "./git.js";
import { kindOf, putBackWhole } from "./put-back.js";
import type { PreparedStart } from "./start.js";

type StartTree = Pick<PreparedStart, "dir" | "copyMethod">;

/** A name as a lossless key (one character per byte): names need not be UTF-8. */
const key = (name: Buffer) => name.toString("latin1");
const bytes = (k: string) => Buffer.from(k, "latin1");
const label = (k: string, dir: boolean) => `${bytes(k).toString("utf8")}${dir ? "/" : ""}`;

/**
 * Caches that tools the agent may run write inside setup-built trees (Python's bytecode, test and
 * build caches). They are put back like everything else, but not counted as tampering: an agent
 * that runs the tests writes them.
 */
const CACHES = [
  /(^|\/)__pycache__(\/|$)/,
  /(^|\/)node_modules\/\.(cache|vite|vitest)(\/|$)/,
  /(^|\/)\.(pytest_cache|mypy_cache|ruff_cache)(\/|$)/,
  /\.tsbuildinfo$/,
];
export const isCache = (k: string) => CACHES.some((re) => re.test(k));

/** The start tree's setup-built trees (keys without a trailing slash), listed once per start. */
const startTrees = new WeakMap<StartTree, Promise<Set<string>>>();

export function setupTreesOf(start: StartTree): Promise<Set<string>> {
  let p = startTrees.get(start);
  if (!p) {
    p = gitBytes(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], {
      cwd: start.dir,
    }).then((out) => new Set(nulParts(out).map((n) => key(n).replace(/\/+$/, ""))));
    startTrees.set(start, p);
    p.catch(() => startTrees.delete(start));
  }
  return p;
}

/** The member of `set` that is key `k` itself or one of its parent folders, or undefined. */
function within(set: ReadonlySet<string>, k: string): string | undefined {
  for (let end = k.length; end > 0; end = k.lastIndexOf("/", end - 1)) {
    const prefix = k.slice(0, end);
    if (set.has(prefix)) return prefix;
  }
  return undefined;
}

/** Which of `keys` the start tree's own ignore rules ignore. */
async function ignoredByStart(startDir: string, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const out = await gitBytes(["check-ignore", "-z", "--stdin", "--no-index"], {
    cwd: startDir,
    input: nulInput(keys.map(bytes)),
  }).catch((error: unknown) => {
    // Exit status 1: none of them is ignored.
    if (error instanceof GitError && error.exitCode === 1) return Buffer.alloc(0);
    throw error;
  });
  return new Set(nulParts(out).map(key));
}

/** Files larger than this are not read to be compared: a change of one this size is assumed. */
const MAX_COMPARE_BYTES = 64 * 1024 * 1024;

export async function sameEntry(a: Buffer, b: Buffer): Promise<boolean> {
  const [x, y] = await Promise.all([lstat(a), lstat(b)]);
  const kind = kindOf(x);
  if (kind !== kindOf(y) || (x.mode & 0o7777) !== (y.mode & 0o7777)) return false;
  if (kind === "symlink") {
    const [p, q] = await Promise.all([
      readlink(a, { encoding: "buffer" }),
      readlink(b, { encoding: "buffer" }),
    ]);
    return p.equals(q);
  }
  if (kind !== "file") return true;
  if (x.size !== y.size) return false;
  if (x.size > MAX_COMPARE_BYTES) return false;
  const [p, q] = await Promise.all([readFile(a), readFile(b)]);
  return p.equals(q);
}

export interface SetupTreeCheck {
  /** What the agent changed in setup-built trees (added, changed or removed; put back), sorted. */
  tampered: string[];
  /** Cache entries the agent's tools wrote there (put back too, not counted). */
  caches: number;
  /** No list of changes was given (no change mark): every tree was put back whole, unchecked. */
  unverified: boolean;
}

/**
 * Compares the setup-built trees of the workspace `ws` with the start tree, looking only at the
 * entries `changed` lists (everything whose status changed after the copy; the workspace root as
 * the empty name), puts every difference back and reports it. Without `changed` every tree is put
 * back whole.
 */
export async function restoreSetupTrees(
  start: StartTree,
  ws: string,
  changed: readonly Buffer[] | undefined,
  /** Trees shared through an overlay (share.ts): checked from their upper layers instead. */
  shared: readonly string[] = [],
): Promise<SetupTreeCheck> {
  const trees = new Set([...(await setupTreesOf(start))].filter((t) => !shared.includes(t)));
  const method = start.copyMethod ?? "copy";
  const result: SetupTreeCheck = { tampered: [], caches: 0, unverified: changed === undefined };
  if (trees.size === 0) return result;
  if (!changed) {
    for (const t of trees) await putBackWhole(start.dir, ws, bytes(t), method);
    return result;
  }
  const found = new Set<string>();
  /** Keys put back whole: what lies below them is done. */
  const whole = new Set<string>();
  const below = (k: string) => within(whole, k) !== undefined;
  const note = (k: string, dir: boolean) => {
    if (isCache(k)) result.caches++;
    else found.add(label(k, dir));
  };
  const putBack = async (k: string, dir: boolean) => {
    note(k, dir);
    await putBackWhole(start.dir, ws, bytes(k), method);
    whole.add(k);
  };

  // A tree replaced (by a link, say) or removed as a whole.
  for (const t of trees) {
    const [now, was] = await Promise.all([
      lstat(under(ws, bytes(t))).catch(() => undefined),
      lstat(under(start.dir, bytes(t))),
    ]);
    if (!now || kindOf(now) !== kindOf(was)) await putBack(t, kindOf(was) === "dir");
  }
  // The root's listing changes with any entry made or removed at the top: only its trees matter.
  const keys = [...new Set(changed.map(key).filter((k) => k !== "" && within(trees, k) !== undefined))];
  keys.sort();
  const added: string[] = [];
  for (const k of keys) {
    if (below(k)) continue;
    const [now, was] = await Promise.all([
      lstat(under(ws, bytes(k))).catch(() => undefined),
      lstat(under(start.dir, bytes(k))).catch(() => undefined),
    ]);
    if (!now) continue;
    if (!was) {
      added.push(k);
      continue;
    }
    if (!(await sameEntry(under(ws, bytes(k)), under(start.dir, bytes(k))))) {
      await putBack(k, kindOf(was) === "dir");
      continue;
    }
    if (!now.isDirectory()) continue;
    // A folder whose status changed: something in it was made, removed or renamed.
    const [inWs, inStart] = await Promise.all([
      readdir(under(ws, bytes(k)), { encoding: "buffer" }),
      readdir(under(start.dir, bytes(k)), { encoding: "buffer" }),
    ]);
    const nowNames = new Set(inWs.map(key));
    const wasNames = new Set(inStart.map(key));
    for (const n of wasNames) {
      if (nowNames.has(n)) continue;
      const gone = `${k}/${n}`;
      await putBack(gone, (await lstat(under(start.dir, bytes(gone)))).isDirectory());
    }
    for (const n of nowNames) if (!wasNames.has(n)) added.push(`${k}/${n}`);
  }
  // New entries count when the start tree's rules ignore them: a new source file in a folder that
  // held only ignored files is the agent's work, and in the diff.
  const tops = new Set(added);
  const fresh = [...tops].filter((k) => {
    const slash = k.lastIndexOf("/");
    return slash < 0 || within(tops, k.slice(0, slash)) === undefined;
  });
  const ignored = await ignoredByStart(start.dir, fresh);
  for (const k of fresh) {
    if (!ignored.has(k) || below(k)) continue;
    const s = await lstat(under(ws, bytes(k))).catch(() => undefined);
    if (s) await putBack(k, s.isDirectory());
  }
  result.tampered = [...found].sort();
  return result;
}
