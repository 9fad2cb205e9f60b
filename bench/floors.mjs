/**
 * bench/floors: `npm run bench`. evalgate as shipped against two floors, side by side in one run
 * (issue 31): the plain floor and the isolated floor, both bench/floor.sh (a shell script doing the
 * same workload: the start tree once, then per attempt a copy of it, the agent, the diff, the
 * grader, a result file). The isolated floor runs setup, agent and grader under bubblewrap, as
 * evalgate does. AgentV 4.42.4 joins the 40 × 3 suite when it is installed.
 *
 * Every side is timed end to end (setup included: each side runs it once). Each round runs every
 * side once, the order rotated from round to round; a ratio is the median of the rounds' ratios,
 * with their range, because on a shared machine runs spread more than the difference measured.
 *
 *   node bench/floors.mjs [--rounds N] [--quick] [--suites small,large,ignored,npm,tiny]
 *                         [--dir FOLDER] [--results FOLDER]
 *
 * `--quick`: 2 rounds and smaller suites. `--results`: keep the floors' result files there.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GIT_ENV } from "./git-env.mjs";
import { NPM_GRADER, NPM_SETUP, writeNpmProject } from "./npm-project.mjs";
import { CLI, median, runAgentv, runEvalgate, timedRun, writeAgentvSuite, writeSuite } from "./paired.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FLOOR = path.join(HERE, "floor.sh");
const AGENTV_VERSION = "4.42.4";

// The agent and grader say which host they ran on: the isolated floor's say `evalgate-floor`.
const AGENT =
  '#!/bin/sh\necho "$EVALGATE_TEST_ID $EVALGATE_ATTEMPT $(cat /proc/sys/kernel/hostname)" > answer.txt\n';
const GRADER = "#!/bin/sh\ntest -s answer.txt && cat /proc/sys/kernel/hostname\n";

export function parseArgs(argv) {
  const o = {
    rounds: undefined,
    quick: false,
    suites: undefined,
    dir: process.env.BENCH_DIR,
    results: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--quick") o.quick = true;
    else if (a === "--rounds") o.rounds = Number(value());
    else if (a === "--suites") o.suites = value().split(",");
    else if (a === "--dir") o.dir = value();
    else if (a === "--results") o.results = path.resolve(value());
    else throw new Error(`unknown option ${a} (known: --rounds N, --quick, --suites a,b, --dir, --results)`);
  }
  if (o.rounds !== undefined && !(Number.isInteger(o.rounds) && o.rounds >= 1))
    throw new Error("--rounds needs a whole number of at least 1");
  o.rounds ??= o.quick ? 2 : 5;
  o.suites ??= ["small", "large", "ignored", "npm"];
  return o;
}

/** The suites, by name; `tiny` (for the unit test) runs only when named. */
function suiteSpecs(quick) {
  const ignored = quick ? 10_000 : 50_000;
  return {
    tiny: { label: "2 tests × 1 attempt, 20 files", files: 20, tests: 2, repeat: 1 },
    small: { label: "40 tests × 3 attempts, 200 files", files: 200, tests: 40, repeat: 3 },
    large: { label: "2,000-file repository", files: 2000, tests: quick ? 5 : 10, repeat: 4 },
    ignored: {
      label: `${ignored.toLocaleString("en")}-file ignored tree made by setup`,
      files: 50,
      tests: quick ? 2 : 4,
      repeat: 2,
      setup: `{EVAL_DIR}/make-ignored.sh ${ignored}`,
    },
    npm: {
      label: "setup: npm ci",
      files: 50,
      tests: quick ? 2 : 5,
      repeat: quick ? 2 : 3,
      setup: NPM_SETUP,
      npm: true,
    },
  };
}

/** The eval folder: `project/` (the seed), the agent, the grader, the eval file. Returns why not, if not. */
function writeEval(dir, spec) {
  mkdirSync(dir, { recursive: true });
  if (spec.npm) {
    const npm = writeNpmProject(dir);
    if (npm.why) return npm.why;
    spec.label = `setup: npm ci of this repository's ${npm.packages} runtime packages, from a local cache`;
  }
  const { files, tests, repeat, setup } = spec;
  writeSuite(dir, { files, tests, repeat, setup, agent: AGENT, grader: spec.npm ? NPM_GRADER : GRADER });
  return undefined;
}

/** Whether bubblewrap can make the isolated floor's namespaces here. */
function bwrapWorks() {
  const r = spawnSync("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "/bin/true"]);
  return r.status === 0;
}

/**
 * One run of bench/floor.sh; resolves with its wall ms once its result files are checked: one per
 * attempt, each passed, and (isolated) agent and grader on the floor's own host.
 */
async function runFloor(mode, dir, spec, keep) {
  const out = path.join(dir, `floor-${mode}`);
  const setup = spec.setup?.replaceAll("{EVAL_DIR}", dir) ?? "";
  const ms = await timedRun(FLOOR, [mode, dir, out, String(spec.tests), String(spec.repeat), "2"], {
    env: {
      ...GIT_ENV,
      FLOOR_AGENT: path.join(dir, "agent.sh"),
      FLOOR_GRADER: path.join(dir, "grade.sh"),
      FLOOR_SETUP: setup,
    },
  });
  const files = readdirSync(path.join(out, "results"));
  const results = files.map((f) => JSON.parse(readFileSync(path.join(out, "results", f), "utf8")));
  const attempts = spec.tests * spec.repeat;
  const bad = results.filter(
    (r) =>
      r.status !== "passed" ||
      (mode === "isolated" && !(r.grader_said === "evalgate-floor" && r.answer.endsWith("evalgate-floor"))),
  );
  if (results.length !== attempts || bad.length > 0)
    throw new Error(
      `${mode} floor: ${results.length} results of ${attempts}, not as expected: ${JSON.stringify(bad[0] ?? {})}`,
    );
  if (keep) cpSync(path.join(out, "results"), path.join(keep, `${mode}-floor`), { recursive: true });
  rmSync(out, { recursive: true, force: true });
  return ms;
}

/** The AgentV CLI when version 4.42.4 is installed (BENCH_AGENTV, this repository's node_modules, PATH). */
function findAgentv() {
  const local = path.join(HERE, "..", "node_modules", ".bin", "agentv");
  for (const program of [process.env.BENCH_AGENTV, existsSync(local) ? local : undefined, "agentv"]) {
    if (!program) continue;
    try {
      const version = execFileSync(program, ["--version"], {
        encoding: "utf8",
        timeout: 60_000,
        stdio: ["ignore", "pipe", "ignore"],
      });
      return { program, version: version.trim().split("\n").at(-1), ok: version.includes(AGENTV_VERSION) };
    } catch {}
  }
  return undefined;
}

/** Runs each side once per round, the order rotated every round; returns each side's times. */
async function alternate(sides, rounds) {
  const times = sides.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < sides.length; k++) {
      const i = (r + k) % sides.length;
      times[i].push(await sides[i].run());
    }
    // Progress: a full run takes long on a loaded machine.
    console.log(
      `    round ${r + 1}/${rounds}: ${sides.map((side, i) => `${side.name} ${s(times[i][r])} s`).join(", ")}`,
    );
  }
  return times;
}

const s = (ms) => (ms / 1000).toFixed(2);
function ratio(a, b) {
  if (!a || !b) return "—";
  const r = a.map((x, i) => x / b[i]);
  return `${median(r).toFixed(2)} (${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)})`;
}

/** One suite: every side in alternating rounds; returns its table rows (or a line saying why not). */
async function runSuite(base, name, spec, ctx) {
  const dir = path.join(base, name);
  const why = writeEval(dir, spec);
  if (why) return { skipped: `${spec.label}: skipped: ${why}` };
  const attempts = spec.tests * spec.repeat;
  const keep = ctx.results ? path.join(ctx.results, name) : undefined;
  const sides = [
    {
      name: "evalgate",
      run: async () => {
        const e = await runEvalgate(dir);
        const bad = e.runs.filter((r) => r.status !== "passed");
        if (e.runs.length !== attempts || bad.length)
          throw new Error(
            `${spec.label}: evalgate made ${e.runs.length} attempts of ${attempts}, ${bad.length} not passed`,
          );
        return e.ms;
      },
    },
    { name: "plain floor", run: () => runFloor("plain", dir, spec, keep) },
  ];
  if (ctx.isolated) sides.push({ name: "isolated floor", run: () => runFloor("isolated", dir, spec, keep) });
  if (ctx.agentv && name === "small") {
    writeAgentvSuite(dir, spec.tests, spec.repeat);
    sides.push({ name: `AgentV ${AGENTV_VERSION}`, run: () => runAgentv(ctx.agentv.program, dir, attempts) });
  }
  const times = await alternate(sides, ctx.rounds);
  const [eg, plain, iso] = [times[0], times[1], ctx.isolated ? times[2] : undefined];
  rmSync(dir, { recursive: true, force: true });
  const label = `${spec.label} (${attempts} attempts)`;
  return {
    rows: sides.map((side, i) => {
      const t = times[i];
      const vsEvalgate = i === 0 || side.name !== `AgentV ${AGENTV_VERSION}` ? "—" : ratio(t, eg);
      return `| ${i === 0 ? label : ""} | ${side.name} | ${s(Math.min(...t))} | ${s(median(t))} | ${s(Math.max(...t))} | ${i === 1 ? "1" : ratio(t, plain)} | ${i === 2 && iso ? "1" : ratio(t, iso)} | ${vsEvalgate} |`;
    }),
  };
}

export async function floors(argv = []) {
  const o = parseArgs(argv);
  const specs = suiteSpecs(o.quick);
  for (const n of o.suites)
    if (!(n in specs)) throw new Error(`unknown suite ${n} (known: ${Object.keys(specs).join(", ")})`);
  const base = mkdtempSync(path.join(o.dir || os.tmpdir(), "evalgate-floors-"));
  const isolated = bwrapWorks();
  const found = findAgentv();
  const ctx = { rounds: o.rounds, isolated, agentv: found?.ok ? found : undefined, results: o.results };
  console.log(
    `evalgate against its floors: ${o.rounds} round(s), sides alternating; ${os.cpus().length} CPUs; 1-minute load at start ${os.loadavg()[0].toFixed(2)}; node ${process.version}; folder ${base}`,
  );
  console.log(
    `evalgate: ${CLI} run (concurrency 2, workspaces deleted, its bundle written), setup included.`,
  );
  console.log(
    "plain floor: bench/floor.sh — copy of the seed, git init, setup, start commit; per attempt (2 at a time) cp -a of the start tree, the agent, git add -A && git diff --cached --binary, the grader, one result file, rm -rf.",
  );
  console.log(
    isolated
      ? "isolated floor: the same, with setup, agent and grader each under bubblewrap (new namespaces, no network, system and PATH folders read-only, the eval folder read-only, workspace/HOME/TMPDIR writable, private /tmp)."
      : "isolated floor: not run (bubblewrap cannot make namespaces here)",
  );
  const skipped = [];
  const rows = [];
  try {
    for (const name of o.suites) {
      const t = performance.now();
      let r;
      try {
        r = await runSuite(base, name, specs[name], ctx);
      } catch (e) {
        // A side that did not do its work has no figure; the other suites still run.
        r = { skipped: `${specs[name].label}: FAILED: ${e instanceof Error ? e.message : e}` };
        process.exitCode = 1;
      }
      if (r.skipped) skipped.push(r.skipped);
      else rows.push(...r.rows);
      console.log(
        `  ${specs[name].label}: ${r.skipped ? "not measured" : "done"} (${((performance.now() - t) / 1000).toFixed(0)} s)`,
      );
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  console.log(
    "\n| suite | side | min (s) | median (s) | max (s) | ÷ plain floor | ÷ isolated floor | ÷ evalgate |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const row of rows) console.log(row);
  console.log("\nratios: median of the rounds' ratios (range).");
  for (const line of skipped) console.log(line);
  if (!found) console.log(`AgentV not installed (npm i -g agentv@${AGENTV_VERSION} to compare)`);
  else if (!found.ok)
    console.log(
      `AgentV ${found.version} is installed, not ${AGENTV_VERSION}: not compared (npm i -g agentv@${AGENTV_VERSION} to compare)`,
    );
  else if (!o.suites.includes("small")) console.log("AgentV: runs with the small suite only (not chosen)");
  console.log(`1-minute load at end ${os.loadavg()[0].toFixed(2)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    await floors(process.argv.slice(2));
  } catch (e) {
    console.error(`bench/floors: ${e instanceof Error ? e.message : e}`);
    process.exit(1);
  }
}
