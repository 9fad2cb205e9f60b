/**
 * How benches and tests run git: without the user's or the system's config (a signing key or a hook
 * there would change what is measured or tested), with a fixed identity (a commit needs one).
 * Plain ESM, so bench/*.mjs runs it without a build; test/helpers.ts imports it too
 * (git-env.d.mts gives its types).
 */
import { execFileSync } from "node:child_process";

/** The git variables alone: no config files, `name <email>` as author and committer. */
export function gitEnv(name = "bench", email = "bench@localhost") {
  return {
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
}

/** This process's environment with the git variables of {@link gitEnv}: what the benches' commands get. */
export const GIT_ENV = { ...process.env, ...gitEnv() };

/** Runs a shell command line with {@link GIT_ENV}; its stdout. */
export function sh(cmd, cwd) {
  return execFileSync("/bin/sh", ["-c", cmd], { cwd, env: GIT_ENV, encoding: "utf8", maxBuffer: 1 << 30 });
}
