#!/usr/bin/env node
import { statSync } from "node:fs";
import module from "node:module";
import { setFlagsFromString } from "node:v8";

const args = process.argv.slice(2);
// A run's live data is small (20–40 MB) and its garbage plentiful: by default V8 lets the heap grow
// to several times the live data before a full collection, so peak memory grew with the run's
// length. This keeps it near the live data, at no measured cost in speed (docs/decisions/0177).
// A plain validate runs nothing: its heap is the eval files, and the flag doubled the time it took
// to read a large one (docs/performance.md).
if (!(args[0] === "validate" && !args.includes("--solvable"))) setFlagsFromString("--optimize-for-size");
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // The one answer that needs no command parser: keeps `evalgate --version` at bare Node's start-up.
  const { VERSION } = await import("../lib/version.js");
  process.stdout.write(`${VERSION}\n`);
} else {
  // Node ≥ 22.1 keeps the compiled code of the modules below between runs (in the system temp
  // folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off). Node 20 has no such cache.
  module.enableCompileCache?.();
  // Two literal import()s, not one computed one: a bundler of this file (ncc) can follow them.
  const { main } = await (bundleIsFresh()
    ? import("../lib/cli-bundle/main.js")
    : import("../lib/cli/main.js"));
  process.exitCode = await main(args);
}

/**
 * Whether to run the bundled CLI (lib/cli-bundle/, scripts/bundle-cli.mjs): it is there and was
 * built from the lib/ that is here. A tsc run after the bundle (a watch, a build without rolldown)
 * leaves it older than lib/cli/main.js, and lib/ runs instead (docs/decisions/0235).
 */
function bundleIsFresh() {
  const at = (rel) => statSync(new URL(rel, import.meta.url), { throwIfNoEntry: false })?.mtimeMs;
  const built = at("../lib/cli-bundle/main.js");
  const lib = at("../lib/cli/main.js");
  return built !== undefined && (lib === undefined || built >= lib);
}
