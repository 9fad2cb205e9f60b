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
/**
 * fdir (tinyglobby's crawler) tries to require picomatch from node_modules when it is loaded, for its
 * own glob() that tinyglobby never calls (it gives fdir its filters): in the bundle that one
 * require read and compiled four files of node_modules on every start. Left as it is when fdir's
 * text changes.
 */
const fdirWithoutOptionalPicomatch = {
  name: "fdir-without-optional-picomatch",
  transform(code, id) {
    if (!/[\\/]node_modules[\\/]fdir[\\/]/.test(id)) return null;
    const optional = '__require.resolve("picomatch");\n\tpm = __require("picomatch");';
    return code.includes(optional) ? code.replace(optional, "") : null;
  },
};

rmSync(OUT, { recursive: true, force: true });
await rolldown.build({
  input: { main: "lib/cli/main.js" },
  platform: "node",
  plugins: [fdirWithoutOptionalPicomatch],
  // ast-grep's native binding and parsers are found at run time (scorers/ast-grep-native.ts).
  external: [/^@ast-grep\//],
  logLevel: "warn",
  output: {
    dir: OUT,
    // CommonJS: on Node 20, bin/code-cache.js compiles each chunk as a vm.Script with V8's code
    // cache, which only a script (not an ES module) can be given (docs/decisions/0221).
    format: "cjs",
    // The sources are ES modules, strict throughout (as the ESM bundle before was): so is each chunk.
    strict: true,
    // A chunk run as a vm.Script has no ES module loader: its `import()` of a node: module or an
    // external package would throw "A dynamic import callback was not specified" on Node 20. As
    // require()s they load as every other module of the chunk does.
    dynamicImportInCjs: false,
    entryFileNames: "[name].cjs",
    chunkFileNames: "[name]-[hash].cjs",
    // Each command file stays one chunk: `evalgate validate` does not compile `run`'s pipeline.
    minify: false,
  },
});
