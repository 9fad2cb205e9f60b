// Bundles the CLI (lib/cli/main.js and everything it imports, dependencies included) into
// lib/cli-bundle/, which bin/evalgate.js loads instead of lib/ when it is at least as new as
// lib/cli/main.js. Node spent most of the CLI's start-up resolving, reading and compiling ~380
// module files one by one; a bundle is a few files. Each command's import() stays its own chunk, so
// a command still loads only what it needs (docs/decisions/0235).
// `npm run build` runs it after tsc; so does `prepare`. Without rolldown (an install without
// devDependencies) it says so and exits 0: the CLI then runs from lib/ as before.
// Usage: node scripts/bundle-cli.mjs
import { rmSync } from "node:fs";

const OUT = "lib/cli-bundle";
let rolldown;
try {
  rolldown = await import("rolldown");
} catch {
  process.stderr.write(
    "evalgate bundle-cli: rolldown is not installed (a devDependency); the CLI runs from lib/\n",
  );
  process.exit(0);
}
rmSync(OUT, { recursive: true, force: true });
await rolldown.build({
  input: { main: "lib/cli/main.js" },
  platform: "node",
  // ast-grep's native binding and parsers are found at run time (scorers/ast-grep-native.ts).
  external: [/^@ast-grep\//],
  logLevel: "warn",
  output: {
    dir: OUT,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    // Each command file stays one chunk: `evalgate validate` does not compile `run`'s pipeline.
    minify: false,
  },
});
