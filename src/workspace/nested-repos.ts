/**
 * Repositories an agent made inside its workspace that git cannot record. `git add -A` records a
 * nested repository as a link to its commit, and refuses one with no commit ("does not have a commit
 * checked out"), failing the whole capture: the attempt would end as a `workspace_error`, an error
 * an agent could trade a sure failure for with one `git init`. Such a `.git` (new since the start
 * tree) is removed before the add is tried again, so the files beside it are captured and graded
 * as the agent's (docs/decisions/0248).
 */
import { lstat, rm } from "node:fs/promises";
import { GitError, nulParts, under } from "./git.js";
import { runTool } from "./tool.js";

/** Whether `error` is `git add` refusing a nested repository with no commit. */
export function isUnbornRepository(error: unknown): error is GitError {
  return (
    error instanceof GitError &&
    error.args[0] === "add" &&
    error.stderr.includes("does not have a commit checked out")
  );
}

/**
 * Removes every `.git` below the top of `workTree` that the start tree (`startDir`) does not have
 * at the same place; returns their paths (decoded for messages). Only names are read, never the
 * repositories themselves (their configuration is the agent's).
 */
export async function removeNewNestedRepositories(workTree: string, startDir: string): Promise<string[]> {
  const args = [".", "(", "-path", "./.git", "-prune", ")", "-o", "(", "-name", ".git", "-prune"];
  args.push("-printf", "%P\\0", ")");
  const r = await runTool("find", args, {
    cwd: workTree,
    env: { PATH: process.env.PATH ?? "" },
    stdout: true,
  });
  if (r.code !== 0 && r.code !== 1) {
    throw new Error(`cannot look for nested repositories: ${r.stderr.trim() || `find exited ${r.code}`}`);
  }
  const removed: string[] = [];
  for (const rel of nulParts(r.stdout)) {
    if (await lstat(under(startDir, rel)).catch(() => undefined)) continue;
    await rm(under(workTree, rel), { recursive: true, force: true });
    removed.push(rel.toString("utf8"));
  }
  return removed;
}

/** The attempt's warning for a nested repository's `.git` the capture removed. */
export function nestedRepositoryWarning(dotGit: string): string {
  return `${dotGit} is a nested repository with no commit, which git cannot record: removed, the files beside it captured`;
}
