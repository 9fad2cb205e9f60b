/**
 * repositoryRoot: the top of the git work tree around a folder, else the folder. It runs git through
 * node's execFile since decision 0221 (execa before); these pin that it answers as it did.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repositoryRoot } from "../../src/workspace/git.js";
import { tempDir } from "../helpers.js";

function gitInit(dir: string): void {
  const r = spawnSync("git", ["init", "-q", dir], { encoding: "utf8" });
  expect(r.status).toBe(0);
}

const saved = process.env.GIT_DIR;
afterEach(() => {
  if (saved === undefined) delete process.env.GIT_DIR;
  else process.env.GIT_DIR = saved;
});

describe("repositoryRoot", () => {
  it("is the work tree's top folder from any folder inside it", async () => {
    const repo = realpathSync(tempDir());
    gitInit(repo);
    const deep = path.join(repo, "a", "b");
    mkdirSync(deep, { recursive: true });
    expect(await repositoryRoot(deep)).toBe(repo);
    expect(await repositoryRoot(repo)).toBe(repo);
  });

  it("is the folder itself outside a repository, and for a folder that does not exist", async () => {
    const plain = realpathSync(tempDir());
    expect(await repositoryRoot(plain)).toBe(plain);
    const missing = path.join(plain, "missing");
    expect(await repositoryRoot(missing)).toBe(missing);
  });

  it("ignores GIT_DIR of the caller's environment: git runs with evalgate's own", async () => {
    const repo = realpathSync(tempDir());
    const other = realpathSync(tempDir());
    gitInit(repo);
    gitInit(other);
    process.env.GIT_DIR = path.join(other, ".git");
    expect(await repositoryRoot(repo)).toBe(repo);
  });
});
