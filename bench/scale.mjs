/**
 * bench/scale: how evalgate holds up as a run grows (issue 18): attempts/s and peak memory at
 * 500 / 2,000 / 5,000 trivial attempts, and how long the reports of a 2,000-case bundle take.
 *
 * Each size is a run of the CLI as shipped (`node bin/evalgate.js run`, concurrency 4, workspaces
 * deleted) on a 200-file repository with one attempt per case, so the cases grow with the attempts
 * (the harder case for memory: per-case state grows too). One case in 20 fails (its grader prints a
 * reason and exits 1), so the reports carry evidence, not only collapsed passes. Peak memory is the
 * maximum RSS of the CLI process (GNU time's %M: the node process or its largest child).
 *
 * Then, on the run's bundle with the most cases (2,000 unless BENCH_SCALE says otherwise):
 * `evalgate report <bundle>` (the PR comment) and `--format html` are timed as a user runs them
 * (process start included), and the size of the run's report.html is printed.
 *
 * `BENCH_QUICK=1`: 500 and 2,000 attempts. `BENCH_SCALE=500,2000,5000` and `BENCH_DIR` override.
 * It reports figures; it never fails on a number.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CLI, median, QUICK, secs, writeSourceTree } from "./paired.mjs";

const AGENT = '#!/bin/sh\necho "$EVALGATE_TEST_ID $EVALGATE_ATTEMPT" > answer.txt\n';
const GRADER = `#!/bin/sh
if [ "$1" = fail ]; then echo "expected answer.txt to hold the answer to the question, found a guess"; exit 1; fi
test -s answer.txt
`;

/** `cases` cases of one attempt each; every 20th case's grader fails. */
export function writeScaleSuite(dir, cases) {
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
repeat: 1
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

/** The CLI's `report` command on a bundle, a few times: the median wall time and the output's size. */
function timeReport(bundle, format, runs = 3) {
  const times = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const r = timedNode([CLI, "report", bundle, "--format", format], path.dirname(bundle));
    times.push(r.ms);
    bytes = Buffer.byteLength(r.stdout);
  }
  return { ms: median(times), bytes };
}

const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;

export async function scale() {
  const sizes = (process.env.BENCH_SCALE ?? (QUICK ? "500,2000" : "500,2000,5000")).split(",").map(Number);
  const base = mkdtempSync(path.join(process.env.BENCH_DIR || os.tmpdir(), "evalgate-scale-"));
  const [load] = os.loadavg();
  const reportAt = sizes.includes(2000) ? 2000 : Math.max(...sizes);
  try {
    console.log(
      `scale (${os.cpus().length} CPUs, load ${load.toFixed(1)}; trivial attempts, one per case, 1 case in 20 failing, 200-file repository, concurrency 4, workspaces deleted)`,
    );
    const peaks = new Map();
    for (const n of sizes) {
      const dir = path.join(base, String(n));
      mkdirSync(dir);
      writeScaleSuite(dir, n);
      const out = path.join(dir, "bundle");
      const r = timedNode([CLI, "run", ".", "--out", out], dir);
      peaks.set(n, r.peakMb);
      const runs = readFileSync(path.join(out, "index.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .flatMap((l) => JSON.parse(l).runs);
      const wsErrors = runs.filter((x) => x.failure_kind === "workspace_error").length;
      const notPassed = runs.filter((x) => x.status !== "passed").length;
      console.log(
        `  ${n.toLocaleString("en")} attempts: ${secs(r.ms)}, ${(n / (r.ms / 1000)).toFixed(1)} attempts/s, peak memory ${r.peakMb.toFixed(0)} MB, workspace_error ${wsErrors}, not passed ${notPassed} (expected ${Math.floor(n / 20)})`,
      );
      if (n === reportAt) {
        const html = statSync(path.join(out, "report.html")).size;
        const comment = timeReport(out, "markdown");
        const page = timeReport(out, "html");
        console.log(
          `  ${n.toLocaleString("en")} cases: \`evalgate report\` (PR comment, ${kb(comment.bytes)}) ${secs(comment.ms)}; --format html ${secs(page.ms)}; the run's report.html ${kb(html)} (medians of 3, process start included)`,
        );
      }
      rmSync(dir, { recursive: true, force: true });
    }
    const [lo, hi] = [Math.min(...sizes), Math.max(...sizes)];
    if (lo !== hi)
      console.log(
        `  peak memory at ${hi.toLocaleString("en")} / at ${lo.toLocaleString("en")}: ${(peaks.get(hi) / peaks.get(lo)).toFixed(2)}×`,
      );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
