// npm's `prepare`: runs after `npm install` / `npm ci` in a clone, before `npm pack` / `npm publish`,
// and when npm installs evalgate from a git URL (npm installs the devDependencies for that). It
// builds lib/ with tsc, the only build step the CLI needs, then the bundled CLI in lib/cli-bundle/
// (scripts/bundle-cli.mjs: a faster start, docs/decisions/0235). In a clone installed with
// `--omit=dev` there is no tsc: it says so and exits 0, so the runtime dependencies still install.
// A tarball install (npm install evalgate, or ./evalgate-x.y.z.tgz) runs no script at all: lib/ is
// in the package. See docs/decisions/0110.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

await import("./unlink-node-bin.mjs");

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  const built = existsSync("lib/cli/main.js");
  process.stderr.write(
    `evalgate prepare: typescript is not installed (a devDependency), so lib/ was not built${built ? "; the existing lib/ is used" : ": run npm install (with devDependencies) and npm run build to use the CLI from this clone"}\n`,
  );
  process.exit(0);
}
const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { stdio: "inherit" });
if (r.status !== 0) process.exit(r.status ?? 1);
const b = spawnSync(process.execPath, ["scripts/bundle-cli.mjs"], { stdio: "inherit" });
process.exit(b.status ?? 1);
