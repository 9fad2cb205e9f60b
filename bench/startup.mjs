// The CLI's start-up against bare Node (issue 31: `evalgate --version` and `evalgate validate` of
// the quickstart within 1.5× of `node -e 0`). Every command runs once per round, in the same order,
// so that a busy machine slows them alike; it prints min / median / max of the wall time and the
// ratio of each to bare Node's figure of the same run. "validate, unbundled" is the same command
// from lib/ (what bin/evalgate.js ran before lib/cli-bundle/: docs/decisions/0235).
// Run: npm run build && node bench/startup.mjs [rounds]
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";

const rounds = Number(process.argv[2] ?? 20);
const bin = fileURLToPath(new URL("../bin/evalgate.js", import.meta.url));
const libMain = fileURLToPath(new URL("../lib/cli/main.js", import.meta.url));
const quickstart = fileURLToPath(new URL("../examples/quickstart", import.meta.url));
const unbundled = `const { main } = await import(${JSON.stringify(libMain)}); process.exitCode = await main(process.argv.slice(1));`;
const cases = {
  "node -e 0": ["-e", "0"],
  "evalgate --version": [bin, "--version"],
  "evalgate --help": [bin, "--help"],
  "evalgate validate": [bin, "validate", quickstart],
  "validate, unbundled": ["--input-type=module", "-e", unbundled, "validate", quickstart],
};
if (!existsSync(fileURLToPath(new URL("../lib/cli-bundle/main.js", import.meta.url))))
  console.log("lib/cli-bundle/ is missing (rolldown not installed?): every command runs from lib/");
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let i = 0; i < rounds; i++) {
  for (const [name, args] of Object.entries(cases)) {
    const t = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { stdio: "ignore" });
    if (r.status !== 0) throw new Error(`${name} exited ${r.status}`);
    times[name].push(Number(process.hrtime.bigint() - t) / 1e6);
  }
}
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => sorted(xs)[Math.floor(xs.length / 2)];
const [load] = os.loadavg();
console.log(
  `start-up, ${rounds} rounds, Node ${process.version}, ${os.cpus().length} CPUs, load ${load.toFixed(1)}`,
);
const base = { min: Math.min(...times["node -e 0"]), median: median(times["node -e 0"]) };
for (const [name, xs] of Object.entries(times)) {
  const s = sorted(xs);
  const [min, med, max] = [s[0], median(s), s.at(-1)];
  console.log(
    `${name.padEnd(20)} min ${min.toFixed(0).padStart(5)} ms  median ${med.toFixed(0).padStart(5)} ms  max ${max.toFixed(0).padStart(5)} ms  ${(med / base.median).toFixed(2)}× bare node (median; min ${(min / base.min).toFixed(2)}×)`,
  );
}
