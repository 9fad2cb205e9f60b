#!/usr/bin/env node
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // The one answer that needs no command parser: keeps `evalgate --version` at bare Node's start-up.
  const { VERSION } = await import("../lib/version.js");
  process.stdout.write(`${VERSION}\n`);
} else {
  const { main } = await import("../lib/cli/main.js");
  process.exitCode = await main(args);
}
