import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

/**
 * The flaky agent counts its attempts in a file outside the workspace (so it can fail exactly every
 * 5th attempt): the count needs the workspace uncontained, as in adaptive.test.ts. It tests
 * calibration, not containment.
 */
const COUNTING = { EVALGATE_ISOLATION: "none" };

/** flaky: passes 4 of every 5 attempts (min_rate 0.5, repeat 2); steady: always (any_attempt, repeat 4). */
function suite(): string {
  const dir = tempDir();
  writeFiles(dir, {
    "app/answer.txt": "wrong\n",
    "flaky.sh": `#!/bin/sh\nn=$(cat "${dir}/count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "${dir}/count"\n[ $((n % 5)) -eq 0 ] || echo right > answer.txt\nexit 0\n`,
    "steady.sh": "#!/bin/sh\necho right > answer.txt\nexit 0\n",
    "flaky.eval.yaml": `name: flaky
targets: [{ name: bot, provider: command, command: ["./flaky.sh"] }]
repeat: 2
gate: { policy: attempt_success_rate_at_least, min_rate: 0.5, min_case_pass_rate: 0 }
workspace: { seed: { path: app } }
tests:
  - { id: answer, instruction: "write right", scorers: [{ type: file, path: answer.txt, contains: right }] }
`,
    "steady.eval.yaml": `name: steady
targets: [{ name: bot, provider: command, command: ["./steady.sh"] }]
repeat: 4
gate: { policy: any_attempt_successful, min_case_pass_rate: 0 }
workspace: { seed: { path: app } }
tests:
  - { id: answer, instruction: "write right", scorers: [{ type: file, path: answer.txt, contains: right }] }
`,
  });
  sh("chmod +x flaky.sh steady.sh", dir);
  return dir;
}

interface CaseJson {
  suite: string;
  runs: number;
  per_run: { counted: number; passed: number }[];
  counted: number;
  passed: number;
  rate: number;
  interval_95: [number, number];
  admission: { state: string; runs: number; lower_bound: number; fail_chance: number };
  recommended_repeat: number | null;
  recommended_fail_chance: number | null;
}

describe("evalgate calibrate", () => {
  const dir = suite();
  // Before: `calibrate` was an unknown command (exit 2).
  const r = runCli(["calibrate", "--runs", "5", "--concurrency", "1", "--json"], dir, COUNTING);

  it("runs the suite N times and reports each case's rate, exact interval, admission and repeat", () => {
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as { schema: string; cases: CaseJson[] };
    expect(json.schema).toBe("evalgate.calibrate/v1");
    const flaky = json.cases.find((c) => c.suite === "flaky")!;
    const steady = json.cases.find((c) => c.suite === "steady")!;
    // 5 runs × 2 attempts; attempts 5 and 10 fail.
    expect(flaky).toMatchObject({ runs: 5, counted: 10, passed: 8, rate: 0.8 });
    expect(flaky.per_run).toEqual([
      { counted: 2, passed: 2 },
      { counted: 2, passed: 2 },
      { counted: 2, passed: 1 },
      { counted: 2, passed: 2 },
      { counted: 2, passed: 1 },
    ]);
    // scipy: beta.ppf(0.025, 8, 3), beta.ppf(0.975, 9, 2).
    expect(flaky.interval_95[0]).toBeCloseTo(0.4439045376923585, 6);
    expect(flaky.interval_95[1]).toBeCloseTo(0.9747892736731666, 6);
    // Admission (gate/admission.ts): 5 runs; 90 % lower bound beta.ppf(0.10, 8, 3) = 0.55040;
    // repeat 2 at min_rate 0.5 fails when 0 of 2 pass: (1 − 0.55040)² = 0.20214 > 0.005: reported.
    expect(flaky.admission.state).toBe("reported");
    expect(flaky.admission.lower_bound).toBeCloseTo(0.5503961113264141, 6);
    expect(flaky.admission.fail_chance).toBeCloseTo(0.20214365671041024, 6);
    // At 0.8 a fixed repeat 2 fails (0 of 2) with 0.2² = 0.04 ≤ 0.05; repeat 1 with 0.2.
    expect(flaky.recommended_repeat).toBe(2);
    expect(flaky.recommended_fail_chance).toBeCloseTo(0.04, 9);

    expect(steady).toMatchObject({ runs: 5, counted: 20, passed: 20, rate: 1 });
    // beta.ppf(0.025, 20, 1) = 0.025^(1/20).
    expect(steady.interval_95[0]).toBeCloseTo(0.8315665290169146, 6);
    expect(steady.interval_95[1]).toBe(1);
    // 0.1^(1/20) = 0.89125; (1 − 0.89125)⁴ = 0.00013986 ≤ 0.005: admitted.
    expect(steady.admission).toMatchObject({ state: "admitted", runs: 5 });
    expect(steady.admission.fail_chance).toBeCloseTo(0.00013986275434849863, 9);
    expect(steady.recommended_repeat).toBe(1);
  }, 120_000);

  it("its bundles are a base history: --baseline .evalgate/calibrate pools the 5 runs", () => {
    const head = runCli(
      ["run", "steady.eval.yaml", "--out", "head", "--baseline", ".evalgate/calibrate"],
      dir,
    );
    expect(head.code, head.stderr).toBe(0);
    const row = readJsonl<{ change: { base_runs?: number; base_attempts: unknown } }>(
      path.join(dir, "head/index.jsonl"),
    )[0]!;
    expect(row.change).toMatchObject({ base_runs: 5, base_attempts: { counted: 20, passed: 20 } });
  }, 60_000);

  it("prints the table on the console", () => {
    const other = suite();
    const t = runCli(["calibrate", "steady.eval.yaml", "--runs", "1", "--out", "cal"], other);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(/case\s+passed\s+rate\s+95 % interval\s+can gate\s+repeat needed/);
    // 4 of 4: beta.ppf(0.025, 4, 1) = 0.025^(1/4) = 0.3976 → 40 %; 1 run: unproven.
    expect(t.stdout).toMatch(/steady\/answer on bot\s+4\/4\s+100 %\s+40 %–100 %\s+unproven\s+1/);
    expect(t.stdout).toContain("usable as --baseline cal");
  }, 60_000);

  it("bad input is a usage error naming the flag and the fix", () => {
    const zero = runCli(["calibrate", "--runs", "0"], dir);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain("--runs must be a whole number of at least 1");
    mkdirSync(path.join(dir, "full/x"), { recursive: true });
    const full = runCli(["calibrate", "--out", "full"], dir);
    expect(full.code).toBe(2);
    expect(full.stderr).toContain("--out full is not empty");
    expect(full.stderr).toContain("give a new or empty folder");
  });
});
