import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GitSeed } from "../../src/config/types.js";
import { WorkspaceError } from "../../src/workspace/errors.js";
import { fetchGitSeed } from "../../src/workspace/git-seed.js";
import { filesContaining, gitRepo, sh, tempDir } from "../helpers.js";
import { type GitHttpServer, startGitHttpServer } from "./git-http-server.js";

const TOKEN = "ghs_seedToken_9f8e7d6c5b4a";
const ENCODED = Buffer.from(`x-access-token:${TOKEN}`).toString("base64");

/** A bare repository with main (v2), tag v1, branch feature and a subfolder. */
function bareRepo(): { root: string; bare: string; v1: string } {
  const work = gitRepo({ "README.md": "v1\n", "services/cart/cart.js": "cart v1\n" });
  sh(
    "git tag v1 && echo v2 > README.md && git commit -qam v2 && git checkout -q -b feature && echo feat > README.md && git commit -qam feat && git checkout -q main",
    work,
  );
  const v1 = sh("git rev-parse v1", work).trim();
  const root = tempDir("evalgate-remote-");
  const bare = path.join(root, "shop.git");
  sh(`git clone -q --bare ${work} ${bare}`, root);
  return { root, bare, v1 };
}

async function fetchInto(seed: GitSeed, env: NodeJS.ProcessEnv = {}) {
  const dir = path.join(tempDir(), "tree");
  const error = await fetchGitSeed(dir, seed, env).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { dir, error };
}

describe("git seeds from a bare repository over file://", () => {
  const { bare, v1 } = bareRepo();

  it.each([
    ["a branch", "feature", "feat\n"],
    ["a tag", "v1", "v1\n"],
    ["a full sha", v1, "v1\n"],
    ["the default branch", undefined, "v2\n"],
  ])("fetches %s shallowly", async (_what, ref, content) => {
    const { dir, error } = await fetchInto({ kind: "git", url: `file://${bare}`, ...(ref ? { ref } : {}) });
    expect(error).toBeUndefined();
    expect(readFileSync(path.join(dir, "README.md"), "utf8")).toBe(content);
    expect(existsSync(path.join(dir, ".git", "shallow"))).toBe(true);
    expect(sh("git rev-list --count HEAD", dir).trim()).toBe("1");
  });

  it("resolves a short sha with a full fetch (a server cannot be asked for an abbreviated name)", async () => {
    const { dir, error } = await fetchInto({ kind: "git", url: `file://${bare}`, ref: v1.slice(0, 7) });
    expect(error).toBeUndefined();
    expect(readFileSync(path.join(dir, "README.md"), "utf8")).toBe("v1\n");
    expect(sh("git rev-parse HEAD", dir).trim()).toBe(v1);
  });

  it("names the ref and the repository when the ref does not exist", async () => {
    const { error } = await fetchInto({ kind: "git", url: `file://${bare}`, ref: "release-9" });
    expect(error).toBeInstanceOf(WorkspaceError);
    const e = error as WorkspaceError;
    expect(e.failure).toBe("config");
    expect(e.details.key).toBe("git.ref");
    expect(e.message).toContain(`ref "release-9" was not found in file://${bare}`);
    expect(e.message).toContain("never falls back to the default branch");
  });

  it("says so when the repository is a shallow clone without the ref (a checkout's default)", async () => {
    // before: the hint only said to use a ref that exists, though the commit does exist upstream.
    const clone = path.join(tempDir(), "checkout");
    sh(`git clone -q --depth 1 file://${bare} ${clone}`, path.dirname(clone));
    for (const url of [clone, `file://${clone}`]) {
      const { error } = await fetchInto({ kind: "git", url, ref: v1 });
      expect((error as WorkspaceError).message).toContain(`ref "${v1}" was not found in ${url}`);
      expect((error as WorkspaceError).details.hint).toMatch(
        /is a shallow clone, with only its latest commits .*fetch-depth: 0/,
      );
    }
    // A repository with its whole history keeps the usual hint.
    const { error } = await fetchInto({ kind: "git", url: bare, ref: "release-9" });
    expect((error as WorkspaceError).details.hint).toMatch(/^use a branch, tag or commit/);
  });

  it("refuses a subdir that the ref does not have", async () => {
    const { error } = await fetchInto({
      kind: "git",
      url: `file://${bare}`,
      ref: "v1",
      subdir: "services/billing",
    });
    expect((error as WorkspaceError).details.key).toBe("git.subdir");
    expect((error as WorkspaceError).message).toContain(
      `subdir "services/billing" is not a folder of file://${bare} at v1`,
    );
  });
});

describe("git seeds over HTTP with a token", () => {
  let server: GitHttpServer;
  const { root, v1 } = bareRepo();
  beforeAll(async () => {
    server = await startGitHttpServer(root, TOKEN);
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ["a tag", "v1", "v1\n"],
    ["a branch", "feature", "feat\n"],
    ["a full sha", v1, "v1\n"],
    ["a short sha", v1.slice(0, 10), "v1\n"],
  ])("fetches %s with the token, which is written nowhere", async (_what, ref, content) => {
    const before = server.requests.length;
    const { dir, error } = await fetchInto(
      { kind: "git", url: `${server.url}/shop.git`, ref, tokenEnv: "SHOP_TOKEN" },
      { SHOP_TOKEN: TOKEN },
    );
    expect(error).toBeUndefined();
    expect(readFileSync(path.join(dir, "README.md"), "utf8")).toBe(content);
    const mine = server.requests.slice(before);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((r) => r.authorized)).toBe(true);
    // Not in .git/config, FETCH_HEAD, logs or anything else of the repository.
    expect(filesContaining(dir, TOKEN)).toEqual([]);
    expect(filesContaining(dir, ENCODED)).toEqual([]);
  });

  it("fails clearly when the eval file gives no token_env", async () => {
    const { error } = await fetchInto({ kind: "git", url: `${server.url}/shop.git`, ref: "v1" });
    const e = error as WorkspaceError;
    expect(e.failure).toBe("config");
    expect(e.details.key).toBe("git.url");
    expect(e.message).toBe(`cannot fetch ${server.url}/shop.git: the server asks for credentials`);
    expect(e.details.hint).toContain("token_env");
  });

  it("fails clearly when the token variable is not set", async () => {
    const { error } = await fetchInto(
      { kind: "git", url: `${server.url}/shop.git`, tokenEnv: "SHOP_TOKEN" },
      {},
    );
    const e = error as WorkspaceError;
    expect(e.details.key).toBe("git.token_env");
    expect(e.message).toContain("token_env SHOP_TOKEN is not set");
  });

  it("fails clearly when the server refuses the token, without showing it", async () => {
    const wrong = "ghs_wrongToken_0000111122";
    const { error } = await fetchInto(
      { kind: "git", url: `${server.url}/shop.git`, ref: "v1", tokenEnv: "SHOP_TOKEN" },
      { SHOP_TOKEN: wrong },
    );
    const e = error as WorkspaceError;
    expect(e.failure).toBe("config");
    expect(e.message).toBe(
      `cannot fetch ${server.url}/shop.git: the server did not accept the token in SHOP_TOKEN`,
    );
    expect(`${e.message} ${e.details.hint}`).not.toContain(wrong);
  });

  it("names the ref and the repository when the ref does not exist on the server", async () => {
    const { error } = await fetchInto(
      { kind: "git", url: `${server.url}/shop.git`, ref: "v9.9", tokenEnv: "SHOP_TOKEN" },
      { SHOP_TOKEN: TOKEN },
    );
    expect((error as WorkspaceError).message).toContain(`ref "v9.9" was not found in ${server.url}/shop.git`);
  });
});
