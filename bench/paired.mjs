/**
 * bench/paired: evalgate as shipped against the floor, in alternating paired runs (issue 18).
 *
 * evalgate: `node bin/evalgate.js run` (the CLI as shipped), concurrency 2, workspaces deleted, a
 * trivial agent (writes one file) and a trivial grader (a script that checks it), baseline
 * preparation included (a setup command's own time is left out: it is the user's, run once).
 * The floor, per attempt, two at a time: `cp -a` of the prepared tree + the same agent +
 * `git add -A && git diff --cached --binary` + the same grader + `rm -rf`. The isolated floor is the
 * same with the agent under bubblewrap and the grader under the reaper, as evalgate runs them (run
 * only where bubblewrap works): evalgate/floor is what a run costs, evalgate/isolated floor what it
 * costs beyond the isolation it must pay for.
 * Each round runs every side, in rotated order (A/B, then B/A; A/B/C, B/C/A, ...); the figure is the
 * median of the rounds' ratios with its range, because on a shared machine the spread between runs
 * is larger than the difference being measured.
 *
 * Suites: 40 tests × 3 attempts on a 200-file repository; a 2,000-file repository; a 50,000-file
 * ignored tree (node_modules made by setup). `BENCH_QUICK=1`: fewer pairs and attempts, 10,000
 * ignored files. `BENCH_PAIRS`, `BENCH_DIR` (both sides work there),
 * `BENCH_SUITES=small,large,ignored,agentv` and `BENCH_IGNORED` (files) override.
 *
 * When AgentV is installed (`BENCH_AGENTV`, or `node_modules/.bin/agentv`), the small suite also
 * runs through it, paired with evalgate likewise, and the median ratio AgentV/evalgate is printed.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GIT_ENV, sh } from "./git-env.mjs";

export const QUICK = process.env.BENCH_QUICK === "1";
export const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "bin", "evalgate.js");
const PAIRS = Number(process.env.BENCH_PAIRS ?? (QUICK ? 3 : 5));

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export const secs = (x) => `${(x / 1000).toFixed(2)} s`;

/** A source tree of `n` small files in up to 50 folders. */
export function writeSourceTree(dir, n) {
  for (let i = 0; i < n; i++) {
    const folder = path.join(dir, "src", `module${i % 50}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      path.join(folder, `file${i}.ts`),
      `// file ${i}\n${`export const v${i} = ${i};\n`.repeat(20)}`,
    );
  }
}

const AGENT = '#!/bin/sh\necho "$EVALGATE_TEST_ID $EVALGATE_ATTEMPT" > answer.txt\n';
const GRADER = "#!/bin/sh\ntest -s answer.txt\n";
export const MAKE_IGNORED = `#!/bin/sh
# Writes N files into node_modules as an install would; records its own time (ms) in $2, if given.
start=$(date +%s%N)
node -e '
const fs = require("fs"), path = require("path");
const n = Number(process.argv[1]);
for (let i = 0; i < n; i++) {
  const dir = path.join("node_modules", "pkg" + Math.floor(i / 50), "lib");
  if (i % 50 === 0) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "f" + (i % 50) + ".js"), "module.exports = " + i + ";\\n");
}' "$1"
if [ -n "$2" ]; then echo $(( ($(date +%s%N) - start) / 1000000 )) > "$2"; fi
`;

/**
 * An eval folder: the seed `project/`, the agent and grader, `tests` × `repeat` attempts. Setup is
 * `setup` when given, else make-ignored.sh writing `ignored` files (none: no setup).
 */
export function writeSuite(
  dir,
  { files, tests, repeat, concurrency = 2, ignored = 0, setup, agent = AGENT, grader = GRADER },
) {
  const project = path.join(dir, "project");
  writeSourceTree(project, files);
  writeFileSync(path.join(project, ".gitignore"), "node_modules/\n");
  for (const [name, text] of [
    ["agent.sh", agent],
    ["grade.sh", grader],
    ["make-ignored.sh", MAKE_IGNORED],
  ]) {
    writeFileSync(path.join(dir, name), text);
    chmodSync(path.join(dir, name), 0o755);
  }
  const command =
    setup ?? (ignored ? `{EVAL_DIR}/make-ignored.sh ${ignored} {EVAL_DIR}/setup-ms` : undefined);
  const setupLine = command ? `  setup: { command: ${JSON.stringify(command)} }\n` : "";
  const list = Array.from(
    { length: tests },
    (_, i) =>
      `  - { id: t${i}, instruction: x, scorers: [{ name: grade, type: command, run: "{EVAL_DIR}/grade.sh" }] }`,
  ).join("\n");
  writeFileSync(
    path.join(dir, "bench.eval.yaml"),
    `name: bench
repeat: ${repeat}
concurrency: ${concurrency}
targets: [{ name: trivial, provider: command, command: ["{EVAL_DIR}/agent.sh"] }]
workspace:
  seed: { path: project }
${setupLine}tests:
${list}
`,
  );
}

/** Runs a program; resolves with its wall time in ms (rejects on a non-zero exit). */
export function timedRun(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (c) => {
      err += c;
    });
    child.on("close", (code) => {
      const ms = performance.now() - t;
      code === 0 || code === 1 ? resolve(ms) : reject(new Error(`${cmd} exited ${code}: ${err.slice(-500)}`));
    });
  });
}

/** Runs the CLI on `dir`; returns wall ms (setup time subtracted) and the attempts' statuses. */
export async function runEvalgate(dir, extraArgs = []) {
  const out = path.join(dir, "bundle");
  rmSync(out, { recursive: true, force: true });
  // The workspaces on the floor's filesystem (BENCH_DIR), not the system temp folder.
  const work = ["--work-dir", path.join(dir, "work")];
  const ms = await timedRun(process.execPath, [CLI, "run", ".", "--out", out, ...work, ...extraArgs], {
    cwd: dir,
    env: { ...process.env, CI: "1" },
  });
  let setupMs = 0;
  try {
    setupMs = Number(readFileSync(path.join(dir, "setup-ms"), "utf8"));
  } catch {}
  const runs = readFileSync(path.join(out, "index.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .flatMap((l) => JSON.parse(l).runs);
  rmSync(out, { recursive: true, force: true });
  return { ms: ms - setupMs, runs };
}

/** The prepared tree the floor copies: the seed, the setup's output, a baseline commit. */
function prepareFloorTree(dir, ignored) {
  const tree = path.join(dir, "floor-tree");
  sh(`cp -a project ${tree}`, dir);
  if (ignored) sh(`${path.join(dir, "make-ignored.sh")} ${ignored} /dev/null`, tree);
  sh("git init -q -b main . && git add -A && git commit -qm baseline && git repack -adq", tree);
  return tree;
}

/**
 * How the isolated floor contains its agent and grader: the agent under bubblewrap with the
 * arguments evalgate gives a `sandbox: auto` target (writable: its workspace only), the grader under
 * the reaper evalgate's probe picks (a PID namespace as root, else the perl subreaper). Undefined
 * when bubblewrap cannot run here: then there is no isolated floor to compare with.
 */
async function isolation() {
  const { bwrapArgs, checkBwrap } = await import("../lib/sandbox/bwrap.js");
  const { probeReaper } = await import("../lib/sandbox/isolation.js");
  const { shellQuote } = await import("../lib/sandbox/commands.js");
  const bwrap = await checkBwrap();
  if (!bwrap.ok) return undefined;
  const reaper = await probeReaper();
  return {
    level: `bubblewrap for the agent, ${reaper.level} for the grader`,
    agent: (ws, program) =>
      [
        bwrap.program,
        ...bwrapArgs(
          { command: { argv: [program] }, cwd: ws, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } },
          { kind: "auto", network: false, readOnly: [] },
          [ws],
        ),
        "--",
        program,
      ]
        .map(shellQuote)
        .join(" "),
    grader: (program) => reaper.wrap([program]).map(shellQuote).join(" "),
  };
}

/**
 * The floor: per attempt cp -a + agent + git add -A && git diff + grader + rm -rf, two at a time.
 * With `contain` (from `isolation`), the agent and the grader run contained as evalgate's do: the
 * isolated floor, which tells what evalgate costs beyond the isolation it must pay for.
 */
async function runFloor(dir, tree, attempts, contain) {
  const script = (i) => {
    const d = `${dir}/floor-ws-${i}`;
    const agent = contain ? contain.agent(d, `${dir}/agent.sh`) : `${dir}/agent.sh`;
    const grader = contain ? contain.grader(`${dir}/grade.sh`) : `${dir}/grade.sh`;
    return `d=${d}; cp -a ${tree} $d && cd $d && EVALGATE_TEST_ID=t EVALGATE_ATTEMPT=${i} ${agent} && git add -A && git diff --cached --binary HEAD > /dev/null && ${grader}; cd ${dir}; rm -rf $d`;
  };
  const t = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < attempts) {
      const i = next++;
      await timedRun("/bin/sh", ["-c", script(i)], { env: GIT_ENV });
    }
  };
  await Promise.all([worker(), worker()]);
  return performance.now() - t;
}

/**
 * Runs each of `sides` (each resolving with its wall ms) PAIRS times, the order rotated every
 * round (A/B, then B/A; with three, A/B/C, B/C/A, C/A/B); returns each side's times by round.
 */
async function alternate(...sides) {
  const times = sides.map(() => []);
  for (let p = 0; p < PAIRS; p++) {
    for (let k = 0; k < sides.length; k++) {
      const i = (p + k) % sides.length;
      times[i].push(await sides[i]());
    }
  }
  return times;
}

/** The rounds' ratios `a[i] / b[i]`, printed as their median and range. */
function ratioOf(a, b) {
  const ratios = a.map((x, i) => x / b[i]);
  return {
    median: median(ratios),
    text: `${median(ratios).toFixed(2)} (range ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
  };
}

/** One suite: evalgate, the floor and (with `contain`, from `isolation`) the isolated floor. */
async function suite(base, label, opts, contain) {
  const dir = path.join(base, label.replace(/\W+/g, "-"));
  mkdirSync(dir, { recursive: true });
  writeSuite(dir, opts);
  const tree = prepareFloorTree(dir, opts.ignored);
  const attempts = opts.tests * opts.repeat;
  const evalgate = async () => {
    const e = await runEvalgate(dir);
    const bad = e.runs.filter((r) => r.status !== "passed");
    if (bad.length) throw new Error(`${label}: ${bad.length} attempts did not pass (${bad[0].status})`);
    return e.ms;
  };
  const sides = [evalgate, () => runFloor(dir, tree, attempts)];
  if (contain) sides.push(() => runFloor(dir, tree, attempts, contain));
  const [eg, fl, iso] = await alternate(...sides);
  const r = ratioOf(eg, fl);
  console.log(
    `  ${label} (${attempts} attempts, ${PAIRS} rounds): evalgate/floor median ${r.text}; evalgate ${secs(median(eg))}, floor ${secs(median(fl))} (medians)`,
  );
  console.log(
    iso
      ? `    evalgate/isolated floor (${contain.level}) median ${ratioOf(eg, iso).text}; isolated floor ${secs(median(iso))}`
      : "    isolated floor: not run (bubblewrap cannot run here)",
  );
  rmSync(dir, { recursive: true, force: true });
  return r.median;
}

/**
 * The AgentV CLI to compare with: `BENCH_AGENTV`, else `node_modules/.bin/agentv` of this repository
 * (`npm i --no-save agentv@4.42.4`); undefined when neither exists.
 */
function agentvProgram() {
  const given = process.env.BENCH_AGENTV;
  if (given) return given;
  const local = path.join(path.dirname(CLI), "..", "node_modules", ".bin", "agentv");
  return existsSync(local) ? local : undefined;
}

/**
 * The same suite for AgentV 4.x, beside evalgate's in `dir`: the same `project/` as the workspace
 * template, copied fresh for every trial (`isolation: per_test`; every trial runs with `strategy:
 * mean`), a `cli` target doing what agent.sh does, and a code-grader checking the same file. Each
 * agent run appends a line to `agentv-calls`, so the run can be checked to have made every attempt.
 */
export function writeAgentvSuite(dir, tests, repeat) {
  mkdirSync(path.join(dir, ".agentv"), { recursive: true });
  writeFileSync(
    path.join(dir, ".agentv", "targets.yaml"),
    `targets:
  - name: trivial
    provider: cli
    command: "sh -c 'echo \\"{EVAL_ID} {ATTEMPT}\\" > answer.txt; echo x >> ${dir}/agentv-calls; echo done > {OUTPUT_FILE}'"
`,
  );
  writeFileSync(
    path.join(dir, "agentv-grade.sh"),
    `#!/bin/sh
cat > /dev/null
if [ -s "$AGENTV_WORKSPACE_PATH/answer.txt" ]; then echo '{"score": 1}'; else echo '{"score": 0}'; fi
`,
  );
  chmodSync(path.join(dir, "agentv-grade.sh"), 0o755);
  const list = Array.from(
    { length: tests },
    (_, i) =>
      `  - id: t${i}\n    input: x\n    assertions:\n      - type: code-grader\n        command: ["${dir}/agentv-grade.sh"]`,
  ).join("\n");
  writeFileSync(
    path.join(dir, "agentv-suite.yaml"),
    `description: bench
execution:
  target: trivial
  trials: { count: ${repeat}, strategy: mean }
workspace:
  template: ./project
  isolation: per_test
tests:
${list}
`,
  );
}

/** Runs the AgentV suite (2 workers, its workspaces under `dir`); returns wall ms. */
export async function runAgentv(program, dir, attempts) {
  const out = path.join(dir, "agentv-run");
  const calls = path.join(dir, "agentv-calls");
  for (const f of [out, calls, path.join(dir, "agentv-home")]) rmSync(f, { recursive: true, force: true });
  mkdirSync(path.join(dir, "agentv-home"));
  const ms = await timedRun(program, ["eval", "agentv-suite.yaml", "--output", out, "--workers", "2"], {
    cwd: dir,
    // Its workspaces go to ~/.agentv: on the benchmark's filesystem, like evalgate's.
    env: { ...process.env, HOME: path.join(dir, "agentv-home"), CI: "1" },
  });
  const made = existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean).length : 0;
  const scores = readFileSync(path.join(out, "index.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l).score);
  if (made !== attempts || scores.some((x) => x !== 1))
    throw new Error(`AgentV made ${made} of ${attempts} attempts, scores ${scores.join(", ")}`);
  return ms;
}

/** evalgate against AgentV on the small suite, in alternating pairs: AgentV/evalgate (the issue's goal: ≥ 3). */
async function versusAgentv(base, program) {
  const opts = { files: 200, tests: 40, repeat: 3 };
  const dir = path.join(base, "agentv");
  mkdirSync(dir, { recursive: true });
  writeSuite(dir, opts);
  writeAgentvSuite(dir, opts.tests, opts.repeat);
  const attempts = opts.tests * opts.repeat;
  const [av, eg] = await alternate(
    () => runAgentv(program, dir, attempts),
    async () => (await runEvalgate(dir)).ms,
  );
  const version = execFileSync(program, ["--version"], { encoding: "utf8" }).trim().split("\n").at(-1);
  console.log(
    `  AgentV ${version} / evalgate, 40 tests × 3 attempts (${PAIRS} pairs): median ${ratioOf(av, eg).text}; AgentV ${secs(median(av))}, evalgate ${secs(median(eg))} (medians)`,
  );
  rmSync(dir, { recursive: true, force: true });
}

export async function paired() {
  const base = mkdtempSync(path.join(process.env.BENCH_DIR || os.tmpdir(), "evalgate-bench-"));
  try {
    const [load] = os.loadavg();
    console.log(
      `paired (${os.cpus().length} CPUs, load ${load.toFixed(1)}, ${QUICK ? "quick mode" : "full"}; folder ${base})`,
    );
    const only = (process.env.BENCH_SUITES ?? "small,large,ignored,agentv").split(",");
    // Probed once: the isolated floor of every suite contains its processes the same way.
    const contain = await isolation();
    if (only.includes("small"))
      await suite(
        base,
        "40 tests × 3 attempts, 200-file repository",
        { files: 200, tests: 40, repeat: 3 },
        contain,
      );
    if (only.includes("large"))
      await suite(base, "2,000-file repository", { files: 2000, tests: QUICK ? 5 : 10, repeat: 4 }, contain);
    const ignored = Number(process.env.BENCH_IGNORED ?? (QUICK ? 10_000 : 50_000));
    if (only.includes("ignored"))
      await suite(
        base,
        `${ignored.toLocaleString("en")}-file ignored tree (node_modules by setup)`,
        {
          files: 50,
          tests: QUICK ? 2 : 4,
          repeat: 2,
          ignored,
        },
        contain,
      );
    const agentv = agentvProgram();
    if (agentv && only.includes("agentv")) await versusAgentv(base, agentv);
    else if (!agentv)
      console.log(
        "  AgentV: not run (`npm i --no-save agentv@4.42.4` here, or BENCH_AGENTV=<its CLI>, to compare)",
      );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
