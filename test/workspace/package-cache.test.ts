/**
 * The package cache's two copies (docs/decisions/0220): into setup's npm cache only what a lockfile
 * names and what still hashes to its digest; back into the cache only tarballs that hash to the
 * digest they are filed under, never links, never npm's cached registry responses.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import {
  keepNpmContent,
  npmContentDir,
  packageCacheRoot,
  seedNpmCache,
} from "../../src/workspace/package-cache.js";
import { tempDir } from "../helpers.js";

const sha512 = (b: Buffer) => createHash("sha512").update(b).digest();
const filed = (root: string, hex: string) => path.join(root, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));

function put(file: string, bytes: Buffer | string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bytes);
}

describe("the package cache", () => {
  it("is EVALGATE_CACHE_DIR, else under the XDG cache, and off when asked", () => {
    expect(packageCacheRoot({ EVALGATE_CACHE_DIR: "/c" })).toBe("/c");
    expect(packageCacheRoot({ EVALGATE_CACHE_DIR: "off" })).toBeUndefined();
    expect(packageCacheRoot({ XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe("/x/evalgate");
    expect(packageCacheRoot({ HOME: "/h" })).toBe("/h/.cache/evalgate");
  });

  it("keeps a tarball that hashes to its digest, and refuses planted bytes, links and registry responses", async () => {
    // before: there was no cache; a naive one would keep whatever setup left in its npm cache.
    const dir = tempDir();
    const store = path.join(dir, "store");
    const home = path.join(dir, "home");
    const content = npmContentDir(home);
    const good = gzipSync("genuine");
    const goodHex = sha512(good).toString("hex");
    put(filed(content, goodHex), good);
    // Evil gzip bytes filed under the digest of other (genuine) bytes.
    const otherHex = sha512(Buffer.from("other")).toString("hex");
    put(filed(content, otherHex), gzipSync("evil"));
    // A registry response (JSON), correctly filed: never asked for by digest, not kept.
    const json = Buffer.from('{"name":"x"}');
    const jsonHex = sha512(json).toString("hex");
    put(filed(content, jsonHex), json);
    // A link filed under a digest, and a linked folder.
    const secret = path.join(dir, "secret");
    writeFileSync(secret, gzipSync("secret"));
    const secretHex = sha512(readFileSync(secret)).toString("hex");
    mkdirSync(path.dirname(filed(content, secretHex)), { recursive: true });
    symlinkSync(secret, filed(content, secretHex));
    symlinkSync(dir, path.join(content, "zz"));

    expect(await keepNpmContent(store, home)).toEqual({ kept: 1, rejected: 1 });
    expect(readFileSync(filed(path.join(store, "npm"), goodHex)).equals(good)).toBe(true);
    for (const hex of [otherHex, jsonHex, secretHex])
      expect(existsSync(filed(path.join(store, "npm"), hex))).toBe(false);
  });

  it("gives setup the tarballs its lockfiles name, dropping a store file that no longer matches", async () => {
    const dir = tempDir();
    const store = path.join(dir, "store");
    const tree = path.join(dir, "tree");
    const home = path.join(dir, "home");
    const named = gzipSync("named");
    const corrupt = gzipSync("corrupt");
    const unnamed = gzipSync("unnamed");
    const [namedHex, corruptHex, unnamedHex] = [named, corrupt, unnamed].map((b) =>
      sha512(b).toString("hex"),
    );
    put(filed(path.join(store, "npm"), namedHex!), named);
    put(filed(path.join(store, "npm"), corruptHex!), gzipSync("changed by someone"));
    put(filed(path.join(store, "npm"), unnamedHex!), unnamed);
    const integrity = (b: Buffer) => `sha512-${sha512(b).toString("base64")}`;
    put(
      path.join(tree, "packages/a/package-lock.json"),
      JSON.stringify({
        lockfileVersion: 3,
        packages: {
          "node_modules/a": { integrity: `${integrity(named)} sha1-AAAA` },
          "node_modules/b": { integrity: integrity(corrupt) },
          "node_modules/c": { integrity: integrity(gzipSync("absent")) },
        },
      }),
    );
    spawnSync("git", ["init", "-q"], { cwd: tree });

    expect(await seedNpmCache(store, tree, home)).toEqual({ reused: 1, rejected: 1 });
    expect(readFileSync(filed(npmContentDir(home), namedHex!)).equals(named)).toBe(true);
    expect(existsSync(filed(npmContentDir(home), corruptHex!))).toBe(false);
    expect(existsSync(filed(path.join(store, "npm"), corruptHex!))).toBe(false);
    expect(existsSync(filed(npmContentDir(home), unnamedHex!))).toBe(false);
  });
});
