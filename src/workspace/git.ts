/**
 * evalgate's own git commands (seeding, start commits, diff capture). They run with a fixed
 * identity and without the user's or system git configuration, so results do not depend on the
 * machine, and never run a hook or a file-system monitor (docs/decisions/0186).
 */
import { execFile, spawn } from "node:child_process";

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
    readonly exitCode: number | undefined,
  ) {
    super(
      `git ${args.filter((a) => !a.startsWith("-c")).join(" ")} failed: ${firstLines(stderr) || `exit ${exitCode}`}`,
    );
    this.name = "GitError";
  }
}

/** The first three non-empty lines of `text`, trimmed and joined: a program's error in one line. */
export function firstLines(text: string): string {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 3)
    .join(" / ");
}

export interface GitOptions {
  cwd?: string;
  env?: Record<string, string>;
  input?: string | Buffer;
  /** Return stdout as a Buffer (binary patches). */
  binary?: boolean;
  timeoutMs?: number;
}

export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    LANG: "C",
    LC_ALL: "C",
    TZ: "UTC",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "evalgate",
    GIT_AUTHOR_EMAIL: "evalgate@localhost",
    GIT_COMMITTER_NAME: "evalgate",
    GIT_COMMITTER_EMAIL: "evalgate@localhost",
    GIT_AUTHOR_DATE: "2000-01-01T00:00:00Z",
    GIT_COMMITTER_DATE: "2000-01-01T00:00:00Z",
    ...extra,
  };
}

/**
 * Settings that keep git from running anything of the repository's or changing output shape. A
 * filter driver a repository's configuration names is switched off by `foreignRepoArgs`
 * (git-guard.ts) where evalgate runs git in a repository it did not make.
 */
const SAFE_CONFIG = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.quotePath=false",
  "-c",
  "core.autocrlf=false",
  "-c",
  "core.fileMode=true",
  "-c",
  "core.symlinks=true",
  // Every stat field counts when git decides whether a file changed (an agent can reset an mtime,
  // never a ctime or an inode).
  "-c",
  "core.checkStat=default",
  "-c",
  "core.trustctime=true",
  "-c",
  "diff.noprefix=false",
  "-c",
  "diff.renames=true",
  "-c",
  "commit.gpgSign=false",
  "-c",
  "tag.gpgSign=false",
  "-c",
  "protocol.file.allow=always",
  "-c",
  "init.defaultBranch=main",
  "-c",
  "advice.detachedHead=false",
];

export async function git(args: readonly string[], opts: GitOptions = {}): Promise<string> {
  const out = await gitRaw(args, opts);
  return typeof out === "string" ? out : out.toString("utf8");
}

/** Runs git and returns its output as bytes (file names that are not UTF-8 survive). */
export async function gitBytes(args: readonly string[], opts: GitOptions = {}): Promise<Buffer> {
  const out = await gitRaw(args, { ...opts, binary: true });
  // execa gives a Uint8Array; callers compare and slice it as a Buffer.
  return typeof out === "string" ? Buffer.from(out) : Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/** `root` joined with the exact bytes of `name` (a path relative to it, which need not be UTF-8). */
export const under = (root: string, name: Buffer): Buffer =>
  name.length === 0 ? Buffer.from(root) : Buffer.concat([Buffer.from(`${root}/`), name]);

/** The parts of NUL-separated git output (`-z`), as bytes; empty parts dropped. */
export function nulParts(out: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = out.indexOf(0); i >= 0; i = out.indexOf(0, start)) {
    if (i > start) parts.push(out.subarray(start, i));
    start = i + 1;
  }
  if (start < out.length) parts.push(out.subarray(start));
  return parts;
}

/** NUL-terminated input for git's `-z` options. */
export function nulInput(parts: readonly Buffer[]): Buffer {
  return Buffer.concat(parts.flatMap((p) => [p, Buffer.from([0])]));
}

async function gitRaw(args: readonly string[], opts: GitOptions): Promise<string | Buffer> {
  const full = [...SAFE_CONFIG, ...args];
  // Loaded on first use, not with this module: `evalgate validate` imports it and evaluating execa
  // was a tenth of its start-up (docs/decisions/0221).
  const { execa } = await import("execa");
  const result = await execa("git", full, {
    cwd: opts.cwd,
    env: gitEnv(opts.env),
    extendEnv: false,
    reject: false,
    input: opts.input,
    encoding: opts.binary ? "buffer" : "utf8",
    stripFinalNewline: false,
    timeout: opts.timeoutMs,
    maxBuffer: 1024 * 1024 * 1024,
  });
  if (result.exitCode !== 0 || result.failed) {
    const stderr =
      typeof result.stderr === "string" ? result.stderr : Buffer.from(result.stderr ?? "").toString("utf8");
    throw new GitError(args, stderr || result.message || "", result.exitCode);
  }
  return result.stdout as string | Buffer;
}

const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

/** The line the shell of `inOneShell` writes last when step N failed with status S. */
const STEP_FAILED = /\n?evalgate-step-failed (\d+) (\d+)\n$/;

/**
 * One `/bin/sh` that runs the git commands `before` in turn and then `exec`s git with `args`: one
 * process started from evalgate instead of several (each start from a large process blocks its
 * main thread while the kernel copies it; the shell's own are cheap; docs/decisions/0171). A step
 * that fails stops the shell, which names it on its last stderr line.
 */
function inOneShell(before: readonly (readonly string[])[], args: readonly string[]): [string, string[]] {
  const line = (a: readonly string[]) => ["git", ...SAFE_CONFIG, ...a].map(quote).join(" ");
  const steps = before.map(
    (a, i) => `${line(a)} || { s=$?; printf '\\nevalgate-step-failed ${i} %d\\n' "$s" >&2; exit 125; }`,
  );
  return ["/bin/sh", ["-c", [...steps, `exec ${line(args)}`].join("\n")]];
}

/**
 * Runs git and keeps at most `capBytes` of its output, reading the rest only to count it, so an
 * agent that wrote gigabytes cannot make evalgate hold them in memory. With `listingEnd`, the output
 * up to the first such byte sequence (a listing that must be read whole) is returned apart, as
 * `listing`, and the cap applies to what follows it. The git commands `before` run first, in the
 * same process; the first that fails is thrown as its own `GitError`.
 */
export async function gitCapped(
  args: readonly string[],
  opts: GitOptions,
  capBytes: number,
  listingEnd?: Buffer,
  before: readonly (readonly string[])[] = [],
): Promise<{ head: Buffer; totalBytes: number; listing: Buffer }> {
  const [file, argv] = before.length > 0 ? inOneShell(before, args) : ["git", [...SAFE_CONFIG, ...args]];
  const child = spawn(file, argv, {
    cwd: opts.cwd,
    env: gitEnv(opts.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let totalBytes = 0;
  let stderr = "";
  // The listing so far, while its end has not been seen.
  let listing: Buffer<ArrayBufferLike> | undefined = listingEnd ? Buffer.alloc(0) : undefined;
  let listingDone: Buffer<ArrayBufferLike> = Buffer.alloc(0);
  const take = (c: Buffer) => {
    totalBytes += c.length;
    if (keptBytes < capBytes) {
      const part = c.subarray(0, capBytes - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
  };
  let stderrEnd = "";
  child.stderr.on("data", (c: Buffer) => {
    if (stderr.length < 64 * 1024) stderr += c.toString("utf8");
    stderrEnd = (stderrEnd + c.toString("latin1")).slice(-256);
  });
  child.stdout.on("data", (c: Buffer) => {
    if (listing === undefined || !listingEnd) return take(c);
    const from = Math.max(0, listing.length - listingEnd.length + 1);
    listing = Buffer.concat([listing, c]);
    const at = listing.indexOf(listingEnd, from);
    if (at < 0) return;
    listingDone = listing.subarray(0, at);
    const rest = listing.subarray(at + listingEnd.length);
    listing = undefined;
    if (rest.length > 0) take(rest);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (c) => resolve(c));
  });
  // The step's own line is read from the end of stderr, which the cap above may have cut.
  const step = code === 125 && before.length > 0 ? STEP_FAILED.exec(stderrEnd) : null;
  if (step) {
    throw new GitError(before[Number(step[1])]!, stderr.replace(STEP_FAILED, ""), Number(step[2]));
  }
  if (code !== 0) throw new GitError(args, stderr, code ?? undefined);
  // No end seen: the output was all listing.
  if (listing !== undefined) listingDone = listing;
  return { head: Buffer.concat(kept), totalBytes, listing: listingDone };
}

/** The top folder of the git repository holding `cwd`, or `cwd` itself outside a repository. */
export function repositoryRoot(cwd: string): Promise<string> {
  // node's execFile, not execa: with it `evalgate validate` runs without loading execa at all
  // (docs/decisions/0221). The same command, configuration and environment as git().
  return new Promise((resolve) => {
    execFile(
      "git",
      [...SAFE_CONFIG, "rev-parse", "--show-toplevel"],
      { cwd, env: gitEnv(), encoding: "utf8" },
      (error, stdout) => resolve((error ? "" : stdout.trim()) || cwd),
    );
  });
}
