#!/usr/bin/env node
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
  const { main } = await import("../lib/cli/main.js");
  process.exitCode = await main(args);
}
