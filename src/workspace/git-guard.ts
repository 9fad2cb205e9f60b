/**
 * git configuration an agent (or setup's third-party scripts) could have written never steers a git
 * command that runs outside its containment (docs/decisions/0186). git runs programs named by its
 * configuration (`core.fsmonitor`, `filter.<driver>.clean/process`, hooks) and reads the work tree's
 * `.gitattributes` (`*.js binary` turns a diff into "Binary files differ"). So:
 *
 * - the capture uses a git folder of its own, made per capture, whose `config`, `info/attributes`
 *   and `info/exclude` evalgate writes from what it read when the start was prepared; the store's
 *   objects are read through alternates (`captureGitFolder`);
 * - the start tree's and each workspace's `.git/config`, `info/` and `hooks/` are put back as
 *   evalgate made them, after setup and before the scorers (`readGitMeta`, `restoreGitMeta`);
 * - in a repository evalgate did not make (the eval repository), every filter driver its
 *   configuration names is switched off on the command line (`foreignRepoArgs`).
 */
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { type CopyMethod, copyTree } from "./copy.js";
import { GitError, git, gitBytes, nulParts } from "./git.js";

/**
 * Attributes that change what `git add` stores or how `git diff` shows it, set back to unspecified
 * for every path: the work tree's `.gitattributes` (the agent's) no longer decide them. `info/
 * attributes` has the highest precedence of git's attribute files (git 2.39 has no --attr-source).
 */
const RESET = "* !diff !merge !text !eol !crlf !ident !filter !working-tree-encoding";

/** Escapes a path so it is matched literally inside a quoted attributes pattern. */
function literal(rel: string): string {
  return rel.replace(/[\\*?[\]"]/g, (c) => (c === '"' ? '\\"' : c === "\\" ? "\\\\\\\\" : `\\\\${c}`));
}

/**
 * The lines of the `.gitattributes` file of folder `dir` (relative, `/`-separated, "" for the root),
 * rewritten to match from the root, as `info/attributes` does: a pattern without a slash matches at
 * any depth below its folder, one with a slash from its folder. Macros count only at the root.
 */
export function rootedAttributes(dir: string, text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, "");
    if (line === "" || line.startsWith("#")) continue;
    if (dir === "") {
      out.push(line);
      continue;
    }
    if (line.startsWith("[attr]")) continue;
    let pattern: string;
    let rest: string;
    if (line.startsWith('"')) {
      // C-style quoted: kept quoted as it was, the folder put in front.
      let end = -1;
      for (let i = 1; i < line.length && end < 0; i++) {
        if (line[i] === "\\") i++;
        else if (line[i] === '"') end = i;
      }
      if (end < 0) continue;
      pattern = line.slice(1, end);
      rest = line.slice(end + 1);
    } else {
      const m = /^(\S+)(.*)$/.exec(line);
      if (!m) continue;
      pattern = m[1]!.replace(/[\\"]/g, (c) => `\\${c}`);
      rest = m[2]!;
    }
    const anchored = pattern.replace(/\/+$/, "").includes("/");
    const from = anchored ? pattern.replace(/^\/+/, "") : `**/${pattern}`;
    out.push(`"${literal(dir)}/${from}"${rest}`);
  }
  return out;
}

/** What a capture's own git folder holds besides objects: written by evalgate, never read from the store. */
export interface CaptureInfo {
  /** `info/attributes`: the start tree's attribute rules, the agent's set back, content decides binary. */
  attributes: string;
  /** `info/exclude` as the start's git folder had it when it was prepared. */
  exclude: string;
}

/**
 * The capture's attribute and exclude rules, read from the prepared start tree (its committed
 * `.gitattributes` files and `.git/info/exclude`) once, before any agent ran.
 */
export async function captureInfoOf(startDir: string): Promise<CaptureInfo> {
  const listed = nulParts(
    await gitBytes(["ls-files", "-z", "--", ":(glob).gitattributes", ":(glob)**/.gitattributes"], {
      cwd: startDir,
    }),
  );
  const rules: string[] = [];
  for (const name of listed.map((b) => b.toString("utf8")).sort()) {
    const s = await lstat(path.join(startDir, name)).catch(() => undefined);
    if (!s?.isFile()) continue;
    const dir = path.posix.dirname(name);
    rules.push(
      ...rootedAttributes(dir === "." ? "" : dir, await readFile(path.join(startDir, name), "utf8")),
    );
  }
  const exclude = await readFile(path.join(startDir, ".git", "info", "exclude"), "utf8").catch(() => "");
  return { attributes: [RESET, ...rules, "* !diff", ""].join("\n"), exclude };
}

/**
 * A git folder of the capture's own inside `scratch`: `config`, `HEAD`, `info/` written here, new
 * objects in its `objects/`, the store's read through alternates. Nothing of the store's own
 * configuration, hooks or attributes is read.
 */
export async function captureGitFolder(
  scratch: string,
  store: string,
  sha: string,
  info: CaptureInfo,
): Promise<{ gitDir: string; env: Record<string, string> }> {
  const gitDir = await mkdtemp(path.join(scratch, "capture-"));
  await Promise.all([
    mkdir(path.join(gitDir, "objects")),
    mkdir(path.join(gitDir, "refs")),
    mkdir(path.join(gitDir, "info")),
  ]);
  const format =
    sha.length === 64 ? "\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n" : "";
  await Promise.all([
    writeFile(path.join(gitDir, "HEAD"), `${sha}\n`),
    writeFile(
      path.join(gitDir, "config"),
      `[core]\n${format || "\trepositoryformatversion = 0\n"}\tbare = false\n`,
    ),
    writeFile(path.join(gitDir, "info", "attributes"), info.attributes),
    writeFile(path.join(gitDir, "info", "exclude"), info.exclude),
  ]);
  return {
    gitDir,
    env: { GIT_DIR: gitDir, GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(store, "objects") },
  };
}

/** A `.git` folder's configuration, `info/` files and hooks as evalgate made them. */
export interface GitMeta {
  config: Buffer;
  info: [name: string, data: Buffer][];
}

/** Reads `dotGit`'s configuration and `info/` files (evalgate's, before any untrusted code ran). */
export async function readGitMeta(dotGit: string): Promise<GitMeta> {
  const config = await readFile(path.join(dotGit, "config"));
  const info: [string, Buffer][] = [];
  const names = await readdir(path.join(dotGit, "info")).catch(() => [] as string[]);
  for (const name of names.sort()) {
    const s = await lstat(path.join(dotGit, "info", name));
    if (s.isFile()) info.push([name, await readFile(path.join(dotGit, "info", name))]);
  }
  return { config, info };
}

/** Files of a `.git` folder through which git configuration could come back. */
const CONFIG_SIDE_DOORS = ["config.worktree", "commondir", "gitdir"];

/**
 * Puts `dotGit`'s configuration, `info/` and `hooks/` back to `meta` (hooks: none), whatever was
 * written there (a link is removed, never followed). Returns false when `dotGit` is no longer a
 * folder: the caller decides what stands in for it.
 */
export async function restoreGitMeta(dotGit: string, meta: GitMeta): Promise<boolean> {
  const s = await lstat(dotGit).catch(() => undefined);
  if (!s?.isDirectory()) return false;
  const fresh = async (dir: string) => {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir);
  };
  await rm(path.join(dotGit, "config"), { recursive: true, force: true });
  await writeFile(path.join(dotGit, "config"), meta.config, { flag: "wx" });
  for (const name of CONFIG_SIDE_DOORS) await rm(path.join(dotGit, name), { recursive: true, force: true });
  await fresh(path.join(dotGit, "hooks"));
  await fresh(path.join(dotGit, "info"));
  for (const [name, data] of meta.info)
    await writeFile(path.join(dotGit, "info", name), data, { flag: "wx" });
  return true;
}

/**
 * `-c` settings that switch off every filter driver the configuration of the repository at `cwd`
 * names (clean, smudge and long-running process: an empty command is no filter), for a git command
 * evalgate runs in a repository it did not make. Reading configuration runs nothing.
 */
export async function foreignRepoArgs(cwd: string): Promise<string[]> {
  const out = await git(["config", "--null", "--name-only", "--get-regexp", "^filter\\."], { cwd }).catch(
    (error: unknown) => {
      // Exit status 1: no such key.
      if (error instanceof GitError && error.exitCode === 1) return "";
      throw error;
    },
  );
  const drivers = new Set<string>();
  for (const key of out.split("\0")) {
    const m = /^filter\.(.+)\.[^.]+$/s.exec(key.trim());
    if (m) drivers.add(m[1]!);
  }
  return [...drivers].flatMap((d) =>
    ["clean", "smudge", "process"]
      .flatMap((k) => ["-c", `filter.${d}.${k}=`])
      .concat("-c", `filter.${d}.required=false`),
  );
}

/**
 * For the scorers' own git: the settings that would run a program, set on the environment (which
 * every git process a scorer starts inherits and which outranks the repository's configuration).
 */
export const SCORER_GIT_ENV: Record<string, string> = {
  GIT_CONFIG_COUNT: "2",
  GIT_CONFIG_KEY_0: "core.fsmonitor",
  GIT_CONFIG_VALUE_0: "false",
  GIT_CONFIG_KEY_1: "core.hooksPath",
  GIT_CONFIG_VALUE_1: "/dev/null",
};

/**
 * Before the scorers: the workspace's `.git` configuration, `info/` and hooks as the start tree had
 * them, so a scorer's own git (`git status`, `git diff`) runs nothing the agent planted there. A
 * `.git` the agent replaced (a file, a link) is replaced by the start tree's.
 */
export async function restoreWorkspaceGit(
  start: { dir: string; gitMeta?: GitMeta; copyMethod?: CopyMethod },
  ws: string,
): Promise<void> {
  const dotGit = path.join(ws, ".git");
  const meta = start.gitMeta ?? (await readGitMeta(path.join(start.dir, ".git")));
  if (await restoreGitMeta(dotGit, meta)) return;
  await rm(dotGit, { recursive: true, force: true });
  await copyTree(path.join(start.dir, ".git"), dotGit, start.copyMethod ?? "copy");
  await restoreGitMeta(dotGit, meta);
}
