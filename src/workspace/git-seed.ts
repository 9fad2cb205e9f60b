/**
 * Git seeds: fetch one ref of a repository into an empty repository and check it out, shallowly
 * where the ref allows it. A ref that does not resolve is an error naming the ref and the
 * repository, never a fall-back to the default branch.
 *
 * A token (`token_env`) reaches git only through its environment-scoped configuration
 * (GIT_CONFIG_COUNT/KEY/VALUE → `http.<origin>/.extraHeader`), for the fetch commands only: it is
 * never on a command line (where other processes could read it), in the URL, in `.git/config`, or
 * in any message.
 */
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import type { GitSeed } from "../config/types.js";
import { WorkspaceError } from "./errors.js";
import { GitError, git } from "./git.js";

/** Git's answers when the server wants credentials it did not get (or did not accept). */
const AUTH_FAILED =
  /could not read (Username|Password)|Authentication failed|terminal prompts disabled|returned error: 40[13]|Invalid username or password/i;
/** Git's answers when the repository cannot be reached at all. */
const UNREACHABLE =
  /repository .* not found|does not appear to be a git repository|could not read|unable to access|Could not resolve host|Failed to connect|Connection refused|returned error: 404|Permission denied|No such file or directory/i;

interface Auth {
  env: Record<string, string>;
  /** Strings that must never appear in a message: the token and the header made from it. */
  secrets: string[];
}

function authFor(seed: GitSeed, from: NodeJS.ProcessEnv): Auth {
  if (!seed.tokenEnv) return { env: {}, secrets: [] };
  const token = from[seed.tokenEnv];
  if (!token) {
    throw new WorkspaceError(
      "config",
      `token_env ${seed.tokenEnv} is not set, so ${seed.url} cannot be fetched`,
      {
        key: "git.token_env",
        hint: `set ${seed.tokenEnv} in evalgate's environment (in a workflow: env: { ${seed.tokenEnv}: \${{ secrets.YOUR_SECRET }} })`,
      },
    );
  }
  const encoded = Buffer.from(`x-access-token:${token}`).toString("base64");
  // Scoped to the repository's origin, so a redirect to another host never carries the token.
  const origin = new URL(seed.url).origin;
  return {
    env: {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: `http.${origin}/.extraHeader`,
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${encoded}`,
    },
    secrets: [token, encoded],
  };
}

function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join("***");
  return out;
}

/** The part of a git failure worth showing: its stderr, without the command line. */
function reason(error: GitError, secrets: readonly string[]): string {
  return scrub(error.message.replace(/^git .*? failed: /, ""), secrets);
}

function unreachable(seed: GitSeed, error: GitError, auth: Auth): WorkspaceError | undefined {
  if (AUTH_FAILED.test(error.stderr)) {
    return seed.tokenEnv
      ? new WorkspaceError(
          "config",
          `cannot fetch ${seed.url}: the server did not accept the token in ${seed.tokenEnv}`,
          {
            key: "git.token_env",
            hint: `check that ${seed.tokenEnv} holds a token that can read this repository and has not expired`,
          },
        )
      : new WorkspaceError("config", `cannot fetch ${seed.url}: the server asks for credentials`, {
          key: "git.url",
          hint: "add token_env: NAME to the git seed, naming an environment variable that holds a token",
        });
  }
  if (UNREACHABLE.test(error.stderr)) {
    return new WorkspaceError("seed", `cannot fetch ${seed.url}: ${reason(error, auth.secrets)}`);
  }
  return undefined;
}

async function resolveFetched(dir: string, ref: string): Promise<string | undefined> {
  for (const candidate of [`refs/tags/${ref}`, `refs/remotes/origin/${ref}`, ref]) {
    try {
      const sha = (await git(["rev-parse", "--verify", "-q", `${candidate}^{commit}`], { cwd: dir })).trim();
      if (sha) return sha;
    } catch {
      // not this form; try the next
    }
  }
  return undefined;
}

/**
 * Fetches `seed.ref` (or the default branch) of `seed.url` into `dir` (an empty folder) and checks
 * it out; then checks that `seed.subdir` exists there.
 *
 * A branch, a tag or a full sha is fetched with `--depth 1`. A short sha cannot be asked of a
 * server (the protocol wants full object names), so when the shallow fetch does not find the ref,
 * every branch and tag is fetched in full and the ref is resolved locally.
 */
export async function fetchGitSeed(dir: string, seed: GitSeed, from: NodeJS.ProcessEnv = process.env) {
  const auth = authFor(seed, from);
  const opts = { cwd: dir, env: auth.env };
  await git(["init", "-q", dir]);
  const wanted = seed.ref ?? "HEAD";
  let fetched = false;
  try {
    await git(["fetch", "-q", "--depth", "1", "--no-tags", seed.url, wanted], opts);
    await git(["checkout", "-q", "--detach", "FETCH_HEAD"], { cwd: dir });
    fetched = true;
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    const hard = unreachable(seed, error, auth);
    if (hard) throw hard;
    if (seed.ref === undefined) {
      throw new WorkspaceError("seed", `cannot fetch ${seed.url}: ${reason(error, auth.secrets)}`);
    }
  }
  if (!fetched) {
    const ref = seed.ref!;
    try {
      await git(["fetch", "-q", "--tags", seed.url, "+refs/heads/*:refs/remotes/origin/*"], opts);
    } catch (error) {
      if (!(error instanceof GitError)) throw error;
      throw (
        unreachable(seed, error, auth) ??
        new WorkspaceError("seed", `cannot fetch ${seed.url}: ${reason(error, auth.secrets)}`)
      );
    }
    const sha = await resolveFetched(dir, ref);
    if (!sha) {
      throw new WorkspaceError(
        "config",
        `ref "${ref}" was not found in ${seed.url}: no branch, tag or commit has that name (evalgate never falls back to the default branch)`,
        {
          key: "git.ref",
          hint: isShallowClone(seed.url)
            ? `${seed.url} is a shallow clone, with only its latest commits (actions/checkout makes one by default): fetch its whole history (actions/checkout with fetch-depth: 0, or git fetch --unshallow)`
            : "use a branch, tag or commit (full or at least 7 characters of its sha) that exists in the repository",
        },
      );
    }
    await git(["checkout", "-q", "--detach", sha], { cwd: dir });
  }
  if (seed.subdir) {
    const isDir = await stat(`${dir}/${seed.subdir}`).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) {
      throw new WorkspaceError(
        "config",
        `subdir "${seed.subdir}" is not a folder of ${seed.url} at ${seed.ref ?? "its default branch"}`,
        { key: "git.subdir", hint: "give a folder that exists at that ref, relative to the repository root" },
      );
    }
  }
}

/** A repository on this machine (a path or a file:// URL) that holds only part of its history. */
function isShallowClone(url: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !url.startsWith("file://")) return false;
  const local = url.replace(/^file:\/\//, "");
  return existsSync(path.join(local, ".git", "shallow")) || existsSync(path.join(local, "shallow"));
}
