/**
 * The exam's files (docs/exam.md): the commit a run's exam is read from, written into a private
 * folder outside the checkout, where nothing the pull request changed can reach it. The CLI's
 * `--exam-from REF` and the action on a pull request (its base commit) open it the same way:
 * the checkout's own object store; else `git fetch --depth=1 origin REF`; else, for the action,
 * GitHub's tarball of the commit. It never falls back to the checkout's own files.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ExamSource } from "../config/plan/index.js";
import { UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import { removeTree } from "../workspace/discard.js";
import { git, gitBytes, nulParts } from "../workspace/git.js";
import { tempRoot } from "../workspace/temp.js";

export interface ExamRequest {
  /** The commit (or a ref the checkout can resolve or fetch) the exam is read from. */
  ref: string;
  /** How messages name it, before its short sha ("the base commit"); default: the ref. */
  name?: string;
  /** The commit's files as a gzipped tar, when the checkout has not got it and cannot fetch it. */
  tarball?: (sha: string) => Promise<Buffer>;
  /** What the user can do when the commit cannot be had (the edge's words: a flag or an input). */
  fix: string;
}

/** The exam's files, open for a run; `close` removes them. */
export interface OpenExam extends ExamSource {
  /** Where the files came from. */
  via: "checkout" | "fetch" | "tarball";
  close(): Promise<void>;
}

const FULL_SHA = /^[0-9a-f]{40}$/;
/** evalgate's git commands in the checkout run nothing of its configuration (its fsmonitor). */
const QUIET = ["-c", "core.fsmonitor=false"];

async function commitOf(root: string, ref: string): Promise<string | null> {
  return git([...QUIET, "rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`], {
    cwd: root,
  }).then(
    (s) => s.trim() || null,
    () => null,
  );
}

/** The commit `ref` names: in the checkout, else after fetching it from origin; null when neither. */
async function findCommit(root: string, ref: string): Promise<{ sha: string; fetched: boolean } | null> {
  const here = await commitOf(root, ref);
  if (here) return { sha: here, fetched: false };
  // A shallow checkout lacks the base commit: fetch it (public repositories need no credentials).
  const fetched = await git([...QUIET, "fetch", "--no-tags", "--depth=1", "origin", ref], { cwd: root }).then(
    () => true,
    () => false,
  );
  if (!fetched) return null;
  const sha = await commitOf(root, FULL_SHA.test(ref) ? ref : "FETCH_HEAD");
  return sha ? { sha, fetched: true } : null;
}

/**
 * The commit's files as a checkout of it has them, into `tree`: a private index read from the
 * commit, written out with its own attributes (never the checkout's work tree or its sparse rules).
 */
async function writeCommit(root: string, sha: string, dir: string, tree: string): Promise<void> {
  const env = { GIT_INDEX_FILE: path.join(dir, "index") };
  await git([...QUIET, "-c", "core.sparseCheckout=false", "read-tree", sha], { cwd: root, env });
  await git([...QUIET, "checkout-index", "--all", "--force", `--prefix=${tree}/`], { cwd: root, env });
}

/** GitHub's tarball of the commit (one top folder, `owner-repo-sha/`), unpacked into `tree`. */
async function writeTarball(tarball: Buffer, dir: string, tree: string): Promise<void> {
  const file = path.join(dir, "exam.tar.gz");
  await writeFile(file, tarball);
  // node-tar refuses absolute paths and `..`, and never writes through a link it made.
  // Loaded here: only --exam-from reads an archive, and tar is a tenth of what `validate` would compile.
  const { extract } = await import("tar");
  await extract({ file, cwd: tree, strip: 1, preserveOwner: false });
}

/** The checkout's files git counts (tracked, or untracked and not ignored), repository-relative. */
async function checkoutFiles(root: string): Promise<Set<string>> {
  const out = await gitBytes([...QUIET, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
  }).catch(() => Buffer.alloc(0));
  return new Set(nulParts(out).map((b) => b.toString("utf8")));
}

/** Opens the exam of `req.ref` for the repository at `root`. Throws UsageError when it cannot be had. */
export async function openExam(root: string, req: ExamRequest, logger?: Logger): Promise<OpenExam> {
  if (req.ref.startsWith("-") || req.ref.trim() === "")
    throw new UsageError(`"${req.ref}" is not a commit or a ref: ${req.fix}`);
  const found = await findCommit(root, req.ref);
  if (!found && !(req.tarball && FULL_SHA.test(req.ref))) {
    throw new UsageError(
      `the exam cannot be read from ${req.name ? `${req.name} ` : ""}${req.ref}: the commit is not in the checkout and could not be fetched from origin. ${req.fix}`,
    );
  }
  const dir = await mkdtemp(path.join(tempRoot(), "evalgate-exam-"));
  const tree = path.join(dir, "tree");
  const close = () => removeTree(dir).catch(() => undefined);
  try {
    let via: OpenExam["via"];
    const sha = found?.sha ?? req.ref;
    if (found) {
      await writeCommit(root, sha, dir, tree);
      via = found.fetched ? "fetch" : "checkout";
    } else {
      await mkdir(tree);
      await writeTarball(await req.tarball!(sha), dir, tree);
      via = "tarball";
    }
    const short = sha.slice(0, 7);
    const label = req.name ? `${req.name} ${short}` : req.ref === sha ? short : `${req.ref} (${short})`;
    logger?.info(
      `the exam (tests, scorers, verifiers, gate) is read from ${label}${via === "checkout" ? "" : via === "fetch" ? ", fetched from origin" : ", downloaded from GitHub"}; the targets from the checkout`,
    );
    return { root: tree, sha, ref: req.ref, label, checkoutFiles: await checkoutFiles(root), via, close };
  } catch (error) {
    await close();
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `the exam cannot be read from ${req.ref}: ${(error as Error).message.split("\n")[0]}. ${req.fix}`,
    );
  }
}
