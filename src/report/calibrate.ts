/**
 * `evalgate calibrate` rendered: each case's rate over the A/A runs, its exact interval, whether the
 * runs admit it to gate, and the repeat it needs. Pure functions of the view (pipeline/calibrate.ts).
 */
import type { Admission } from "../gate/admission.js";

export interface CalibrateCaseView {
  evalPath: string;
  testId: string;
  target: string;
  suite: string;
  policy: string;
  minRate: number | null;
  /** The schedule the runs used. */
  repeat: { min: number; max: number };
  /** Comparable runs (same history key), and each one's attempts, oldest first. */
  runs: number;
  perRun: { counted: number; passed: number }[];
  /** Every counted attempt over those runs. */
  counted: number;
  passed: number;
  rate: number | null;
  /** Two-sided 95 % Clopper–Pearson interval. */
  interval95: [number, number] | null;
  admission: Admission;
  /** The smallest fixed repeat whose verdict fails an unchanged agent at the rate ≤ 5 % (null: none ≤ 50). */
  recommended: { repeat: number; failChance: number } | null;
}

const pct = (x: number | null) => (x === null ? "—" : `${Math.round(x * 100)} %`);
const pct1 = (x: number) => `${(x * 100).toFixed(1)} %`;

function canGate(a: Admission): string {
  if (a.state === "admitted") return "yes (admitted)";
  if (a.state === "reported") return "no (reported only)";
  return "unproven";
}

function repeatText(r: { min: number; max: number }): string {
  return r.min === r.max ? `${r.min}` : `${r.min}..${r.max}`;
}

export function renderCalibrateText(cases: readonly CalibrateCaseView[], outDir: string): string {
  if (cases.length === 0) return "no case to calibrate\n";
  const rows = cases.map((c) => [
    `${c.suite}/${c.testId} on ${c.target}`,
    `${c.passed}/${c.counted}`,
    pct(c.rate),
    c.interval95 ? `${pct(c.interval95[0])}–${pct(c.interval95[1])}` : "—",
    canGate(c.admission),
    c.recommended ? `${c.recommended.repeat}` : "none ≤ 50",
  ]);
  const head = ["case", "passed", "rate", "95 % interval", "can gate", "repeat needed"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((x, i) => x.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const out = [line(head), ...rows.map(line), ""];
  for (const c of cases) {
    const a = c.admission;
    const why =
      a.state === "unproven"
        ? `${a.runs} comparable run${a.runs === 1 ? "" : "s"} (admission needs 5)`
        : `at its 90 % lower bound ${pct1(a.lowerBound ?? 0)} its verdict over repeat ${repeatText(c.repeat)} fails an unchanged agent ${pct1(a.failChance ?? 0)} of the time (admitted: ≤ 0.5 %)`;
    const rec = c.recommended
      ? `repeat: ${c.recommended.repeat} fails it ${pct1(c.recommended.failChance)} of the time at ${pct(c.rate)}`
      : c.rate === null
        ? "no counted attempt"
        : `no repeat up to ${c.policy === "all_attempts_successful" ? 1 : 50} keeps that under 5 % at ${pct(c.rate)}`;
    out.push(
      `${c.suite}/${c.testId} on ${c.target}: ${c.policy}${c.minRate !== null ? ` ${c.minRate}` : ""}; ${why}; ${rec}`,
    );
  }
  out.push("", `bundles: ${outDir} (usable as --baseline ${outDir})`, "");
  return out.join("\n");
}

/** `evalgate calibrate --json`: the view in the bundle's spelling (snake_case, versioned). */
export function calibrateJson(cases: readonly CalibrateCaseView[], outDir: string): unknown {
  return {
    schema: "evalgate.calibrate/v1",
    out: outDir,
    cases: cases.map((c) => ({
      eval_path: c.evalPath,
      test_id: c.testId,
      target: c.target,
      suite: c.suite,
      policy: c.policy,
      min_rate: c.minRate,
      repeat: c.repeat,
      runs: c.runs,
      per_run: c.perRun,
      counted: c.counted,
      passed: c.passed,
      rate: c.rate,
      interval_95: c.interval95,
      admission: {
        state: c.admission.state,
        runs: c.admission.runs,
        lower_bound: c.admission.lowerBound,
        fail_chance: c.admission.failChance,
      },
      recommended_repeat: c.recommended?.repeat ?? null,
      recommended_fail_chance: c.recommended?.failChance ?? null,
    })),
  };
}
