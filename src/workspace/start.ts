/**
 * The prepared start: a seed materialized once per run (per distinct seed and setup), the platform
 * setup run in it, and everything committed as the start commit. Every attempt starts from a copy
 * of this start tree, and its diff is captured against the start commit.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { agentFolder, type WorkspaceSpec } from "../config/types.js";
import { type ContainedView, type Containment, containedRunner } from "../sandbox/bwrap.js";
import { expandPlaceholders } from "../sandbox/commands.js";
import { buildEnv } from "../sandbox/env.js";
import type { ProcessRunner } from "../sandbox/process.js";
import { type CopyMethod, copyTree, probeCopyMethod } from "./copy.js";
import { WorkspaceError } from "./errors.js";
import { git } from "./git.js";
import { type CaptureInfo, captureInfoOf, type GitMeta, readGitMeta, restoreGitMeta } from "./git-guard.js";
import { keepNpmContent, type NpmCacheUse, seedNpmCache } from "./package-cache.js";
import { describeSeed, materializeSeed } from "./seed.js";
import { firstErrorLine, keepToolLogs } from "./setup-failure.js";

/**
 * The tag on the start commit. Its name predates the word "start commit" and stays: docs/eval-files.md
 * documents it and users' setup and scorer scripts may refer to it.
 */
export const START_TAG = "evalgate-baseline";

export interface PreparedStart {
  key: string;
  /** The prepared working tree (with its .git): the repository root. */
  dir: string;
  /** The folder (relative, `/`-separated) where setup and the agent run, when not the root. */
  subdir?: string;
  /** The start commit. */
  sha: string;
  /** The setup log, when a setup command ran. */
  setupLog?: string;
  setupDurationMs: number;
  /** What setup ran, for the bundle, when a setup command ran. */
  setup?: SetupRecord;
  seedDescription: string;
  /** How attempts copy `dir` (probed on the work folder's filesystem); default `tar`. */
  copyMethod?: CopyMethod;
  /**
   * The capture store: evalgate's private copy of the prepared `.git`, which captures read (and
   * may freshen) but attempts never copy; each capture writes its objects to a scratch folder of
   * its own next to it (docs/decisions/0105). Without it, captures read `dir`'s .git (tests).
   */
  captureGitDir?: string;
  /** The capture's attribute and exclude rules, read from the start tree once it was committed. */
  captureInfo?: CaptureInfo;
  /** The start tree's `.git` configuration, `info/` and hooks, put back in each workspace before scoring. */
  gitMeta?: GitMeta;
}

/** Why a start could not be prepared: its seed, or its setup (with its log and record when it ran). */
export interface FailedStart {
  failure: "seed" | "setup";
  message: string;
  setupLog?: string;
  setup?: SetupRecord;
}

/** A setup command as it ran: the bundle records it in each case's summary.json. */
export interface SetupRecord {
  /** The command as the eval file gives it (placeholders not expanded): a shell line or an argv. */
  command: string | string[];
  /** Wall time of the whole step: the npm cache's copies and the command. */
  durationMs: number;
  /** What the npm cache did (docs/eval-files.md); absent when the run has no cache (`EVALGATE_CACHE_DIR=off`). */
  npmCache?: NpmCacheUse;
}

/**
 * Where setup runs when its case has an environment: in the case's image, shown `view` (its first
 * writable folder is the start tree). `key` names the image: a start made in one image is not
 * another image's.
 */
export interface SetupPlace {
  key: string;
  runner(inner: ProcessRunner, view: ContainedView): ProcessRunner;
}

/** One start per distinct seed, setup, setup timeout and image (where a seed is written does not count). */
export function startKey(ws: WorkspaceSpec, setupTimeoutMs: number, place?: { key: string }): string {
  const setup = {
    c: ws.setup.command,
    e: ws.setup.envPassthrough,
    d: ws.setup.command ? ws.setup.evalDir : "",
    ...(ws.setup.network === false ? { n: false } : {}),
  };
  return createHash("sha256")
    .update(JSON.stringify({ seed: ws.seed, setup, setupTimeoutMs, ...(place ? { image: place.key } : {}) }))
    .digest("hex")
    .slice(0, 16);
}

/**
 * Commits the whole tree (tracked, untracked, not ignored) on top of HEAD, if there is one, and
 * tags it; returns the commit. Plumbing rather than `git commit`, which would refresh the index
 * once more and so hash every file a second time right after `git add` did (racily clean entries).
 */
async function commitEverything(dir: string): Promise<string> {
  // Every file goes straight into one pack as it is added (git's bulk check-in for "big" files),
  // not into thousands of loose objects that the repack below would then read and pack again.
  await git(["-c", "core.bigFileThreshold=1", "add", "-A"], { cwd: dir });
  const tree = (await git(["write-tree"], { cwd: dir })).trim();
  const parent = await git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], { cwd: dir }).then(
    (out) => out.trim(),
    () => undefined,
  );
  // The message predates the word "start commit" and stays: agents see it in `git log`.
  const sha = (
    await git(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", "evalgate baseline"], {
      cwd: dir,
    })
  ).trim();
  // HEAD follows its branch when it has one (a fresh repository's main), else it is detached.
  await git(["update-ref", "--stdin"], {
    cwd: dir,
    input: [`update HEAD ${sha}`, `update refs/tags/${START_TAG} ${sha}`, ""].join("\n"),
  });
  return sha;
}

export class StartStore {
  private readonly prepared = new Map<string, Promise<PreparedStart>>();

  constructor(
    private readonly workRoot: string,
    private readonly runner: ProcessRunner,
    /** How setup is contained (bubblewrap when the run has it); default: `runner` as it is. */
    private readonly containment: Containment = { hidden: [] },
    /** The package cache's root (package-cache.ts), which setup never sees; none: no cache. */
    private readonly cacheRoot?: string,
  ) {}

  /** The prepared start for `ws`, made on first request and shared afterwards. */
  prepare(ws: WorkspaceSpec, setupTimeoutMs: number, place?: SetupPlace): Promise<PreparedStart> {
    const key = startKey(ws, setupTimeoutMs, place);
    let p = this.prepared.get(key);
    if (!p) {
      p = this.make(key, ws, setupTimeoutMs, place);
      this.prepared.set(key, p);
    }
    return p;
  }

  private async make(
    key: string,
    ws: WorkspaceSpec,
    setupTimeoutMs: number,
    place: SetupPlace | undefined,
  ): Promise<PreparedStart> {
    // The folder name predates the word "start" and stays: tests and users look for it there.
    const root = path.join(this.workRoot, "baselines", key);
    const dir = path.join(root, "tree");
    await rm(root, { recursive: true, force: true });
    await mkdir(root, { recursive: true });
    await materializeSeed(ws.seed, dir);
    const agentDir = agentFolder(dir, ws.seed.kind === "git" ? ws.seed.subdir : undefined);

    // The seed's git configuration, as evalgate made it: put back after setup, whose third-party
    // scripts could plant what evalgate's own git would run (docs/decisions/0186).
    const seedMeta = await readGitMeta(path.join(dir, ".git"));
    const started = performance.now();
    const ran = ws.setup.command ? await this.runSetup(ws, root, agentDir, setupTimeoutMs, place) : undefined;
    if (!(await restoreGitMeta(path.join(dir, ".git"), seedMeta))) {
      throw new WorkspaceError(
        "setup",
        "setup replaced the workspace's .git folder",
        ran ? { setupLog: ran.setupLog, setup: ran.record } : {},
      );
    }
    const setupDurationMs = Math.round(performance.now() - started);
    const sha = await commitEverything(dir);
    // Every attempt copies this .git: one pack instead of thousands of loose objects makes the
    // copy a handful of files (see docs/decisions/0030-prepared-start-copies.md). The files are
    // packed already; this packs the trees and the commit (and what a git seed's checkout left).
    await git(["repack", "-d", "-q"], { cwd: dir });
    await writeFile(path.join(root, "sha"), sha);
    const copyMethod = await probeCopyMethod(root);
    // Captures never use the tree's own .git: attempts copy it, and git writes (and freshens) the
    // object stores it adds to or finds objects in.
    const captureGitDir = path.join(root, "capture.git");
    await copyTree(path.join(dir, ".git"), captureGitDir, copyMethod);
    const result: PreparedStart = {
      key,
      dir,
      sha,
      setupDurationMs,
      seedDescription: describeSeed(ws.seed),
      copyMethod,
      captureGitDir,
      captureInfo: await captureInfoOf(dir),
      gitMeta: await readGitMeta(path.join(dir, ".git")),
    };
    if (ws.seed.kind === "git" && ws.seed.subdir) result.subdir = ws.seed.subdir;
    if (ran) {
      result.setupLog = ran.setupLog;
      result.setup = ran.record;
    }
    return result;
  }

  /**
   * Runs the setup command in the start tree: under bubblewrap when the run has it, writing only the
   * start tree and its own HOME and TMPDIR, with the network unless `network: false`; its npm cache
   * filled from the package cache before and read back into it after (package-cache.ts).
   */
  private async runSetup(
    ws: WorkspaceSpec,
    root: string,
    agentDir: string,
    setupTimeoutMs: number,
    place: SetupPlace | undefined,
  ): Promise<{ setupLog: string; record: SetupRecord }> {
    const started = performance.now();
    const setupLog = path.join(root, "setup.log");
    const home = path.join(root, "home");
    const tmp = path.join(root, "tmp");
    await mkdir(home, { recursive: true });
    await mkdir(tmp, { recursive: true });
    const seeded = this.cacheRoot
      ? await seedNpmCache(this.cacheRoot, path.join(root, "tree"), home)
      : undefined;
    const record = (): SetupRecord => ({
      command: "shell" in ws.setup.command! ? ws.setup.command.shell : ws.setup.command!.argv,
      durationMs: Math.round(performance.now() - started),
    });
    const view: ContainedView = {
      network: ws.setup.network ?? true,
      readOnly: [ws.setup.evalDir],
      writable: [path.join(root, "tree"), home, tmp],
      // Setup sees the system folders and the folders on its PATH (it has no read_only: of its own).
      fix: "setup sees the folders on its PATH: put {DIR} on PATH, or call the program by its real path",
    };
    // In an environment the container is the sandbox: the image's programs, the view's folders only.
    const runner = place
      ? place.runner(this.runner, { ...view, hidden: this.containment.hidden })
      : containedRunner(this.runner, this.containment, view);
    const outcome = await runner.run({
      command: expandPlaceholders(ws.setup.command!, { WORKSPACE: agentDir, EVAL_DIR: ws.setup.evalDir }),
      cwd: agentDir,
      env: buildEnv({ passthrough: ws.setup.envPassthrough, home, tmp }),
      timeoutMs: setupTimeoutMs,
      logFile: setupLog,
    });
    if (outcome.spawnError || outcome.timedOut || outcome.exitCode !== 0) {
      const why = outcome.spawnError
        ? outcome.spawnError
        : outcome.timedOut
          ? `timed out after ${Math.round(setupTimeoutMs / 1000)} s`
          : `exited with ${outcome.exitCode ?? outcome.signal}`;
      const log = await readFile(setupLog, "utf8").catch(() => outcome.tail);
      await keepToolLogs(setupLog, log, home);
      // The sandbox's own explanation (a last line of the log) outranks the command's first error.
      const explained = outcome.tail.split("\n").find((l) => l.startsWith("evalgate: the sandbox"));
      const cause = explained ?? firstErrorLine(log) ?? outcome.tail.trim().split("\n").slice(-3).join(" / ");
      const where = " (the whole output is in the attempt's setup.log)";
      throw new WorkspaceError("setup", `setup command ${why}${cause ? `: ${cause}` : ""}${where}`, {
        setupLog,
        setup: record(),
      });
    }
    if (!this.cacheRoot) return { setupLog, record: record() };
    const kept = await keepNpmContent(this.cacheRoot, home);
    const npmCache: NpmCacheUse = {
      reused: seeded?.reused ?? 0,
      kept: kept.kept,
      rejected: kept.rejected + (seeded?.rejected ?? 0),
    };
    return { setupLog, record: { ...record(), npmCache } };
  }

  /** Reads a prepared start's setup log (for each attempt's setup.log). */
  static async setupLogText(b: PreparedStart): Promise<string | undefined> {
    return b.setupLog ? readFile(b.setupLog, "utf8") : undefined;
  }
}
