/**
 * bench/scale: how evalgate holds up as a run grows (issue 18): attempts/s and peak memory at
 * 500 / 2,000 / 5,000 trivial attempts, and how long the reports of a 2,000-case bundle take.
 *
 * Each size is run as two suites of the CLI as shipped (`node bin/evalgate.js run`, concurrency 4,
 * workspaces deleted, in a work folder beside the bundle) on a 200-file repository: the attempts
 * spread over 100 cases (what a run holds per attempt), and one attempt per case, so the cases grow
 * with the attempts (per-case state grows too: the plan, the decisions, the reports).
 * `BENCH_SCALE_SHAPE=attempts|cases` runs one of them. One case in 20 fails (its grader prints a
 * reason and exits 1), so the reports carry evidence, not only collapsed passes. Peak memory is the
 * maximum RSS of the CLI process (GNU time's %M: the node process or its largest child).
 *
 * Then, on the run's bundle of 2,000 cases (or the largest, when BENCH_SCALE has no 2,000):
 * `evalgate report <bundle>` (the PR comment) and `--format html` are timed as a user runs them,
 * and, from a --cpu-prof profile of the same runs, the time inside the renderer itself; the size of
 * the run's report.html is printed.
 *
 * `node bench/scale.mjs report BUNDLE` prints these report figures for an existing bundle.
 *
 * `BENCH_QUICK=1`: 500 and 2,000 attempts. `BENCH_SCALE=500,2000,5000` and `BENCH_DIR` override.
 * It reports figures; it never fails on a number.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CLI, median, QUICK, secs, writeSourceTree } from "./paired.mjs";

const AGENT = '#!/bin/sh\necho "$EVALGATE_TEST_ID $EVALGATE_ATTEMPT" > answer.txt\n';
const GRADER = `#!/bin/sh
if [ "$1" = fail ]; then echo "expected answer.txt to hold the answer to the question, found a guess"; exit 1; fi
test -s answer.txt
`;

/** `cases` cases of `repeat` attempts each; every 20th case's grader fails. */
export function writeScaleSuite(dir, cases, repeat = 1) {
  writeSourceTree(path.join(dir, "project"), 200);
  for (const [name, text] of [
    ["agent.sh", AGENT],
    ["grade.sh", GRADER],
  ]) {
    writeFileSync(path.join(dir, name), text);
    chmodSync(path.join(dir, name), 0o755);
  }
  const list = Array.from(
    { length: cases },
    (_, i) =>
      `  - { id: t${i}, instruction: x, scorers: [{ name: grade, type: command, run: "{EVAL_DIR}/grade.sh${i % 20 === 19 ? " fail" : ""}" }] }`,
  ).join("\n");
  writeFileSync(
    path.join(dir, "bench.eval.yaml"),
    `name: scale
repeat: ${repeat}
concurrency: 4
targets: [{ name: trivial, provider: command, command: ["{EVAL_DIR}/agent.sh"] }]
workspace:
  seed: { path: project }
tests:
${list}
`,
  );
}

/** Runs `node <args>` under GNU time; returns wall ms, peak RSS in MB and the exit status. */
function timedNode(args, cwd) {
  const t = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, ...args], {
    cwd,
    env: { ...process.env, CI: "1" },
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ms = performance.now() - t;
  const lines = r.stderr.trim().split("\n");
  if (r.status !== 0 && r.status !== 1)
    throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr.slice(-800)}`);
  return { ms, peakMb: Number(lines.at(-1)) / 1024, status: r.status, stdout: r.stdout };
}

/** Milliseconds the CPU profile spent inside functions named `name` (outermost calls only). */
function inclusiveMs(profileFile, name) {
  const p = JSON.parse(readFileSync(profileFile, "utf8"));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let us = 0;
  p.samples.forEach((id, i) => {
    for (let x = id; x !== undefined; x = parent.get(x)) {
      if (byId.get(x).callFrame.functionName === name) {
        us += p.timeDeltas[i] ?? 0;
        break;
      }
    }
  });
  return us / 1000;
}

/**
 * The CLI's `report` command on a bundle, a few times: the median wall time (process start, the
 * seal check and reading every case's summary included), the median time spent rendering (from a
 * --cpu-prof profile: the renderer's own function) and the output's size.
 */
function timeReport(bundle, format, renderer, runs = 3) {
  const times = [];
  const renders = [];
  let bytes = 0;
  const profiles = mkdtempSync(path.join(os.tmpdir(), "evalgate-prof-"));
  try {
    for (let i = 0; i < runs; i++) {
      const dir = path.join(profiles, String(i));
      const r = timedNode(
        ["--cpu-prof", `--cpu-prof-dir=${dir}`, CLI, "report", bundle, "--format", format],
        path.dirname(bundle),
      );
      times.push(r.ms);
      renders.push(inclusiveMs(path.join(dir, readdirSync(dir)[0]), renderer));
      bytes = Buffer.byteLength(r.stdout);
    }
  } finally {
    rmSync(profiles, { recursive: true, force: true });
  }
  return { ms: median(times), renderMs: median(renders), bytes };
}

const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;

/**
 * `evalgate report` of the PR comment with the whole bundle hashed before it is read, as every
 * report did before decision 0236 (now only a bundle of at most SEAL_ON_READ_ABOVE files): a
 * process that loads lib/ and renders the comment as the CLI does.
 */
function timeWholeSealReport(bundle, runs = 3) {
  const lib = (rel) => JSON.stringify(new URL(`../lib/${rel}`, import.meta.url).href);
  const script = `const { loadReportView } = await import(${lib("pipeline/report-view.js")});
const { COMMENT_MAX_CHARS, renderComment } = await import(${lib("report/comment.js")});
const view = await loadReportView(process.argv[1], { sealOnReadAbove: Infinity });
process.stdout.write(renderComment(view, { key: "default", maxChars: COMMENT_MAX_CHARS }));`;
  const times = [];
  for (let i = 0; i < runs; i++)
    times.push(timedNode(["--input-type=module", "-e", script, bundle], path.dirname(bundle)).ms);
  return median(times);
}

/** The report figures of one bundle of `n` cases (see the top of this file). */
export function reportFigures(bundle, n) {
  const comment = timeReport(bundle, "markdown", "renderComment");
  const page = timeReport(bundle, "html", "renderHtml");
  const whole = timeWholeSealReport(bundle);
  console.log(
    `  ${n.toLocaleString("en")} cases: PR comment (${kb(comment.bytes)}) rendered in ${secs(comment.renderMs)}, \`evalgate report\` ${secs(comment.ms)} in all (${secs(whole)} with every file of the bundle hashed first, as before decision 0236); report.html (${kb(page.bytes)}) rendered in ${secs(page.renderMs)}, \`evalgate report --format html\` ${secs(page.ms)} in all (medians of 3; "in all": process start, the seal check and reading the bundle included)`,
  );
}

/** The suites a size is run as: its attempts spread over 100 cases, and one case per attempt. */
function shapesOf(n) {
  const want = process.env.BENCH_SCALE_SHAPE ?? "both";
  const shapes = [];
  // 100 cases when the size divides into them, else one case per attempt.
  const cases = n % 100 === 0 ? 100 : n;
  if (want !== "cases") shapes.push({ name: "attempts", cases, repeat: n / cases });
  // When the two suites are the same one, it runs once and counts for both.
  if (want !== "attempts" && !(cases === n && shapes.length > 0))
    shapes.push({ name: "cases", cases: n, repeat: 1 });
  return shapes;
}

export async function scale() {
  const sizes = (process.env.BENCH_SCALE ?? (QUICK ? "500,2000" : "500,2000,5000")).split(",").map(Number);
  const base = mkdtempSync(path.join(process.env.BENCH_DIR || os.tmpdir(), "evalgate-scale-"));
  const [load] = os.loadavg();
  const reportAt = sizes.includes(2000) ? 2000 : Math.max(...sizes);
  try {
    console.log(
      `scale (${os.cpus().length} CPUs, load ${load.toFixed(1)}; trivial attempts, 1 case in 20 failing, 200-file repository, concurrency 4, workspaces deleted, work folder ${base})`,
    );
    const peaks = new Map();
    for (const n of sizes) {
      for (const shape of shapesOf(n)) {
        const dir = path.join(base, `${n}-${shape.name}`);
        mkdirSync(dir);
        writeScaleSuite(dir, shape.cases, shape.repeat);
        const out = path.join(dir, "bundle");
        // The workspaces on the same filesystem as the bundle (BENCH_DIR), not the system temp.
        const r = timedNode([CLI, "run", ".", "--out", out, "--work-dir", path.join(dir, "work")], dir);
        peaks.set(`${shape.name}:${n}`, r.peakMb);
        if (shape.cases === n && shape.repeat === 1) peaks.set(`cases:${n}`, r.peakMb);
        const runs = readFileSync(path.join(out, "index.jsonl"), "utf8")
          .split("\n")
          .filter(Boolean)
          .flatMap((l) => JSON.parse(l).runs);
        const wsErrors = runs.filter((x) => x.failure_kind === "workspace_error").length;
        const notPassed = runs.filter((x) => x.status !== "passed").length;
        const attempts = shape.cases * shape.repeat;
        console.log(
          `  ${attempts.toLocaleString("en")} attempts (${shape.cases.toLocaleString("en")} cases × ${shape.repeat}): ${secs(r.ms)}, ${(attempts / (r.ms / 1000)).toFixed(1)} attempts/s, peak memory ${r.peakMb.toFixed(0)} MB, workspace_error ${wsErrors}, not passed ${notPassed} (expected ${Math.floor(shape.cases / 20) * shape.repeat})`,
        );
        if (n === reportAt && shape.cases === n) reportFigures(out, n);
        rmSync(dir, { recursive: true, force: true });
      }
    }
    const [lo, hi] = [Math.min(...sizes), Math.max(...sizes)];
    for (const shape of ["attempts", "cases"]) {
      const [a, b] = [peaks.get(`${shape}:${lo}`), peaks.get(`${shape}:${hi}`)];
      if (lo !== hi && a && b)
        console.log(
          `  peak memory at ${hi.toLocaleString("en")} / at ${lo.toLocaleString("en")} attempts, ${shape === "attempts" ? "100 cases" : "one case per attempt"}: ${(b / a).toFixed(2)}×`,
        );
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "report") {
  const bundle = path.resolve(process.argv[3] ?? "");
  const cases = readFileSync(path.join(bundle, "index.jsonl"), "utf8").split("\n").filter(Boolean).length;
  console.log(`report of ${bundle} (${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)})`);
  reportFigures(bundle, cases);
}
