// `evalgate --version` against bare Node (issue 18.5: within 1.5×). Alternating runs, the median of
// each. Run: npm run build && node bench/startup.mjs [runs]
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const runs = Number(process.argv[2] ?? 30);
const bin = fileURLToPath(new URL("../bin/evalgate.js", import.meta.url));
const cases = {
  "node -e 0": [process.execPath, ["-e", "0"]],
  "evalgate --version": [process.execPath, [bin, "--version"]],
  "evalgate --help": [process.execPath, [bin, "--help"]],
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let i = 0; i < runs; i++) {
  for (const [name, [cmd, args]] of Object.entries(cases)) {
    const t = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { stdio: "ignore" });
    if (r.status !== 0) throw new Error(`${name} exited ${r.status}`);
    times[name].push(Number(process.hrtime.bigint() - t) / 1e6);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times["node -e 0"]);
for (const [name, xs] of Object.entries(times)) {
  const m = median(xs);
  console.log(`${name.padEnd(20)} median ${m.toFixed(1)} ms  ${(m / base).toFixed(2)}× bare node`);
}
