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
  const { main } = await import(cliEntry());
  process.exitCode = await main(args);
}

/**
 * The bundled CLI (lib/cli-bundle/, scripts/bundle-cli.mjs) when it was built from the lib/ that is
 * here, else lib/ itself: a tsc run after the bundle (a watch, a build without rolldown) leaves
 * it older than lib/cli/main.js, and it is not used (docs/decisions/0235).
 */
function cliEntry() {
  const lib = new URL("../lib/cli/main.js", import.meta.url);
  const bundle = new URL("../lib/cli-bundle/main.js", import.meta.url);
  const built = statSync(bundle, { throwIfNoEntry: false });
  const fresh = built && built.mtimeMs >= statSync(lib).mtimeMs;
  return (fresh ? bundle : lib).href;
}
