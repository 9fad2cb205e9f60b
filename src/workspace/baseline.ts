/**
 * The prepared baseline: a seed materialized once per run (per distinct seed and setup), the
 * platform setup run in it, and everything committed. Every attempt starts from a copy of it.
 */
import { createHash } from "node:crypto";
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { expandPlaceholders } from "../config/commands.js";
import type { WorkspaceSpec } from "../config/types.js";
import { buildEnv } from "../sandbox/env.js";
import type { ProcessRunner } from "../sandbox/process.js";
import { GitError, git } from "./git.js";

export const BASELINE_TAG = "evalgate-baseline";

/** Why a workspace could not be prepared. `ref_not_found` is the user's mistake; the rest are not. */
export type WorkspaceFailure = "ref_not_found" | "seed" | "setup";

export class WorkspaceError extends Error {
  constructor(
    readonly failure: WorkspaceFailure,
    message: string,
    readonly setupLog?: string,
  ) {
    super(message);
    this.name = "WorkspaceError";
  }
}

export interface PreparedBaseline {
  key: string;
  /** The prepared working tree (with its .git). */
  dir: string;
  /** The baseline commit. */
  sha: string;
  /** The setup log, when a setup command ran. */
  setupLog?: string;
  setupDurationMs: number;
  seedDescription: string;
}

export function baselineKey(ws: WorkspaceSpec, setupTimeoutMs: number): string {
  const setup = {
    c: ws.setup.command,
    e: ws.setup.envPassthrough,
    d: ws.setup.command ? ws.setup.evalDir : "",
  };
  return createHash("sha256")
    .update(JSON.stringify({ seed: ws.seed, setup, setupTimeoutMs }))
    .digest("hex")
    .slice(0, 16);
}

export function describeSeed(ws: WorkspaceSpec): string {
  const s = ws.seed;
  if (s.kind === "path") return `folder ${s.path}`;
  if (s.kind === "git") return `git ${s.url}${s.ref ? ` at ${s.ref}` : ""}`;
  return "empty repository";
}

/** Copies a folder seed, leaving out version-control and evalgate folders. */
async function copyFolder(from: string, to: string): Promise<void> {
  await cp(from, to, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true,
    filter: (src) => {
      const base = path.basename(src);
      return base !== ".git" && base !== ".evalgate";
    },
  });
}

/** Fetches `ref` of `url` into the empty repository `dir` and checks it out. Never falls back. */
async function checkoutGit(dir: string, url: string, ref: string | undefined): Promise<void> {
  await git(["init", "-q", dir]);
  const wanted = ref ?? "HEAD";
  try {
    await git(["fetch", "-q", "--depth", "1", "--no-tags", url, wanted], { cwd: dir });
    await git(["checkout", "-q", "--detach", "FETCH_HEAD"], { cwd: dir });
    return;
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    if (
      /repository .* not found|does not appear to be a git repository|could not read|unable to access|Could not resolve host/i.test(
        error.stderr,
      )
    ) {
      throw new WorkspaceError(
        "seed",
        `cannot fetch ${url}: ${error.message.replace(/^git .*? failed: /, "")}`,
      );
    }
    if (ref === undefined) throw new WorkspaceError("seed", `cannot fetch ${url}: ${error.message}`);
  }
  // A short sha, or a server that refuses to serve commits by sha: fetch everything and resolve.
  try {
    await git(["fetch", "-q", "--tags", url, "+refs/heads/*:refs/remotes/origin/*"], { cwd: dir });
  } catch (error) {
    throw new WorkspaceError("seed", `cannot fetch ${url}: ${(error as Error).message}`);
  }
  for (const candidate of [
    `${ref}^{commit}`,
    `refs/tags/${ref}^{commit}`,
    `refs/remotes/origin/${ref}^{commit}`,
  ]) {
    try {
      const sha = (await git(["rev-parse", "--verify", "-q", candidate], { cwd: dir })).trim();
      if (sha) {
        await git(["checkout", "-q", "--detach", sha], { cwd: dir });
        return;
      }
    } catch {
      // try the next form
    }
  }
  throw new WorkspaceError(
    "ref_not_found",
    `ref "${ref}" was not found in ${url}: no branch, tag or commit has that name (evalgate never falls back to the default branch)`,
  );
}

export class BaselineStore {
  private readonly prepared = new Map<string, Promise<PreparedBaseline>>();

  constructor(
    private readonly workRoot: string,
    private readonly runner: ProcessRunner,
  ) {}

  /** The prepared baseline for `ws`, made on first request and shared afterwards. */
  prepare(ws: WorkspaceSpec, setupTimeoutMs: number): Promise<PreparedBaseline> {
    const key = baselineKey(ws, setupTimeoutMs);
    let p = this.prepared.get(key);
    if (!p) {
      p = this.make(key, ws, setupTimeoutMs);
      this.prepared.set(key, p);
    }
    return p;
  }

  private async make(key: string, ws: WorkspaceSpec, setupTimeoutMs: number): Promise<PreparedBaseline> {
    const root = path.join(this.workRoot, "baselines", key);
    const dir = path.join(root, "tree");
    await rm(root, { recursive: true, force: true });
    await mkdir(root, { recursive: true });
    const seed = ws.seed;
    if (seed.kind === "git") {
      await mkdir(dir, { recursive: true });
      await checkoutGit(dir, seed.url, seed.ref);
    } else {
      if (seed.kind === "path") {
        try {
          await copyFolder(seed.path, dir);
        } catch (error) {
          throw new WorkspaceError("seed", `cannot copy ${seed.path}: ${(error as Error).message}`);
        }
      } else {
        await mkdir(dir, { recursive: true });
      }
      await git(["init", "-q", dir]);
    }

    let setupLog: string | undefined;
    const started = performance.now();
    if (ws.setup.command) {
      setupLog = path.join(root, "setup.log");
      const home = path.join(root, "home");
      const tmp = path.join(root, "tmp");
      await mkdir(home, { recursive: true });
      await mkdir(tmp, { recursive: true });
      const outcome = await this.runner.run({
        command: expandPlaceholders(ws.setup.command, { WORKSPACE: dir, EVAL_DIR: ws.setup.evalDir }),
        cwd: dir,
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
        const last = outcome.tail.trim().split("\n").slice(-3).join(" / ");
        throw new WorkspaceError("setup", `setup command ${why}${last ? `: ${last}` : ""}`, setupLog);
      }
    }
    const setupDurationMs = Math.round(performance.now() - started);
    await git(["add", "-A"], { cwd: dir });
    await git(["commit", "-q", "--allow-empty", "--no-verify", "-m", "evalgate baseline"], { cwd: dir });
    await git(["tag", "-f", BASELINE_TAG], { cwd: dir });
    const sha = (await git(["rev-parse", "HEAD"], { cwd: dir })).trim();
    // Attempts copy this tree: its index must describe the baseline exactly.
    await writeFile(path.join(root, "sha"), sha);
    const result: PreparedBaseline = { key, dir, sha, setupDurationMs, seedDescription: describeSeed(ws) };
    if (setupLog) result.setupLog = setupLog;
    return result;
  }

  /** Reads a prepared baseline's setup log (for each attempt's setup.log). */
  static async setupLogText(b: PreparedBaseline): Promise<string | undefined> {
    return b.setupLog ? readFile(b.setupLog, "utf8") : undefined;
  }
}
