import { cpSync, existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, readJson, readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

interface Row {
  test_id: string;
  target: string;
  verdict: string;
  classification: string;
  flaky: boolean;
  change: {
    change: string;
    p_value: number | null;
    significant: boolean;
    success_rate_delta: number | null;
  } | null;
  attempts: { counted: number; passed: number; errored: number; retried: number; cancelled: number };
  result_dir: string;
  runs: { attempt: number; retry: number; status: string; failure_kind: string | null; dir: string }[];
}

describe("the flaky example (repeat 4)", () => {
  const out = path.join(tempDir(), "flaky");
  const r = runCli(["run", "examples/flaky", "--out", out], ROOT);
  const rows = () => readJsonl<Row>(path.join(out, "index.jsonl"));

  it("shows flaky in the console, index.jsonl and summary.json", () => {
    expect(r.code).toBe(0);
    // One name per idea: the example uses min_rate (before: threshold, which validate asks to rename).
    expect(r.stdout + r.stderr).not.toContain("old name of min_rate");
    expect(r.stdout).toMatch(/✓ pass\s+flaky\/empty-cart-total\s+flaky-agent\s+2\/4\s+50 %\s+flaky/);
    const flaky = rows().find((x) => x.target === "flaky-agent")!;
    expect(flaky).toMatchObject({ classification: "flaky", flaky: true, verdict: "pass" });
    // on_error: retry never retries a quality failure.
    expect(flaky.attempts).toMatchObject({ counted: 4, passed: 2, retried: 0 });
    const summary = readJson<{ counts: { flaky: number }; targets: { name: string; flaky: number }[] }>(
      path.join(out, "summary.json"),
    );
    expect(summary.counts.flaky).toBe(2); // the crashy agent's crash is its own failure: 3 of 4
    expect(summary.targets.find((t) => t.name === "flaky-agent")!.flaky).toBe(1);
  });

  it("keeps the crash as evidence and counts it as the agent's failure, never retried", () => {
    // before (grading-integrity): an agent's crash was an error, retried under on_error: retry, so an
    // agent could turn its failures into fresh tries by exiting 1.
    const crashy = rows().find((x) => x.target === "crashy-agent")!;
    expect(crashy).toMatchObject({ verdict: "pass", classification: "flaky" });
    expect(crashy.attempts).toMatchObject({ counted: 4, passed: 3, errored: 0, retried: 0 });
    const crash = crashy.runs.find((x) => x.attempt === 2 && x.retry === 0)!;
    expect(crash).toMatchObject({
      status: "failed",
      failure_kind: "agent_exit",
      dir: `${crashy.result_dir}/run-2`,
    });
    expect(crashy.runs.find((x) => x.attempt === 2 && x.retry === 1)).toBeUndefined();
    const crashResult = readJson<{ message: string }>(path.join(out, crash.dir, "result.json"));
    expect(crashResult.message).toContain("529 overloaded_error");
    expect(existsSync(path.join(out, crash.dir, "agent.log"))).toBe(true);
  });

  it.each([
    ["all_attempts_successful", "", "fail"],
    ["any_attempt_successful", "", "pass"],
    ["attempt_success_rate_at_least", "threshold: 0.5", "pass"],
    ["attempt_success_rate_at_least", "threshold: 0.75", "fail"],
    ["mean_pass_rate_at_least", "threshold: 0.5", "pass"],
    ["mean_pass_rate_at_least", "threshold: 0.6", "fail"],
  ])("decides the flaky case with %s %s as %s", (policy, threshold, verdict) => {
    const dir = tempDir();
    const rel = path.relative(dir, path.join(ROOT, "examples/flaky/flaky.eval.yaml"));
    writeFiles(dir, {
      "wrap.eval.yaml": `gate: { policy: ${policy}${threshold ? `, ${threshold}` : ""} }\ntests:\n  - { include: "${rel}", type: suite }\n`,
    });
    const res = runCli(["run", "--target", "flaky-agent", "--out", "b"], dir);
    const row = readJsonl<Row>(path.join(dir, "b/index.jsonl"))[0]!;
    expect(row.verdict).toBe(verdict);
    expect(row.classification).toBe("flaky");
    expect(res.code).toBe(verdict === "pass" ? 0 : 1);
    if (verdict === "fail")
      expect(res.stdout).toContain("flaky/empty-cart-total on flaky-agent: 2 of 4 attempts passed");
  });
});

/** An eval whose agent passes attempts up to $PASS_UPTO and crashes on attempt $CRASH_AT. */
function counterSuite(): string {
  const dir = tempDir();
  writeFiles(dir, {
    "app/answer.txt": "wrong\n",
    "agent.sh": `#!/bin/sh
[ "$EVALGATE_ATTEMPT" = "\${CRASH_AT:-0}" ] && { echo "crash" >&2; exit 1; }
touch ran
[ "$EVALGATE_ATTEMPT" -le "\${PASS_UPTO:-0}" ] && echo right > answer.txt
exit 0
`,
    "c.eval.yaml": `name: counter
targets: [{ name: bot, provider: command, command: ["./agent.sh"], env_passthrough: [PASS_UPTO, CRASH_AT] }]
repeat: 5
concurrency: 2
workspace: { seed: { path: app } }
tests:
  - id: answer
    instruction: "write right"
    # A crash leaves what the scorer cannot grade (no \`ran\` marker), and the scorer cannot grade the
    # start tree either: evalgate cannot tell the agent's doing from the scorer's, so it is an error,
    # not counted (docs/decisions/0247). A scorer that grades the start tree but not the agent's
    # workspace would make the crash the agent's failure, as would an agent's own crash alone.
    scorers:
      - type: script
        run: "if [ ! -e ran ]; then echo garbled; elif grep -q right answer.txt; then echo score=1; else echo score=0; fi"
`,
  });
  sh("chmod +x agent.sh", dir);
  return dir;
}

describe("baseline comparison", () => {
  const dir = counterSuite();
  const base = runCli(["run", "--out", "base"], dir, { PASS_UPTO: "5" });
  const head = runCli(["run", "--out", "head", "--baseline", "base"], dir, { PASS_UPTO: "1" });

  it("reports 5/5 → 1/5 as a significant regression and fails the gate", () => {
    expect(base.code).toBe(0);
    expect(head.code).toBe(1);
    expect(head.stdout).toContain(
      "counter/answer on bot: regressed: 1 of 5 attempts passed (base 5 of 5), p = 0.011",
    );
    const row = readJsonl<Row>(path.join(dir, "head/index.jsonl"))[0]!;
    expect(row.change).toMatchObject({ change: "regressed", significant: true, success_rate_delta: -0.8 });
    // Barnard's one-sided test (Fisher's gave 0.024).
    expect(row.change!.p_value).toBeCloseTo(0.0107, 4);
    const summary = readJson<{ comparison: { regressed: number; baseline_run_id: string } }>(
      path.join(dir, "head/summary.json"),
    );
    expect(summary.comparison.regressed).toBe(1);
  });

  it("compare prints markdown and JSON and exits 1 on the regression", () => {
    const md = runCli(["compare", "base", "head"], dir);
    expect(md.code).toBe(1);
    expect(md.stdout).toContain("## ❌ evalgate compare: 1 regression");
    // before: "p (one-sided Fisher)", though the p-value is Barnard's.
    expect(md.stdout).toContain("| p (Barnard's exact test, one-sided) |");
    expect(md.stdout).toMatch(
      /\| ❌ regressed \| counter\/answer \| bot \| 5\/5 \| 1\/5 flaky \| −80 pp \| 0\.011 \(significant\) \|/,
    );
    const json = runCli(["compare", "base", "head", "--format", "json"], dir);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.verdict).toBe("fail");
    expect(parsed.cases[0]).toMatchObject({
      change: "regressed",
      counted_by_gate: true,
      base_attempts: { counted: 5, passed: 5 },
    });
    const same = runCli(["compare", "base", "base"], dir);
    expect(same.code).toBe(0);
  });

  it("does not report 5/5 → 4/5 with one errored attempt as a change", () => {
    const r = runCli(["run", "--out", "crashy", "--baseline", "base"], dir, {
      PASS_UPTO: "5",
      CRASH_AT: "3",
    });
    const row = readJsonl<Row>(path.join(dir, "crashy/index.jsonl"))[0]!;
    expect(row.attempts).toMatchObject({ counted: 4, passed: 4, errored: 1 });
    expect(row.change).toMatchObject({ change: "unchanged", success_rate_delta: 0, significant: false });
    expect(r.stdout).not.toMatch(/: regressed|\bregressed \(base/);
    expect(r.stdout).toContain("unchanged (base 5/5)");
    const cmp = JSON.parse(runCli(["compare", "base", "crashy", "--format", "json"], dir).stdout);
    expect(cmp.counts).toMatchObject({ regressed: 0, improved: 0, unchanged: 1 });
  });

  it("warns instead of failing with regressions: warn, and names a bad baseline folder", () => {
    const warnDir = counterSuite();
    sh("sed -i 's/^repeat: 5/repeat: 5\\ngate: { regressions: warn }/' c.eval.yaml", warnDir);
    runCli(["run", "--out", "base"], warnDir, { PASS_UPTO: "5" });
    const r = runCli(["run", "--out", "head", "--baseline", "base"], warnDir, { PASS_UPTO: "0" });
    expect(r.stdout).toContain("! counter/answer on bot: regressed");
    const summary = readJson<{ gate: { warnings: string[] } }>(path.join(warnDir, "head/summary.json"));
    expect(summary.gate.warnings).toHaveLength(1);
    const bad = runCli(["run", "--baseline", "nope"], warnDir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--baseline: nope does not exist");
  });
});

describe("matching cases by identity", () => {
  it("never matches two eval files' cases by test id and target alone", () => {
    const dir = tempDir();
    // Two eval files with the same test id and target; each agent passes when its file's variable is 1.
    const suite = (which: string) => `name: same
targets: [{ name: bot, provider: command, command: ["./agent.sh"], env: { WHICH: ${which} }, env_passthrough: [PASS_a, PASS_b] }]
gate: { min_case_pass_rate: 0, regressions: { evidence: any } }
workspace: { seed: { path: app } }
tests:
  - { id: answer, instruction: "write right", scorers: [{ type: file, path: answer.txt, contains: right }] }
`;
    writeFiles(dir, {
      "app/answer.txt": "wrong\n",
      "agent.sh":
        '#!/bin/sh\neval "want=\\$PASS_$WHICH"\n[ "$want" = 1 ] && echo right > answer.txt\nexit 0\n',
      "a.eval.yaml": suite("a"),
      "b.eval.yaml": suite("b"),
    });
    sh("chmod +x agent.sh", dir);
    expect(runCli(["run", "--out", "base"], dir, { PASS_a: "1", PASS_b: "0" }).code).toBe(0);
    runCli(["run", "--out", "head"], dir, { PASS_a: "0", PASS_b: "1" });
    const cmp = runCli(["compare", "base", "head", "--format", "json"], dir);
    expect(cmp.code).toBe(1);
    const cases = JSON.parse(cmp.stdout).cases as { eval_path: string; change: string }[];
    expect(cases.map((c) => [c.eval_path, c.change]).sort()).toEqual([
      ["a.eval.yaml", "regressed"],
      ["b.eval.yaml", "improved"],
    ]);
  });
});

describe("budget", () => {
  it("stops scheduling once the duration budget is spent, cancels the rest and fails with the reason", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "slow.eval.yaml": `name: slow
targets: [{ name: sleeper, provider: command, command: "sleep 1" }]
repeat: 6
concurrency: 1
gate: { budget: { duration: 2500ms } }
workspace: { seed: { empty: true } }
tests:
  - { id: nap, instruction: nap, scorers: [{ type: command, run: "true" }] }
`,
    });
    const r = runCli(["run", "--out", "b"], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /slow: the duration budget of 2\.5 s ran out; \d attempts? (was|were) cancelled \(gate\.budget\)/,
    );
    const row = readJsonl<Row>(path.join(dir, "b/index.jsonl"))[0]!;
    expect(row.verdict).toBe("error");
    expect(row.attempts.cancelled).toBeGreaterThanOrEqual(2);
    const cancelled = row.runs.filter((x) => x.failure_kind === "cancelled");
    const stopped = row.runs.filter((x) => x.failure_kind === "budget_exceeded");
    expect(cancelled.length + stopped.length).toBe(row.attempts.cancelled);
    expect(cancelled.length).toBeGreaterThanOrEqual(2);
    const rec = readJson<{ failure_stage: string; message: string }>(
      path.join(dir, "b", cancelled[0]!.dir, "result.json"),
    );
    expect(rec.failure_stage).toBe("budget");
    expect(rec.message).toContain("not run: the duration budget of 2.5 s ran out");
  });
});

describe("cost budget", () => {
  it("stops scheduling once the agents' reported cost exceeds it, and cancels the rest", () => {
    const dir = tempDir();
    cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(dir, "project"), { recursive: true });
    const agent = path.join(ROOT, "test/fixtures/agents/report-agent.mjs");
    writeFiles(dir, {
      // Each attempt reports $0.0125: the second one takes the run past $0.02.
      "paid.eval.yaml": `name: paid
targets: [{ name: priced, provider: command, command: ["${agent}", "ok", "{OUTPUT_FILE}"] }]
repeat: 4
concurrency: 1
gate: { budget: { cost_usd: 0.02 } }
workspace: { seed: { path: project } }
tests:
  - { id: total, instruction: fix it, scorers: [{ type: command, run: "node --test test/total.test.js" }] }
`,
    });
    const r = runCli(["run", "--out", "b"], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "paid: the cost budget of $0.02 was exceeded ($0.03 spent); 2 attempts were cancelled (gate.budget)",
    );
    const row = readJsonl<Row>(path.join(dir, "b/index.jsonl"))[0]!;
    expect(row.verdict).toBe("error");
    expect(row.runs.map((x) => x.status)).toEqual(["passed", "passed", "error", "error"]);
    expect(row.runs.slice(2).map((x) => x.failure_kind)).toEqual(["cancelled", "cancelled"]);
    const summary = readJson<{ usage: { cost_usd: number } }>(path.join(dir, "b/summary.json"));
    expect(summary.usage.cost_usd).toBe(0.025);
  });
});
