/**
 * `node bench/verdicts.mjs` (after `npm run build`): the error rates of the gate, measured. Synthetic
 * agents of known per-attempt success probability run through the real gate functions (lib/gate:
 * attemptsWanted decides adaptive attempts, decideCase the verdicts, compareCase and decideRun the
 * comparison with a baseline run and the run gate) over thousands of simulated pull requests.
 *
 * Options: --runs N (simulated pull requests per figure, default 4000), --cases K (cases per pull
 * request, default 10), --threshold T (the recommended policy's threshold, default 0.5), --seed S.
 * Deterministic for a given seed.
 */
import { pathToFileURL } from "node:url";
import { attemptsWanted, CaseSchedule } from "../lib/gate/adaptive.js";
import { decideCase } from "../lib/gate/case.js";
import { compareCase } from "../lib/gate/compare.js";
import { decideRun } from "../lib/gate/run.js";

/** A small seeded generator (mulberry32), so the figures are reproducible. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const attempt = (n, ok) => ({
  caseKey: "k",
  attempt: n,
  retry: 0,
  status: ok ? "passed" : "failed",
  ...(ok ? {} : { failureKind: "quality" }),
  startedAt: "",
  finishedAt: "",
  durationMs: 0,
  phases: { workspaceMs: 0, agentMs: 0, diffMs: 0, scorersMs: 0 },
  dirName: `run-${n}`,
});

/**
 * One case's run: its attempts as the scheduler would plan them (min first, then what the gate
 * asks for), and the verdict. `base` is the baseline's decision when there is one; `alpha` the
 * level a drop is tested at during the run (α over the cases compared).
 */
function runCase(config, p, random, base, alpha) {
  const tries = [];
  const add = (k) => {
    for (let i = 0; i < k; i++) tries.push(attempt(tries.length + 1, random() < p));
  };
  const schedule = new CaseSchedule({
    gate: config.gate,
    range: { min: config.min, max: config.max },
    verdictGates: true,
    drop:
      base && config.evidence === "significant" && base.verdict === "pass"
        ? { base: { counted: base.counts.counted, passed: base.counts.passed }, level: alpha }
        : undefined,
  });
  add(config.min);
  for (;;) {
    const outcomes = tries.map((t) => ({
      passed: t.status === "passed",
      passRate: t.status === "passed" ? 1 : 0,
    }));
    const more = attemptsWanted(schedule, tries.length, outcomes);
    if (more <= 0) break;
    add(more);
  }
  return decideCase(tries, tries.length, config.gate, schedule);
}

const ROOT = "e.eval.yaml";

/** One pull request: a base run and a head run of `cases` cases; the head's gate against the base. */
function pullRequest(config, baseP, headP, random) {
  const root = {
    path: ROOT,
    evalPath: ROOT,
    name: "e",
    tags: {},
    minCasePassRate: 1,
    regressions: "fail",
    regressionEvidence: config.evidence,
    regressionAlpha: 0.05,
    onInconclusive: "warn",
    budget: {},
  };
  const alpha = 0.05 / baseP.length;
  const cases = [];
  let attempts = 0;
  for (let i = 0; i < baseP.length; i++) {
    const base = runCase(config, baseP[i], random);
    const head = runCase(config, headP[i], random, base, alpha);
    attempts += head.counts.counted;
    const change = compareCase(
      { verdict: base.verdict, counted: base.counts.counted, passed: base.counts.passed, flaky: base.flaky },
      { verdict: head.verdict, counted: head.counts.counted, passed: head.counts.passed, path: head.path },
    );
    cases.push({
      identity: { evalPath: ROOT, testId: `t${i}`, target: "a" },
      rootEvalPath: ROOT,
      suite: "e",
      decision: head,
      change,
    });
  }
  const gate = decideRun([root], cases);
  const regressionReason = gate.reasons.some((r) => r.includes(": regressed:"));
  return { cases, gate, attempts, regressionReason };
}

export function simulate({ runs = 4000, cases = 10, threshold = 0.5, seed = 1 } = {}) {
  const t = threshold;
  const configs = [
    {
      name: "repeat: 3, all_attempts_successful, regressions: fail (today's default)",
      min: 3,
      max: 3,
      gate: { policy: "all_attempts_successful", onError: "fail", retries: 0 },
      evidence: "any",
    },
    {
      name: `repeat: 3, attempt_success_rate_at_least ${t}, regressions: fail (today)`,
      min: 3,
      max: 3,
      gate: { policy: "attempt_success_rate_at_least", threshold: t, onError: "fail", retries: 0 },
      evidence: "any",
    },
    {
      name: `repeat: {min: 3, max: 10}, attempt_success_rate_at_least ${t}, regressions: {evidence: significant} (defaults)`,
      min: 3,
      max: 10,
      gate: { policy: "attempt_success_rate_at_least", threshold: t, onError: "fail", retries: 0 },
      evidence: "significant",
    },
  ];
  const same = (p) => Array.from({ length: cases }, () => p);
  const oneDrops = (from, to) => [same(from), [to, ...same(from).slice(1)]];
  const results = [];
  for (const [ci, config] of configs.entries()) {
    const random = rng(seed * 1000 + ci);
    const row = { config: config.name, unchanged: {}, wrong: {}, detection: {} };
    for (const p of [0.5, 0.7, 0.9, 0.97]) {
      let blocked = 0;
      let falseAlarm = 0;
      let attempts = 0;
      for (let r = 0; r < runs; r++) {
        const pr = pullRequest(config, same(p), same(p), random);
        if (pr.gate.verdict === "fail") blocked++;
        if (pr.regressionReason) falseAlarm++;
        attempts += pr.attempts;
      }
      row.unchanged[p] = {
        blocked: blocked / runs,
        falseAlarm: falseAlarm / runs,
        attempts: attempts / (runs * cases),
      };
    }
    // Wrong verdicts of single cases, far from the threshold.
    const caseRuns = runs * 5;
    for (const [label, p, bad] of [
      ["wrong fail", Math.min(1, t + 0.3), "fail"],
      ["wrong pass", Math.max(0, t - 0.3), "pass"],
    ]) {
      let wrong = 0;
      let attempts = 0;
      for (let r = 0; r < caseRuns; r++) {
        const d = runCase(config, p, random);
        if (d.verdict === bad) wrong++;
        attempts += d.counts.counted;
      }
      row.wrong[label] = { p, rate: wrong / caseRuns, attempts: attempts / caseRuns };
    }
    for (const [from, to] of [
      [0.9, 0.6],
      [0.9, 0.4],
      [0.9, 0.3],
    ]) {
      let detected = 0;
      let blocked = 0;
      let attempts = 0;
      for (let r = 0; r < runs; r++) {
        const [b, h] = oneDrops(from, to);
        const pr = pullRequest(config, b, h, random);
        if (pr.gate.reasons.some((x) => x.startsWith("e/t0 on a: regressed:"))) detected++;
        if (pr.gate.reasons.some((x) => x.startsWith("e/t0 on a:"))) blocked++;
        attempts += pr.cases[0].decision.counts.counted;
      }
      row.detection[`${from}→${to}`] = {
        detected: detected / runs,
        blocked: blocked / runs,
        attempts: attempts / runs,
      };
    }
    results.push(row);
  }
  return results;
}

const pct = (x) => `${(x * 100).toFixed(1)} %`.padStart(7);

export function printFigures(results, opts) {
  console.log(
    `verdicts: ${opts.runs} simulated pull requests of ${opts.cases} cases per figure, threshold ${opts.threshold}, seed ${opts.seed}`,
  );
  for (const r of results) {
    console.log(`\n${r.config}`);
    console.log("  unchanged agent        p=0.5    p=0.7    p=0.9   p=0.97");
    const ps = [0.5, 0.7, 0.9, 0.97];
    console.log(`  gate blocks          ${ps.map((p) => pct(r.unchanged[p].blocked)).join("  ")}`);
    console.log(`  regression alarm     ${ps.map((p) => pct(r.unchanged[p].falseAlarm)).join("  ")}`);
    console.log(
      `  attempts per case    ${ps.map((p) => r.unchanged[p].attempts.toFixed(2).padStart(7)).join("  ")}`,
    );
    for (const [label, w] of Object.entries(r.wrong)) {
      console.log(
        `  ${label} (p = ${w.p.toFixed(2)}): ${pct(w.rate).trim()} of cases, ${w.attempts.toFixed(2)} attempts`,
      );
    }
    for (const [drop, d] of Object.entries(r.detection)) {
      console.log(
        `  drop ${drop} in 1 of ${opts.cases} cases: blocks the merge ${pct(d.blocked).trim()} (as a significant regression ${pct(d.detected).trim()}), ${d.attempts.toFixed(2)} attempts on it`,
      );
    }
  }
}

function option(args, name, fallback) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

export async function verdicts(args = []) {
  const opts = {
    runs: option(args, "runs", 4000),
    cases: option(args, "cases", 10),
    threshold: option(args, "threshold", 0.5),
    seed: option(args, "seed", 1),
  };
  printFigures(simulate(opts), opts);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await verdicts(process.argv.slice(2));
