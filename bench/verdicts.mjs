/**
 * `node bench/verdicts.mjs` (after `npm run build`): the error rates of the gate, measured. Synthetic
 * agents of known per-attempt success probability run through the code path of a real run
 * (lib/gate and the pipeline's own composition of it, pipeline/decide.ts): a base-branch history of
 * `--history` runs per case (each run pools its first `min` attempts, gate/history.ts), admission
 * by that history (gate/admission.ts), the case's schedule (attemptsWanted after every batch, the
 * exact rate design, the drop kept open against the pooled base at α / cases), decideCase,
 * changeAgainst (Barnard over the head's looks), Holm across cases and decideRun. Every block is
 * counted, whatever its reason.
 *
 * Options: --runs N (simulated pull requests per figure, default 2000), --cases K (one suite size;
 * default: 10, 30 and 100 for the recommended setup, 10 for the others), --history H (base runs,
 * default 10), --threshold T (the recommended policy's threshold, default 0.5), --seed S, --quick
 * (200 pull requests, 10 cases: a smoke run of a few seconds). Deterministic for a given seed.
 */
import { pathToFileURL } from "node:url";
import { changeAgainst } from "../lib/bundle/merge-decide.js";
import { attemptsWanted, CaseSchedule } from "../lib/gate/adaptive.js";
import { admissionOf } from "../lib/gate/admission.js";
import { decideCase } from "../lib/gate/case.js";
import { pooledSide } from "../lib/gate/history.js";
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
 * One case's run: its attempts as the scheduler plans them (min first, then what its schedule asks
 * for after each batch), and the verdict.
 */
function runCase(schedule, p, random) {
  const tries = [];
  const add = (k) => {
    for (let i = 0; i < k; i++) tries.push(attempt(tries.length + 1, random() < p));
  };
  for (;;) {
    const outcomes = tries.map((t) => ({
      passed: t.status === "passed",
      passRate: t.status === "passed" ? 1 : 0,
    }));
    const more = attemptsWanted(schedule, tries.length, outcomes);
    if (more <= 0) break;
    add(more);
  }
  return decideCase(tries, tries.length, schedule.ctx.gate, schedule);
}

const ROOT = "e.eval.yaml";

/**
 * A case's history on the base branch: `runs` runs of the same agent (rate `p`), newest first. Only
 * each run's first `min` attempts are pooled, and only the newest run's verdict is read, so the
 * older runs are drawn as their first `min` attempts alone.
 */
function baseHistory(config, p, runs, random) {
  const range = { min: config.min, max: config.max };
  const newest = runCase(new CaseSchedule({ gate: config.gate, range, verdictGates: true }), p, random);
  const firstOf = (d) => ({
    counted: Math.min(config.min, d.counts.counted),
    passed: d.path?.passes[0] ?? d.counts.passed,
  });
  const out = [
    {
      runId: "r0",
      gitSha: null,
      startedAt: `${runs}`.padStart(4, "0"),
      key: "k",
      verdict: newest.verdict,
      flaky: newest.flaky,
      counted: newest.counts.counted,
      passed: newest.counts.passed,
      first: firstOf(newest),
    },
  ];
  for (let r = 1; r < runs; r++) {
    let passed = 0;
    for (let i = 0; i < config.min; i++) if (random() < p) passed++;
    const verdict = passed === config.min ? "pass" : "fail";
    out.push({
      runId: `r${r}`,
      gitSha: null,
      startedAt: `${runs - r}`.padStart(4, "0"),
      key: "k",
      verdict,
      flaky: passed > 0 && passed < config.min,
      counted: config.min,
      passed,
      first: { counted: config.min, passed },
    });
  }
  return { runs: out, keyChanged: false };
}

/** One pull request: each case's base history, its head run, the changes and the run gate, as pipeline/decide.ts composes them. */
function pullRequest(config, baseP, headP, random, historyRuns) {
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
  const range = { min: config.min, max: config.max };
  const level = 0.05 / baseP.length;
  const cases = [];
  let attempts = 0;
  for (let i = 0; i < baseP.length; i++) {
    const history = historyRuns > 0 ? baseHistory(config, baseP[i], historyRuns, random) : undefined;
    const admission = admissionOf(history, config.gate, range, "warn");
    const side = history ? pooledSide(history) : undefined;
    const schedule = new CaseSchedule({
      gate: config.gate,
      range,
      verdictGates: admission.state !== "reported",
      drop: side && config.evidence === "significant" ? { base: side, level } : undefined,
    });
    const head = runCase(schedule, headP[i], random);
    attempts += head.counts.counted;
    cases.push({
      identity: { evalPath: ROOT, testId: `t${i}`, target: "a" },
      rootEvalPath: ROOT,
      suite: "e",
      decision: head,
      change: history ? changeAgainst(history, head) : null,
      admission,
    });
  }
  const gate = decideRun([root], cases);
  const regressionReason = gate.reasons.some((r) => r.includes(": regressed:"));
  return { cases, gate, attempts, regressionReason };
}

const PS = [0.5, 0.7, 0.8, 0.9, 0.97];

export function configs(t = 0.5) {
  return [
    {
      name: "repeat: 1, all_attempts_successful, regressions: fail (the SPEC's defaults)",
      min: 1,
      max: 1,
      gate: { policy: "all_attempts_successful", onError: "fail", retries: 0 },
      evidence: "significant",
    },
    {
      name: "repeat: 3, all_attempts_successful, regressions: fail",
      min: 3,
      max: 3,
      gate: { policy: "all_attempts_successful", onError: "fail", retries: 0 },
      evidence: "significant",
    },
    {
      name: `repeat: {min: 3, max: 10}, attempt_success_rate_at_least ${t}, regressions: fail (recommended: evalgate init)`,
      min: 3,
      max: 10,
      gate: { policy: "attempt_success_rate_at_least", threshold: t, onError: "fail", retries: 0 },
      evidence: "significant",
      recommended: true,
    },
  ];
}

/** The figures of one configuration and suite size. */
function figures(config, cases, runs, historyRuns, random) {
  const same = (p) => Array.from({ length: cases }, () => p);
  const row = { config: config.name, cases, unchanged: {}, detection: {} };
  for (const p of PS) {
    let blocked = 0;
    let byRegression = 0;
    let attempts = 0;
    for (let r = 0; r < runs; r++) {
      const pr = pullRequest(config, same(p), same(p), random, historyRuns);
      if (pr.gate.verdict === "fail") blocked++;
      if (pr.regressionReason) byRegression++;
      attempts += pr.attempts;
    }
    row.unchanged[p] = {
      blocked: blocked / runs,
      byRegression: byRegression / runs,
      attempts: attempts / (runs * cases),
    };
  }
  // A first run: no history yet, every verdict gates.
  let firstBlocked = 0;
  for (let r = 0; r < runs; r++)
    if (pullRequest(config, same(0.9), same(0.9), random, 0).gate.verdict === "fail") firstBlocked++;
  row.firstRun = firstBlocked / runs;
  for (const [from, to] of [
    [0.9, 0.6],
    [0.9, 0.3],
  ]) {
    let detected = 0;
    let blocked = 0;
    for (let r = 0; r < runs; r++) {
      const pr = pullRequest(config, same(from), [to, ...same(from).slice(1)], random, historyRuns);
      if (pr.gate.verdict === "fail") blocked++;
      if (pr.gate.reasons.some((x) => x.startsWith("e/t0 on a: regressed:"))) detected++;
    }
    row.detection[`${from}→${to}`] = { blocked: blocked / runs, detected: detected / runs };
  }
  return row;
}

/**
 * Wrong decisions of one case at its threshold, under the schedule a run takes: a decided fail of
 * an agent exactly at the threshold, and a decided pass (its limit as the rate rises to it). Exact:
 * every sequence of outcomes is driven through the scheduler and weighted by its chance.
 */
function atThreshold(config) {
  if (config.gate.policy !== "attempt_success_rate_at_least" || config.max > 16) return null;
  const t = config.gate.threshold;
  const schedule = new CaseSchedule({
    gate: config.gate,
    range: { min: config.min, max: config.max },
    verdictGates: true,
  });
  const seen = new Set();
  let pass = 0;
  let fail = 0;
  for (let bits = 0; bits < 2 ** config.max; bits++) {
    let i = 0;
    const d = runCase(schedule, t, () => (((bits >> i++) & 1) === 1 ? 0 : 1));
    const n = d.counts.counted;
    const key = `${n}:${bits & ((1 << n) - 1)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const chance = t ** d.counts.passed * (1 - t) ** (n - d.counts.passed);
    if (d.evidence !== "decided") continue;
    if (d.verdict === "pass") pass += chance;
    else fail += chance;
  }
  return { pass, fail };
}

export function simulate({ runs = 2000, cases, history = 10, threshold = 0.5, seed = 1 } = {}) {
  const results = [];
  for (const [ci, config] of configs(threshold).entries()) {
    const sizes = cases ? [cases] : config.recommended ? [10, 30, 100] : [10];
    for (const size of sizes) {
      const random = rng(seed * 1000 + ci * 10 + size);
      const row = figures(
        config,
        size,
        size > 30 ? Math.max(50, Math.round(runs / 4)) : runs,
        history,
        random,
      );
      row.threshold = atThreshold(config);
      results.push(row);
    }
  }
  return results;
}

const pct = (x) => `${(x * 100).toFixed(1)} %`.padStart(7);

export function printFigures(results, opts) {
  console.log(
    `verdicts: ${opts.runs} simulated pull requests per figure (a quarter for 100 cases), a base history of ${opts.history} runs per case, threshold ${opts.threshold}, seed ${opts.seed}`,
  );
  for (const r of results) {
    console.log(`\n${r.config}, ${r.cases} cases`);
    console.log(`  unchanged agent        ${PS.map((p) => `p=${p}`.padStart(7)).join("  ")}`);
    console.log(`  PR blocked           ${PS.map((p) => pct(r.unchanged[p].blocked)).join("  ")}`);
    console.log(`   by a regression     ${PS.map((p) => pct(r.unchanged[p].byRegression)).join("  ")}`);
    console.log(
      `  attempts per case    ${PS.map((p) => r.unchanged[p].attempts.toFixed(2).padStart(7)).join("  ")}`,
    );
    console.log(`  first run (no history), unchanged p=0.9: blocked ${pct(r.firstRun).trim()}`);
    if (r.threshold)
      console.log(
        `  wrong decision of a case at the threshold: decided pass ${pct(r.threshold.pass).trim()}, decided fail ${pct(r.threshold.fail).trim()} (exact; stated: ≤ 5 % each)`,
      );
    for (const [drop, d] of Object.entries(r.detection)) {
      console.log(
        `  drop ${drop} in 1 of ${r.cases} cases: blocks the PR ${pct(d.blocked).trim()}, named a regression ${pct(d.detected).trim()}`,
      );
    }
  }
}

function option(args, name, fallback) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

export async function verdicts(args = []) {
  const quick = args.includes("--quick");
  const opts = {
    runs: option(args, "runs", quick ? 200 : 2000),
    cases: option(args, "cases", quick ? 10 : undefined),
    history: option(args, "history", 10),
    threshold: option(args, "threshold", 0.5),
    seed: option(args, "seed", 1),
  };
  printFigures(simulate(opts), opts);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await verdicts(process.argv.slice(2));
