/**
 * The `setup: npm ci` suite's project (bench/floors.mjs): this repository's package.json and
 * package-lock.json, installed by `npm ci --omit=dev` from a small npm cache written beside the
 * eval, so the bench never needs the network: the cache holds only the tarballs this repository's
 * own `npm ci` already put into npm's cache. The lock gets each tarball's registry address
 * (`resolved`), which this repository's lock leaves out: with it and the integrity npm reads the
 * tarball from the cache by its digest instead of asking the registry for the package's metadata.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");

/** What setup runs in the start tree; `{EVAL_DIR}` is the eval's folder, where the cache is. */
export const NPM_SETUP =
  "npm ci --offline --omit=dev --ignore-scripts --no-audit --no-fund --logs-max=0 --cache {EVAL_DIR}/npm-cache";

/** The scorer: the agent's file is there, and the installed packages load. */
export const NPM_GRADER = `#!/bin/sh
test -s answer.txt && node -e 'for (const p of ["yaml", "zod", "commander", "tar", "picomatch"]) require(p)' && cat /proc/sys/kernel/hostname
`;

/** The cache file of one integrity string (cacache's content-v2 layout). */
function contentPath(cache, integrity) {
  const [algo, b64] = integrity.split(" ")[0].split("-");
  const hex = Buffer.from(b64, "base64").toString("hex");
  return path.join(cache, "_cacache", "content-v2", algo, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

/**
 * Writes `project/package.json`, `project/package-lock.json` and `npm-cache/` into `dir`. Returns
 * the number of packages npm ci will install, or why the suite cannot run offline here (a tarball
 * not in npm's cache).
 */
export function writeNpmProject(dir) {
  let cache;
  try {
    cache = execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim();
  } catch (e) {
    return { why: `npm is not usable here (${String(e).split("\n")[0]})` };
  }
  let packages = 0;
  const lock = JSON.parse(readFileSync(path.join(REPO, "package-lock.json"), "utf8"));
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (!key || entry.link || !entry.integrity) continue;
    const name = key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
    entry.resolved ??= `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${entry.version}.tgz`;
    if (entry.dev) continue;
    const from = contentPath(cache, entry.integrity);
    if (!existsSync(from)) {
      // Another platform's binary: npm ci skips it here.
      if (entry.optional) continue;
      return {
        why: `${name}@${entry.version} is not in npm's cache ${cache} (run \`npm ci\` in this repository first)`,
      };
    }
    const to = contentPath(path.join(dir, "npm-cache"), entry.integrity);
    mkdirSync(path.dirname(to), { recursive: true });
    copyFileSync(from, to);
    packages++;
  }
  mkdirSync(path.join(dir, "project"), { recursive: true });
  writeFileSync(path.join(dir, "project", "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
  copyFileSync(path.join(REPO, "package.json"), path.join(dir, "project", "package.json"));
  // Once before the rounds, so that a cache npm cannot use offline skips the suite with its reason.
  const probe = path.join(dir, "npm-probe");
  cpSync(path.join(dir, "project"), probe, { recursive: true });
  const r = spawnSync("/bin/sh", ["-c", NPM_SETUP.replaceAll("{EVAL_DIR}", dir)], {
    cwd: probe,
    encoding: "utf8",
  });
  rmSync(probe, { recursive: true, force: true });
  if (r.status !== 0)
    return { why: `npm ci --offline fails here: ${`${r.stderr}`.trim().split("\n").slice(0, 2).join(" ")}` };
  return { packages };
}
