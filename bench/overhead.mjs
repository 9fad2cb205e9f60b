/**
 * bench/overhead: what evalgate adds to each attempt, next to a floor measured in the same run.
 *
 * 1. A 2,000-file repository: evalgate's per-attempt harness overhead (materialize + baseline +
 *    diff + bundle, with the noop agent and a `true` scorer; the once-per-run baseline amortized
 *    over the attempts) against the floor `git clone --local` + `git add -A` +
 *    `git diff --cached --binary` of the same repository. Target: within 1.5x.
 * 2. A workspace whose setup makes a 50,000-file node_modules: evalgate's per-attempt overhead
 *    (the setup itself left out: it runs once per run) against the best plain copy of the same
 *    prepared tree. Target: within 1.5x.
 *
 * Figures, not pass/fail. Floors are measured before and after evalgate's attempts, so a machine
 * that gets busier during the run weighs on both sides. Sizes: BENCH_REPO_FILES, BENCH_NM_FILES,
 * BENCH_ATTEMPTS; folder: BENCH_DIR (default: the system temp folder, where workspaces go).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { MemoryLogger } from "../lib/log.js";
import { runEvals } from "../lib/pipeline/run.js";
import { SilentProgress } from "../lib/report/console.js";
import { ChildProcessRunner } from "../lib/sandbox/process.js";
import { sh } from "./git-env.mjs";

const REPO_FILES = Number(process.env.BENCH_REPO_FILES ?? 2000);
const NM_FILES = Number(process.env.BENCH_NM_FILES ?? 50_000);
const ATTEMPTS = Number(process.env.BENCH_ATTEMPTS ?? 8);

function timed(fn) {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

/**
 * Writes the page cache back before a measured series, so that no series pays for the disk writes
 * of the one before it (deleting trees and copying them both leave dirty pages behind).
 */
function settle() {
  execFileSync("sync");
}

/** Times `count` runs of `make(dst)` into fresh folders, then removes them (untimed). */
function series(root, count, make) {
  settle();
  const dsts = Array.from({ length: count }, (_, i) => path.join(root, `copy-${i}`));
  const times = dsts.map((dst) => timed(() => sh(make(dst), root)));
  for (const dst of dsts) rmSync(dst, { recursive: true, force: true });
  return times;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const ms = (x) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`);
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
/** "1.2 s (1.1 s – 1.4 s)": a median with the range it came from, so noise shows. */
const spread = (xs) =>
  xs.length > 1 ? `${ms(median(xs))} (${ms(Math.min(...xs))} – ${ms(Math.max(...xs))})` : ms(xs[0]);

/** A source tree of `n` small files in 50 folders, like a mid-sized service. */
function writeSourceTree(dir, n) {
  for (let i = 0; i < n; i++) {
    const folder = path.join(dir, "src", `module${i % 50}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      path.join(folder, `file${i}.ts`),
      `// file ${i}\n${`export const value${i} = ${i};\n`.repeat(20)}`,
    );
  }
}

const MAKE_NODE_MODULES = `// Writes N package files into node_modules, as an install would, and records how long it took.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
const [n, record] = [Number(process.argv[2]), process.argv[3]];
const t = performance.now();
for (let i = 0; i < n; i++) {
  const dir = path.join("node_modules", \`pkg\${Math.floor(i / 50)}\`, "lib");
  if (i % 50 === 0) mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, \`f\${i % 50}.js\`), \`module.exports = \${i};\\n\${"// ".padEnd(600, "x")}\\n\`);
}
if (record) writeFileSync(record, String(performance.now() - t));
`;

function evalFile({ seed, setup, repeat }) {
  return `name: overhead
repeat: ${repeat}
concurrency: 1
targets:
  - { name: noop, provider: noop }
workspace:
  seed: ${seed}
${setup ? `  setup: { command: ${JSON.stringify(setup)} }\n` : ""}tests:
  - id: overhead
    instruction: Change nothing.
    scorers:
      - { name: "true", type: command, run: "true" }
`;
}

/** Runs evalgate on `evalDir`; returns the wall time and the attempts' result records. */
async function runEvalgate(evalDir, workDir) {
  const out = path.join(workDir, "bundle");
  const t = performance.now();
  // Workspaces are kept (and removed after the clock stops), as the floor's copies are: deleting a
  // tree is measured on its own below.
  const outcome = await runEvals(
    { cwd: evalDir, paths: ["."], out, workDir: path.join(workDir, "work"), keepWorkspaces: true },
    { runner: new ChildProcessRunner(), progress: new SilentProgress(), logger: new MemoryLogger() },
  );
  const wallMs = performance.now() - t;
  const results = outcome.rows.flatMap((row) =>
    row.runs.map((r) => JSON.parse(readFileSync(path.join(out, r.result_path), "utf8"))),
  );
  for (const r of results) {
    if (r.status === "error" || r.status === "timeout")
      throw new Error(`unexpected attempt outcome: ${r.status} ${r.message}`);
  }
  rmSync(out, { recursive: true, force: true });
  const attempts = path.join(workDir, "work", "attempts");
  const [caseDir] = readdirSync(attempts);
  const [first] = readdirSync(path.join(attempts, caseDir));
  const cleanupMs = timed(() =>
    rmSync(path.join(attempts, caseDir, first), { recursive: true, force: true }),
  );
  rmSync(workDir, { recursive: true, force: true });
  return { wallMs, results, cleanupMs };
}

function breakdown(results) {
  const pick = (f) => ms(median(results.map(f)));
  return `materialize ${pick((r) => r.phases.workspace_ms)}, diff ${pick((r) => r.phases.diff_ms)}, scorer ${pick((r) => r.phases.scorers_ms)}, whole attempt ${pick((r) => r.duration_ms)} (medians)`;
}

async function repository2000(root) {
  const repo = path.join(root, "repo");
  writeSourceTree(repo, REPO_FILES);
  writeFileSync(path.join(repo, "README.md"), "bench\n");
  sh("git init -q -b main . && git add -A && git commit -qm initial && git gc -q", repo);

  const floor = (dst) =>
    `git clone -q --local ${repo} ${dst} && cd ${dst} && git add -A && git diff --cached --binary HEAD`;
  const floors = series(root, ATTEMPTS / 2, floor);

  const evalDir = path.join(root, "evals");
  mkdirSync(evalDir);
  writeFileSync(
    path.join(evalDir, "overhead.eval.yaml"),
    evalFile({ seed: `{ git: { url: ${JSON.stringify(repo)} } }`, repeat: ATTEMPTS }),
  );
  settle();
  const run = await runEvalgate(evalDir, path.join(root, "run"));
  floors.push(...series(root, ATTEMPTS / 2, floor));

  const floorMs = median(floors);
  const perAttempt = run.wallMs / ATTEMPTS;
  console.log(`  ${REPO_FILES.toLocaleString("en")}-file repository (${ATTEMPTS} attempts)`);
  console.log(`    floor: git clone --local + git add -A + git diff --cached --binary   ${spread(floors)}`);
  console.log(
    `    evalgate per attempt (whole run / attempts: baseline, materialize, diff, bundle)   ${ms(perAttempt)}   ${ratio(perAttempt, floorMs)} of the floor (target ≤ 1.5x)`,
  );
  console.log(
    `      ${breakdown(run.results)}; removing an attempt's workspace afterwards ${ms(run.cleanupMs)}`,
  );
  return { floorMs, perAttempt };
}

async function nodeModules50k(root) {
  const evalDir = path.join(root, "evals");
  const app = path.join(evalDir, "app");
  writeSourceTree(app, 50);
  writeFileSync(path.join(app, ".gitignore"), "node_modules/\n");
  writeFileSync(path.join(evalDir, "make-node-modules.mjs"), MAKE_NODE_MODULES);
  const setupRecord = path.join(root, "setup-ms");
  const repeat = Math.max(2, Math.round(ATTEMPTS / 3));
  writeFileSync(
    path.join(evalDir, "overhead.eval.yaml"),
    evalFile({
      seed: "{ path: app }",
      setup: `node {EVAL_DIR}/make-node-modules.mjs ${NM_FILES} ${setupRecord}`,
      repeat,
    }),
  );

  // The same prepared tree, made the same way, for the plain copies.
  const tree = path.join(root, "tree");
  sh(
    `cp -a ${app} ${tree} && cd ${tree} && node ${path.join(evalDir, "make-node-modules.mjs")} ${NM_FILES}`,
    root,
  );
  sh("git init -q -b main . && git add -A && git commit -qm baseline && git gc -q", tree);
  const copies = {
    "cp -a --reflink=auto": (dst) => `cp -a --reflink=auto ${tree} ${dst}`,
    "tar | tar": (dst) =>
      `mkdir ${dst} && tar -c -f - --numeric-owner -C ${tree} . | tar -x -p -f - --numeric-owner -C ${dst}`,
  };
  settle();
  const hardLinks = path.join(root, "links");
  const linkMs = timed(() => sh(`cp -al ${tree} ${hardLinks}`, root));
  rmSync(hardLinks, { recursive: true, force: true });

  const copyTimes = Object.fromEntries(Object.keys(copies).map((k) => [k, []]));
  const round = () => {
    for (const [name, cmd] of Object.entries(copies)) copyTimes[name].push(...series(root, 1, cmd));
  };
  round();
  settle();
  const run = await runEvalgate(evalDir, path.join(root, "run"));
  round();

  const setupMs = Number(readFileSync(setupRecord, "utf8"));
  const perAttempt = (run.wallMs - setupMs) / repeat;
  const medians = Object.fromEntries(Object.entries(copyTimes).map(([k, xs]) => [k, median(xs)]));
  const [bestName, floorMs] = Object.entries(medians).sort((a, b) => a[1] - b[1])[0];
  console.log(`  ${NM_FILES.toLocaleString("en")}-file node_modules made by setup (${repeat} attempts)`);
  console.log(
    `    plain copies of the prepared tree: ${Object.entries(copyTimes)
      .map(([k, xs]) => `${k} ${spread(xs)}`)
      .join(", ")}; hard links (cp -al, not a copy: edits would be shared) ${ms(linkMs)}`,
  );
  console.log(`    floor: the best plain copy (${bestName})   ${ms(floorMs)}`);
  console.log(
    `    evalgate per attempt (whole run less the setup command / attempts)   ${ms(perAttempt)}   ${ratio(perAttempt, floorMs)} of the floor (target ≤ 1.5x)`,
  );
  console.log(
    `      ${breakdown(run.results)}; setup once ${ms(setupMs)}; removing an attempt's workspace afterwards ${ms(run.cleanupMs)}`,
  );
  return { floorMs, perAttempt };
}

export async function overhead() {
  const base = mkdtempSync(path.join(process.env.BENCH_DIR || os.tmpdir(), "evalgate-bench-"));
  try {
    const [load] = os.loadavg();
    console.log(`overhead (${os.cpus().length} CPUs, load ${load.toFixed(1)}; folder ${base})`);
    mkdirSync(path.join(base, "a"));
    mkdirSync(path.join(base, "b"));
    await repository2000(path.join(base, "a"));
    await nodeModules50k(path.join(base, "b"));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
