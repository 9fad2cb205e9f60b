// The CLI's start-up against bare Node (issue 31: `evalgate --version` and `evalgate validate` of
// the quickstart within 1.5× of `node -e 0`). Every command runs once per round, in the same order,
// so that a busy machine slows them alike; it prints min / median / max of the wall time and the
// ratio of each to bare Node's figure of the same run. "validate, no code cache" runs the bundle
// compiled from source on every start (NODE_DISABLE_COMPILE_CACHE=1: what ran before decision 0221
// on Node 20); "validate, unbundled" runs it from lib/ (before lib/cli-bundle/: decision 0235).
// "floor: YAML + schema" is bench/startup-floor.mjs: only reading the quickstart's eval file and
// checking it against the eval-file schema, bundled and code-cached as the CLI is.
// STARTUP_COMPARE=<another checkout's bin/evalgate.js> adds its validate (say, main's before a change).
// Run: npm run build && node bench/startup.mjs [rounds]
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const rounds = Number(process.argv[2] ?? 20);
const bin = fileURLToPath(new URL("../bin/evalgate.js", import.meta.url));
const libMain = fileURLToPath(new URL("../lib/cli/main.js", import.meta.url));
const quickstart = fileURLToPath(new URL("../examples/quickstart", import.meta.url));
const unbundled = `const { main } = await import(${JSON.stringify(libMain)}); process.exitCode = await main(process.argv.slice(1));`;
const floor = await floorRunner();
const noCache = { ...process.env, NODE_DISABLE_COMPILE_CACHE: "1" };
const cases = {
  "node -e 0": [["-e", "0"]],
  "evalgate --version": [[bin, "--version"]],
  "evalgate --help": [[bin, "--help"]],
  "evalgate validate": [[bin, "validate", quickstart]],
  "validate, no code cache": [[bin, "validate", quickstart], noCache],
  "validate, unbundled": [["--input-type=module", "-e", unbundled, "validate", quickstart]],
  ...(process.env.STARTUP_COMPARE && {
    "validate, STARTUP_COMPARE": [[process.env.STARTUP_COMPARE, "validate", quickstart]],
  }),
  ...(floor && { "floor: YAML + schema": [[floor, path.join(quickstart, "quickstart.eval.yaml")]] }),
};
if (!existsSync(fileURLToPath(new URL("../lib/cli-bundle/main.cjs", import.meta.url))))
  console.log("lib/cli-bundle/ is missing (rolldown not installed?): every command runs from lib/");
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const cpu = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
// One run of each first, not timed: writes the code caches a first run writes.
for (const [name, [args, env]] of Object.entries(cases)) run(name, args, env);
for (let i = 0; i < rounds; i++) {
  for (const [name, [args, env]] of Object.entries(cases)) {
    times[name].push(run(name, args, env));
    cpu[name].push(cpuTime(name, args, env));
  }
}
if (floor) rmSync(path.dirname(floor), { recursive: true, force: true });
/** Runs one case; its wall time in ms. */
function run(name, args, env = process.env) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: "ignore", env });
  if (r.status !== 0) throw new Error(`${name} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/**
 * Runs one case under sh and returns the user + system CPU time of its process (sh's `times`, in
 * clock ticks): on a shared machine it moves far less with the load than the wall time does.
 */
function cpuTime(name, args, env = process.env) {
  const script = '"$@" >/dev/null 2>&1; s=$?; times; exit $s';
  const r = spawnSync("sh", ["-c", script, "sh", process.execPath, ...args], { encoding: "utf8", env });
  if (r.status !== 0) throw new Error(`${name} exited ${r.status}`);
  const children = r.stdout.trim().split("\n").at(-1);
  const [user, sys] = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map(
    (m) => Number(m[1]) * 60e3 + Number(m[2]) * 1e3,
  );
  return user + sys;
}

/** bench/startup-floor.mjs bundled as the CLI is, and a runner that loads it as bin/evalgate.js does. */
async function floorRunner() {
  let rolldown;
  try {
    rolldown = await import("rolldown");
  } catch {
    console.log("rolldown is not installed: no floor");
    return undefined;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "evalgate-startup-floor-"));
  await rolldown.build({
    input: { main: fileURLToPath(new URL("startup-floor.mjs", import.meta.url)) },
    platform: "node",
    logLevel: "warn",
    output: { dir, format: "cjs", strict: true, entryFileNames: "[name].cjs", codeSplitting: false },
  });
  const loader = fileURLToPath(new URL("../lib/cli/code-cache.js", import.meta.url));
  const runner = path.join(dir, "run.mjs");
  writeFileSync(
    runner,
    `const { loadWithCodeCache } = await import(${JSON.stringify(loader)});\n` +
      `const { main } = loadWithCodeCache(${JSON.stringify(dir)}, "default");\n` +
      "process.exitCode = await main(process.argv.slice(2));\n",
  );
  return runner;
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => sorted(xs)[Math.floor(xs.length / 2)];
const [load] = os.loadavg();
console.log(
  `start-up, ${rounds} rounds, Node ${process.version}, ${os.cpus().length} CPUs, load ${load.toFixed(1)}`,
);
for (const [what, table] of [
  ["wall time", times],
  ["CPU time (user + system)", cpu],
]) {
  console.log(what);
  const base = { min: Math.min(...table["node -e 0"]), median: median(table["node -e 0"]) };
  for (const [name, xs] of Object.entries(table)) {
    const s = sorted(xs);
    const [min, med, max] = [s[0], median(s), s.at(-1)];
    console.log(
      `  ${name.padEnd(26)} min ${min.toFixed(0).padStart(5)} ms  median ${med.toFixed(0).padStart(5)} ms  max ${max.toFixed(0).padStart(5)} ms  ${(med / base.median).toFixed(2)}× bare node (median; min ${(min / base.min).toFixed(2)}×)`,
    );
  }
}
console.log(`load at the end ${os.loadavg()[0].toFixed(1)}`);
