/**
 * Setup's package cache (issue 31, item 2; docs/decisions/0220): a second run's `npm ci` installs
 * from the tarballs the first run's npm downloaded, with setup's network cut, without setup ever
 * seeing the cache; what a setup plants in its npm cache never reaches the next run; and each case's
 * summary.json records the setup command and its wall time. A real npm against a registry served
 * on loopback by this test (no network outside the machine).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCliAsync, tempDir, writeFiles } from "../helpers.js";

/** A package packed by the real `npm pack`: its tarball and the lockfile's integrity of it. */
function packed(dir: string, indexJs: string): { tgz: Buffer; integrity: string } {
  writeFiles(dir, {
    "package.json": JSON.stringify({ name: "tiny-dep", version: "1.0.0", main: "index.js" }),
    "index.js": indexJs,
  });
  const r = spawnSync("npm", ["pack", "--silent"], { cwd: dir, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  const tgz = readFileSync(path.join(dir, r.stdout.trim()));
  return { tgz, integrity: `sha512-${createHash("sha512").update(tgz).digest("base64")}` };
}

/** A registry of one package on 127.0.0.1 (npm's packument and tarball routes). */
async function registry(tgz: Buffer, integrity: string): Promise<{ url: string; close(): Promise<void> }> {
  let url = "";
  const server = http.createServer((req, res) => {
    if (req.url === "/tiny-dep/-/tiny-dep-1.0.0.tgz") {
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(tgz);
    } else if (req.url === "/tiny-dep") {
      const dist = { tarball: `${url}tiny-dep/-/tiny-dep-1.0.0.tgz`, integrity };
      const versions = { "1.0.0": { name: "tiny-dep", version: "1.0.0", dist } };
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ name: "tiny-dep", "dist-tags": { latest: "1.0.0" }, versions }));
    } else res.writeHead(404).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A project whose lockfile installs tiny-dep from `url`, and an eval file whose setup is `setup`. */
function project(dir: string, url: string, integrity: string, setup: string): void {
  const dep = { version: "1.0.0", resolved: `${url}tiny-dep/-/tiny-dep-1.0.0.tgz`, integrity };
  writeFiles(dir, {
    "app/package.json": JSON.stringify({
      name: "app",
      version: "1.0.0",
      dependencies: { "tiny-dep": "1.0.0" },
    }),
    "app/package-lock.json": JSON.stringify({
      name: "app",
      version: "1.0.0",
      lockfileVersion: 3,
      requires: true,
      packages: {
        "": { name: "app", version: "1.0.0", dependencies: { "tiny-dep": "1.0.0" } },
        "node_modules/tiny-dep": dep,
      },
    }),
    "app/.npmrc": `registry=${url}\naudit=false\nfund=false\nupdate-notifier=false\n`,
    "app/plant.cjs": PLANT,
    // The scorer passes only on the genuine package's code.
    "a.eval.yaml": `name: cache
targets: [{ name: bot, provider: command, command: ["true"] }]
workspace:
  seed: { path: app }
  setup: ${setup}
tests:
  - id: t
    instruction: "do it"
    scorers: [{ type: command, run: "grep -q genuine node_modules/tiny-dep/index.js" }]
`,
  });
}

/**
 * The attacker's setup step: evil bytes (a real gzip tarball) filed in its npm cache under the
 * digest of the genuine tarball, where the next run's npm would look for it; and a link filed
 * under a digest, pointing at a file outside.
 */
const PLANT = `
const fs = require("node:fs"), path = require("node:path"), zlib = require("node:zlib");
const integrity = require("./package-lock.json").packages["node_modules/tiny-dep"].integrity;
const hex = Buffer.from(integrity.slice("sha512-".length), "base64").toString("hex");
const dir = path.join(process.env.HOME, ".npm/_cacache/content-v2/sha512", hex.slice(0, 2), hex.slice(2, 4));
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, hex.slice(4));
if (fs.existsSync(file)) fs.chmodSync(file, 0o644);
fs.writeFileSync(file, zlib.gzipSync("module.exports = 'evil';"));
fs.symlinkSync("/etc/hostname", path.join(dir, "0".repeat(124)));
`;

interface SetupField {
  command: string;
  duration_ms: number;
  npm_cache: { reused: number; kept: number; rejected: number } | null;
}

/** The one case's summary.json `setup` field and its attempt's status. */
function caseOf(bundle: string): { setup?: SetupField; verdict: string; message: string | null } {
  const dir = readdirSync(bundle).find((d) => existsSync(path.join(bundle, d, "summary.json")))!;
  const s = JSON.parse(readFileSync(path.join(bundle, dir, "summary.json"), "utf8"));
  return { setup: s.setup, verdict: s.verdict, message: s.runs[0].message };
}

/**
 * Runs of the project in `dir` sharing one package cache: each with its setup, into its bundle
 * folder; each must exit 0, and gives its one case.
 */
function runsOf(dir: string, url: string, integrity: string) {
  const env = { EVALGATE_CACHE_DIR: path.join(dir, "cache") };
  return async (setup: string, out: string) => {
    project(dir, url, integrity, setup);
    const r = await runCliAsync(["run", "--out", out], dir, env);
    const c = existsSync(path.join(dir, out)) ? caseOf(path.join(dir, out)) : undefined;
    expect(r.code, `${c?.message ?? ""}\n${r.stdout}${r.stderr}`).toBe(0);
    return c!;
  };
}

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("setup's package cache", () => {
  it("a second run's npm ci installs from the first run's downloads with setup's network cut", async () => {
    // before: setup's npm cache was empty in every run (a fresh HOME): the second run failed in
    // setup (npm could not reach the registry), and summary.json had no setup field.
    const dir = tempDir();
    const pkg = packed(path.join(dir, "pkg"), "module.exports = 'genuine';\n");
    const reg = await registry(pkg.tgz, pkg.integrity);
    servers.push(reg);
    const run = runsOf(dir, reg.url, pkg.integrity);
    const one = await run(`{ command: "npm ci" }`, "b1");
    expect(one.setup).toMatchObject({ command: "npm ci", npm_cache: { reused: 0, kept: 1, rejected: 0 } });
    expect(one.setup!.duration_ms).toBeGreaterThan(0);

    // The registry is gone and setup has no network: only the cache can install tiny-dep.
    await reg.close();
    servers.splice(0);
    const two = await run(`{ command: "npm ci --offline", network: false }`, "b2");
    expect(two.verdict).toBe("pass");
    expect(two.setup).toMatchObject({
      command: "npm ci --offline",
      npm_cache: { reused: 1, kept: 0, rejected: 0 },
    });
    // The report shows it in the case's table.
    const html = await runCliAsync(["report", "b2", "--format", "html"], dir);
    expect(html.stdout).toMatch(/<code>npm ci --offline<\/code> · [^<·]+ · npm cache: 1 reused, 0 kept</);
  }, 180_000);

  it("a setup that plants evil bytes under the genuine digest does not change what the next run installs", async () => {
    // before (the alternative in docs/decisions/0220, setup's npm cache being the shared cache
    // itself): the planted file would be what the next run's npm reads for that digest.
    const dir = tempDir();
    const pkg = packed(path.join(dir, "pkg"), "module.exports = 'genuine';\n");
    const reg = await registry(pkg.tgz, pkg.integrity);
    servers.push(reg);
    const cache = path.join(dir, "cache");
    const run = runsOf(dir, reg.url, pkg.integrity);
    // Run 1 (a pull request's, say): installs, then plants.
    const one = await run(`{ command: "npm ci && node plant.cjs" }`, "b1");
    // The planted bytes do not hash to the digest they are filed under: refused, never kept.
    expect(one.setup?.npm_cache).toEqual({ reused: 0, kept: 0, rejected: 1 });
    expect(existsSync(path.join(cache, "npm"))).toBe(false);

    // Run 2 (main's): installs the genuine package, from the registry since nothing was kept.
    const two = await run(`{ command: "npm ci" }`, "b2");
    expect(two.setup?.npm_cache).toEqual({ reused: 0, kept: 1, rejected: 0 });

    // Run 3 plants over the copy it was given: the cache's own file is untouched, and run 4 is
    // given the genuine tarball again with no network.
    const three = await run(`{ command: "npm ci && node plant.cjs" }`, "b3");
    // The cache has that digest already: setup's file is not even read back.
    expect(three.setup?.npm_cache).toEqual({ reused: 1, kept: 0, rejected: 0 });
    const hex = createHash("sha512").update(pkg.tgz).digest("hex");
    const kept = path.join(cache, "npm", hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
    expect(readFileSync(kept).equals(pkg.tgz)).toBe(true);
    await reg.close();
    servers.splice(0);
    const four = await run(`{ command: "npm ci --offline", network: false }`, "b4");
    expect(four.setup?.npm_cache).toEqual({ reused: 1, kept: 0, rejected: 0 });
  }, 420_000);

  it("setup does not see the cache (bubblewrap hides it, wherever it lies)", async () => {
    // before: the cache inside the eval file's folder (which setup sees, read-only) was readable.
    const dir = tempDir();
    const cache = path.join(dir, "cache");
    mkdirSync(path.join(cache, "npm"), { recursive: true });
    writeFiles(dir, {
      "app/x": "x",
      "a.eval.yaml": `name: hidden
targets: [{ name: bot, provider: command, command: ["true"] }]
workspace:
  seed: { path: app }
  setup: { command: "test ! -e ${path.join(cache, "npm")}" }
tests:
  - { id: t, instruction: "do it", scorers: [{ type: command, run: "true" }] }
`,
    });
    const r = await runCliAsync(["run", "--out", "b"], dir, { EVALGATE_CACHE_DIR: cache });
    expect(caseOf(path.join(dir, "b")).verdict, r.stdout).toBe("pass");
  }, 120_000);
});
