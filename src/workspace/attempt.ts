/**
 * One attempt's workspace: a fresh copy of the prepared start tree, and the capture of what
 * the agent changed as a patch that `git apply` accepts on the start commit.
 */
import { constants } from "node:fs";
import { copyFile, lstat, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { formatSize } from "../config/size.js";
import { DEFAULT_LIMITS } from "../config/types.js";
import { copyTree } from "./copy.js";
import { applyNumstat, parseRaw } from "./diff-records.js";
import { GitError, git, gitBytes, gitCapped, nulInput, nulParts } from "./git.js";
import { type CaptureInfo, captureGitFolder, captureInfoOf } from "./git-guard.js";
import { isUnbornRepository, removeNewNestedRepositories } from "./nested-repos.js";
import { addedOrModified, type OversizeFile, stageOversize } from "./oversize.js";
import { sameIgnoreFiles, scanWorkspace, type WorkspaceScan } from "./scan.js";
import type { PreparedStart } from "./start.js";
import { tempRoot } from "./temp.js";

/**
 * Copies the prepared tree (with its .git and the files setup left untracked or ignored) to
 * `dest`. No file is shared with the start tree: see copy.ts.
 */
export async function materializeAttempt(start: PreparedStart, dest: string): Promise<void> {
  await copyTree(start.dir, dest, start.copyMethod ?? "copy");
}

export type ChangeStatus = "added" | "modified" | "deleted" | "renamed" | "copied" | "type_changed";

export interface ChangedFile {
  path: string;
  oldPath?: string;
  status: ChangeStatus;
  additions: number;
  deletions: number;
  binary: boolean;
  /** Set when the file mode changed (e.g. "100644 → 100755"). */
  modeChange?: string;
}

export interface CapturedDiff {
  /** The patch, cut at `limits.diff` (with a marker line) when it is larger. */
  patch: Buffer;
  /** The size of the whole patch. */
  patchBytes: number;
  truncated: boolean;
  files: ChangedFile[];
  additions: number;
  deletions: number;
  /** Special files (FIFOs, sockets) the agent left in place of tracked files, removed: git cannot record them. */
  removedSpecial: string[];
  /** Nested repositories with no commit (their `.git`), removed: git cannot record them (nested-repos.ts). */
  removedRepositories: string[];
  /** Files over the limit, never read: a placeholder naming the size stands for each (oversize.ts). */
  oversize: OversizeFile[];
  /** Files and folders the agent had made unreadable to their owner, made readable (scan.ts). */
  unlocked: string[];
}

/**
 * Whether the workspace is still a folder after the agent ran. Its attempt folder is writable to
 * the agent, which can swap `ws` for a link to any folder; everything evalgate does next (capture,
 * restore, verifiers, scorers) would then happen there, outside the attempt.
 */
export async function workspaceIsFolder(ws: string): Promise<boolean> {
  const s = await lstat(ws).catch(() => undefined);
  return s?.isDirectory() === true;
}

/**
 * An empty folder at `dir` for evalgate's own use, in the agent's attempt folder: whatever the agent
 * left at that name (a link to elsewhere) is removed, never followed.
 */
export async function freshFolder(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir);
}

/**
 * Cuts a patch that is over the limit at the last line end before it, and says so in a last line,
 * so the stored patch is never mistaken for the whole change.
 */
function truncatePatch(head: Buffer, totalBytes: number, maxBytes: number): Buffer {
  const lineEnd = head.lastIndexOf(0x0a, maxBytes - 1);
  const kept = head.subarray(0, lineEnd + 1);
  return Buffer.concat([
    kept,
    Buffer.from(
      `# evalgate: diff truncated: ${kept.length} of ${totalBytes} bytes kept (limits.diff is ${formatSize(maxBytes)})\n`,
    ),
  ]);
}

/**
 * Captures the workspace's changes against the start commit. The capture reads the start commit's
 * objects from the capture store (never from the workspace's .git, which the agent may have
 * rewritten, nor from the prepared tree's, which later attempts copy) through a git folder of its
 * own, removed afterwards, where its new objects go and whose configuration and attribute rules
 * evalgate wrote (git-guard.ts); it uses a private index. `scan` is the workspace's one pass
 * (scan.ts) when the caller made it, for what else it reads from it.
 */
export async function captureDiff(
  start: PreparedStart,
  workTree: string,
  indexFile: string,
  maxPatchBytes = DEFAULT_LIMITS.diffBytes,
  scan?: WorkspaceScan,
): Promise<CapturedDiff> {
  const store = start.captureGitDir ?? path.join(start.dir, ".git");
  // Next to the capture store, outside the agent's attempt folder (never inside the prepared tree).
  const scratch = start.captureGitDir ? path.dirname(store) : tempRoot();
  // A git folder of the capture's own: nothing of the store's configuration or attributes, which
  // an agent outside bubblewrap can write, is read (docs/decisions/0186).
  const own = await captureGitFolder(scratch, store, start.sha, await captureInfo(start));
  try {
    return await captureWith(start, workTree, indexFile, maxPatchBytes, store, own.env, scan);
  } finally {
    await rm(own.gitDir, { recursive: true, force: true });
  }
}

/** The start's capture rules: read when it was prepared, or now (a start made by hand, in tests). */
const infos = new WeakMap<PreparedStart, Promise<CaptureInfo>>();
function captureInfo(start: PreparedStart): Promise<CaptureInfo> {
  if (start.captureInfo) return Promise.resolve(start.captureInfo);
  let p = infos.get(start);
  if (!p) {
    p = captureInfoOf(start.dir);
    infos.set(start, p);
  }
  return p;
}

async function captureWith(
  start: PreparedStart,
  workTree: string,
  indexFile: string,
  maxPatchBytes: number,
  store: string,
  gitEnv: Record<string, string>,
  made?: WorkspaceScan,
): Promise<CapturedDiff> {
  // The index lives in the agent's attempt folder: a link the agent left there is replaced, never
  // written through.
  await rm(indexFile, { force: true });
  await copyFile(path.join(store, "index"), indexFile, constants.COPYFILE_EXCL);
  const env = {
    ...gitEnv,
    GIT_WORK_TREE: workTree,
    GIT_INDEX_FILE: indexFile,
    // Paths the agent named are paths, never patterns.
    GIT_LITERAL_PATHSPECS: "1",
  };
  const opts = { cwd: workTree, env };
  // One pass over the tree finds what the agent locked, what is too large to read and its ignore
  // files; git lists files only when one is over the limit or an ignore file changed (0170).
  const scan = made ?? (await scanWorkspace(workTree, maxPatchBytes));
  const { unlocked } = scan;
  const oversize = await stageOversize(workTree, opts, maxPatchBytes, await addedOrModified(opts, scan.big));
  const hidden = (await sameIgnoreFiles(start, workTree, scan.ignoreFiles, scan.pruned))
    ? []
    : await hiddenByAgent(start.dir, opts);
  if (hidden.length > 0) oversize.push(...(await stageOversize(workTree, opts, maxPatchBytes, hidden)));
  // One process for the listing (raw records, then numstat records, NUL-separated) and the patch,
  // which git puts after an empty record (two NULs): every record of the listing is non-empty.
  const diff = (before: string[][] = []) =>
    gitCapped(
      [
        "diff",
        "--cached",
        "-M",
        start.sha,
        "--raw",
        "--numstat",
        "-z",
        "-p",
        "--binary",
        "--full-index",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
      ],
      opts,
      maxPatchBytes,
      Buffer.from([0, 0]),
      before,
    );
  let removedSpecial: string[] = [];
  const removed = { repositories: [] as string[] };
  let captured: Awaited<ReturnType<typeof diff>>;
  if (hidden.length === 0) {
    // The usual case: `git add -A` and the diff in one process started from here (0171).
    captured = await diff([ADD_ALL]).catch(async (error: unknown) => {
      removedSpecial = await addAfterFailure(error, workTree, start.dir, opts, removed);
      return diff();
    });
  } else {
    removedSpecial = await addAll(workTree, start.dir, opts, removed);
    await git(["add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"], {
      ...opts,
      input: nulInput(hidden),
    });
    captured = await diff();
  }
  const { head, totalBytes, listing } = captured;
  const truncated = totalBytes > maxPatchBytes;
  const patch = truncated ? truncatePatch(head, totalBytes, maxPatchBytes) : head;
  const parts = listing.toString("utf8").split("\0");
  const { files, end } = parseRaw(parts);
  applyNumstat(files, parts.slice(end));
  return {
    patch,
    patchBytes: totalBytes,
    truncated,
    files,
    additions: files.reduce((a, f) => a + f.additions, 0),
    deletions: files.reduce((a, f) => a + f.deletions, 0),
    removedSpecial,
    removedRepositories: removed.repositories,
    oversize,
    unlocked,
  };
}

/** A name as a lossless key (one character per byte): names need not be UTF-8. */
const key = (name: Buffer) => name.toString("latin1");

/**
 * The ignored files inside each of the folders `dirs`, by folder (keyed by `key`). A name that is
 * not UTF-8 cannot be passed as an argument intact, so such a folder is found in the listing of the
 * whole tree instead, made once for all of them.
 */
async function ignoredInside(
  dirs: Buffer[],
  others: string[],
  opts: { cwd: string; env: Record<string, string> },
): Promise<Map<string, Buffer[]>> {
  const out = new Map<string, Buffer[]>();
  let all: Buffer[] | undefined;
  for (const dir of dirs) {
    const name = dir.toString("utf8");
    let files: Buffer[];
    if (Buffer.from(name).equals(dir)) files = nulParts(await gitBytes([...others, "--", name], opts));
    else {
      all ??= nulParts(await gitBytes(others, opts));
      files = all.filter((f) => f.subarray(0, dir.length).equals(dir));
    }
    out.set(key(dir), files);
  }
  return out;
}

/** Which of `paths` the start tree's own ignore rules (its .gitignore files) ignore. */
async function ignoredByStart(startDir: string, env: Record<string, string>, paths: Buffer[]) {
  if (paths.length === 0) return new Set<string>();
  const out = await gitBytes(["check-ignore", "-z", "--stdin", "--no-index"], {
    cwd: startDir,
    // check-ignore takes paths, and refuses the literal-pathspec switch.
    env: { ...env, GIT_WORK_TREE: startDir, GIT_LITERAL_PATHSPECS: "0" },
    input: nulInput(paths),
  }).catch((error: unknown) => {
    // Exit status 1: none of them is ignored.
    if (error instanceof GitError && error.exitCode === 1) return Buffer.alloc(0);
    throw error;
  });
  return new Set(nulParts(out).map(key));
}

/**
 * New files the agent hid from `git add -A` with ignore rules of its own (a .gitignore that also
 * ignores itself leaves no trace in the diff): ignored in the workspace but not by the start
 * tree's rules. Folders ignored as a whole by the start tree (node_modules) are not walked. Names are kept
 * as bytes: one that is not UTF-8 must still name its file when it is added.
 */
async function hiddenByAgent(
  startDir: string,
  opts: { cwd: string; env: Record<string, string> },
): Promise<Buffer[]> {
  const others = ["ls-files", "-z", "--others", "--ignored", "--exclude-standard"];
  const listed = nulParts(await gitBytes([...others, "--directory"], opts));
  const skip = await ignoredByStart(startDir, opts.env, listed);
  const kept = listed.filter((p) => !skip.has(key(p)));
  const isFolder = (p: Buffer) => p[p.length - 1] === 0x2f;
  // Every folder's files are listed first, then checked against the start tree's rules in one call.
  const inner = await ignoredInside(kept.filter(isFolder), others, opts);
  const innerSkip = await ignoredByStart(startDir, opts.env, [...inner.values()].flat());
  const out = new Map<string, Buffer>();
  for (const p of kept) {
    if (!isFolder(p)) {
      out.set(key(p), p);
      continue;
    }
    for (const f of inner.get(key(p))!) if (!innerSkip.has(key(f))) out.set(key(f), f);
  }
  return [...out.values()];
}

const ADD_ALL = ["add", "-A", "--", "."];

/**
 * `git add -A`. git skips a new FIFO or socket but refuses one in place of a tracked file, failing
 * the whole add; such files hold no content (and would block a scorer that opens them), so they
 * are removed and the add retried. Returns what was removed.
 */
async function addAll(
  workTree: string,
  startDir: string,
  opts: { cwd: string; env: Record<string, string> },
  removed: { repositories: string[] },
): Promise<string[]> {
  try {
    await git(ADD_ALL, opts);
    return [];
  } catch (error) {
    return addAfterFailure(error, workTree, startDir, opts, removed);
  }
}

/** After `git add -A` failed with `error`: removes the special files it refused and adds again. */
async function addAfterFailure(
  error: unknown,
  workTree: string,
  startDir: string,
  opts: { cwd: string; env: Record<string, string> },
  found: { repositories: string[] },
): Promise<string[]> {
  if (isUnbornRepository(error)) {
    // A `git init` without a commit (nested-repos.ts): its `.git` goes, its files are captured.
    const repos = await removeNewNestedRepositories(workTree, startDir);
    if (repos.length === 0) throw error;
    found.repositories.push(...repos);
    return addAll(workTree, startDir, opts, found);
  }
  if (
    !(error instanceof GitError) ||
    error.args[0] !== "add" ||
    !error.stderr.includes("can only add regular files")
  ) {
    throw error;
  }
  const removed: string[] = [];
  const tracked = (await git(["ls-files", "-z", "--modified"], opts)).split("\0").filter(Boolean);
  for (const rel of tracked) {
    const s = await lstat(path.join(workTree, rel)).catch(() => undefined);
    if (!s || s.isFile() || s.isDirectory() || s.isSymbolicLink()) continue;
    await rm(path.join(workTree, rel), { force: true });
    removed.push(rel);
  }
  // Each round removes something, or gives up: the add is retried only after progress.
  if (removed.length === 0) throw error;
  return [...removed, ...(await addAll(workTree, startDir, opts, found))];
}
