/**
 * `node bench/run.mjs [name...]`: runs `paired` and `scale` (or those named: `node bench/run.mjs overhead`)
 * and prints their figures. `npm run bench` runs bench/floors.mjs (also `node bench/run.mjs floors`).
 * Benchmarks report; they never fail on a number.
 */
import { environments } from "./environments.mjs";
import { floors } from "./floors.mjs";
import { overhead } from "./overhead.mjs";
import { paired } from "./paired.mjs";
import { scale } from "./scale.mjs";

const BENCHES = { floors, paired, scale, overhead, environments };
/** Run when none is named: `floors` (`npm run bench`), `overhead` (in-process, floors unpaired) and `environments` (needs an engine) only by name. */
const DEFAULT = ["paired", "scale"];

const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!(name in BENCHES)) {
    console.error(`unknown benchmark ${name} (known: ${Object.keys(BENCHES).join(", ")})`);
    process.exit(2);
  }
}
for (const [name, bench] of Object.entries(BENCHES)) {
  if (!(wanted.length > 0 ? wanted : DEFAULT).includes(name)) continue;
  const t = performance.now();
  await bench();
  console.log(`  (${name}: ${((performance.now() - t) / 1000).toFixed(0)} s)\n`);
}
