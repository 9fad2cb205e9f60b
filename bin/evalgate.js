#!/usr/bin/env node
import { statSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";

const args = process.argv.slice(2);
// A run's live data is small (20–40 MB) and its garbage plentiful: by default V8 lets the heap grow
// to several times the live data before a full collection, so peak memory grew with the run's
// length. This keeps it near the live data, at no measured cost in speed (docs/decisions/0177).
// A plain validate runs nothing: its heap is the eval files, and the flag doubled the time it took
// to read a large one (docs/performance.md).
const smallHeap = !(args[0] === "validate" && !args.includes("--solvable"));
if (smallHeap) setFlagsFromString("--optimize-for-size");
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // The one answer that needs no command parser: keeps `evalgate --version` at bare Node's start-up.
  const { VERSION } = await import("../lib/version.js");
  process.stdout.write(`${VERSION}\n`);
} else {
  const { main } = await loadCli();
  process.exitCode = await main(args);
}

/**
 * The CLI: the bundle (lib/cli-bundle/, CommonJS chunks) when it is fresh, else lib/. Node ≥ 22.1
 * keeps the compiled code of what it loads between runs (its compile cache, in the system temp
 * folder); on Node 20, which has none, lib/cli/code-cache.js gives the bundle's chunks V8's code
 * cache itself (docs/decisions/0235, 0221). NODE_DISABLE_COMPILE_CACHE=1 turns either off.
 */
async function loadCli() {
  const bundle = bundleIsFresh();
  if (module.enableCompileCache) {
    module.enableCompileCache();
    if (bundle) return module.createRequire(import.meta.url)("../lib/cli-bundle/main.cjs");
  } else if (bundle && process.env.NODE_DISABLE_COMPILE_CACHE) {
    return module.createRequire(import.meta.url)("../lib/cli-bundle/main.cjs");
  } else if (bundle) {
    const { loadWithCodeCache } = await import("../lib/cli/code-cache.js");
    const dir = fileURLToPath(new URL("../lib/cli-bundle", import.meta.url));
    return loadWithCodeCache(dir, smallHeap ? "optimize-for-size" : "default");
  }
  return import("../lib/cli/main.js");
}

/**
 * Whether to run the bundled CLI (lib/cli-bundle/, scripts/bundle-cli.mjs): it is there and was
 * built from the lib/ that is here. A tsc run after the bundle (a watch, a build without rolldown)
 * leaves it older than lib/cli/main.js, and lib/ runs instead (docs/decisions/0235).
 */
function bundleIsFresh() {
  const at = (rel) => statSync(new URL(rel, import.meta.url), { throwIfNoEntry: false })?.mtimeMs;
  const built = at("../lib/cli-bundle/main.cjs");
  const lib = at("../lib/cli/main.js");
  return built !== undefined && (lib === undefined || built >= lib);
}
