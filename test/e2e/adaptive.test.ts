import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJson, readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

interface Row {
  target: string;
  verdict: string;
  evidence?: string;
  settle_attempts?: number | null;
  attempts: { planned: number; counted: number; passed: number };
  runs: { attempt: number }[];
  change: { change: string; p_value: number | null } | null;
  summary_path: string;
}
interface Summary {
  gate: { verdict: string; reasons: string[]; warnings: string[] };
}

/**
 * A scripted agent: mode pass always fixes the file, fail never does, alternate fixes it on odd
 * attempts only (a deterministic 50 % agent). The mode is the target's MODE, else the file `mode`
 * next to the eval file (so that a base and a head run of one target can differ).
 */
function suite(gate: string, targets: string): string {
  const dir = tempDir();
  writeFiles(dir, {
    "app/answer.txt": "wrong\n",
    "agent.sh": `#!/bin/sh
MODE=\${MODE:-$(cat "${dir}/mode")}
case "$MODE" in
  pass) echo right > answer.txt ;;
  alternate) [ $((EVALGATE_ATTEMPT % 2)) -eq 1 ] && echo right > answer.txt ;;
esac
exit 0
`,
    "a.eval.yaml": `name: adaptive
targets: ${targets}
repeat: { min: 3, max: 10 }
concurrency: 2
gate: ${gate}
workspace: { seed: { path: app } }
tests:
  - { id: answer, instruction: "write right", scorers: [{ type: file, path: answer.txt, contains: right }] }
`,
  });
  sh("chmod +x agent.sh", dir);
  return dir;
}

const target = (name: string, mode: string) =>
  `{ name: ${name}, provider: command, command: ["./agent.sh"], env: { MODE: ${mode} } }`;

describe("adaptive attempts in a real run", () => {
  it("gives a flaky agent more attempts than a stable one, neither past max", () => {
    const dir = suite(
      "{ policy: attempt_success_rate_at_least, threshold: 0.5 }",
      `[${target("flaky", "alternate")}, ${target("stable", "pass")}]`,
    );
    const r = runCli(["run", "--out", "b"], dir);
    const rows = readJsonl<Row>(path.join(dir, "b/index.jsonl"));
    const flaky = rows.find((x) => x.target === "flaky")!;
    const stable = rows.find((x) => x.target === "stable")!;
    // 3 of 3 cannot show "≥ 0.5" at α = 0.05 (it happens 1 time in 8 at 0.5); 5 of 5 can.
    expect(stable.attempts).toMatchObject({ planned: 5, counted: 5, passed: 5 });
    expect(stable.evidence).toBe("decided");
    expect(flaky.attempts.counted).toBeGreaterThan(stable.attempts.counted);
    expect(flaky.attempts.counted).toBe(10);
    expect(Math.max(...flaky.runs.map((x) => x.attempt))).toBe(10);
    // 5 of 10 sits on the threshold: the point estimate passes it, reported as inconclusive.
    expect(flaky).toMatchObject({ verdict: "pass", evidence: "inconclusive" });
    const caseSummary = readJson<{ evidence: string; repeat: unknown }>(
      path.join(dir, "b", flaky.summary_path),
    );
    expect(caseSummary).toMatchObject({ evidence: "inconclusive", repeat: { min: 3, max: 10 } });
    const summary = readJson<Summary>(path.join(dir, "b/summary.json"));
    expect(r.code).toBe(0);
    expect(summary.gate.warnings.join("\n")).toContain(
      "adaptive/answer on flaky: inconclusive: 5 of 10 attempts passed, the verdict follows the point estimate (pass)",
    );
  });

  it("on_inconclusive: fail fails the gate on that case; --repeat N keeps a fixed count", () => {
    const dir = suite(
      "{ policy: attempt_success_rate_at_least, threshold: 0.5, on_inconclusive: fail }",
      `[${target("flaky", "alternate")}]`,
    );
    const r = runCli(["run", "--out", "b"], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("(inconclusive; gate.on_inconclusive: fail)");
    runCli(["run", "--out", "fixed", "--repeat", "4"], dir);
    expect(readJsonl<Row>(path.join(dir, "fixed/index.jsonl"))[0]!.attempts.counted).toBe(4);
    runCli(["run", "--out", "range", "--repeat", "2..4"], dir);
    expect(readJsonl<Row>(path.join(dir, "range/index.jsonl"))[0]!.attempts.counted).toBe(4);
    const bad = runCli(["run", "--repeat", "5..3"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--repeat MIN..MAX needs 1 <= MIN <= MAX");
  });
});

describe("regressions that need evidence, in a real run", () => {
  // min_case_pass_rate: 0, so that only the regression rule can block the merge.
  const gate = "{ policy: all_attempts_successful, min_case_pass_rate: 0 }";

  it("base 3/3 vs an agent that now always fails: a significant regression that fails the gate", () => {
    const dir = suite(gate, `[{ name: bot, provider: command, command: ["./agent.sh"] }]`);
    writeFiles(dir, { mode: "pass" });
    expect(runCli(["run", "--out", "base"], dir).code).toBe(0);
    writeFiles(dir, { mode: "fail" });
    const head = runCli(["run", "--out", "head", "--baseline", "base"], dir);
    expect(head.code).toBe(1);
    const row = readJsonl<Row>(path.join(dir, "head/index.jsonl"))[0]!;
    // 0 of 3 is not yet significant over the looks of {3, 10} (the first look is held to a
    // stricter bound); the drop stays open until it is.
    expect(row.attempts.counted).toBeGreaterThan(3);
    expect(row.attempts.counted).toBeLessThanOrEqual(10);
    expect(row.change).toMatchObject({ change: "regressed" });
    expect(row.change!.p_value).toBeLessThanOrEqual(0.05);
    expect(head.stdout).toMatch(
      /adaptive\/answer on bot: regressed: 0 of \d+ attempts passed \(base 3 of 3\), p = 0\.0\d\d/,
    );
  });

  it("base 3/3 vs an agent at 50 %: no blocked merge, a possible regression reported", () => {
    const dir = suite(gate, `[{ name: bot, provider: command, command: ["./agent.sh"] }]`);
    writeFiles(dir, { mode: "pass" });
    runCli(["run", "--out", "base"], dir);
    writeFiles(dir, { mode: "alternate" });
    const head = runCli(["run", "--out", "head", "--baseline", "base"], dir);
    expect(head.code).toBe(0);
    const row = readJsonl<Row>(path.join(dir, "head/index.jsonl"))[0]!;
    expect(row.verdict).toBe("fail");
    // The drop stayed open for a while: more attempts than min, never past max.
    expect(row.attempts.counted).toBeGreaterThan(3);
    expect(row.attempts.counted).toBeLessThanOrEqual(10);
    const summary = readJson<Summary>(path.join(dir, "head/summary.json"));
    expect(summary.gate.verdict).toBe("pass");
    expect(summary.gate.warnings.join("\n")).toMatch(
      /adaptive\/answer on bot: possible regression: \d+ of \d+ attempts passed \(base 3 of 3\), p = 0\.\d+; not significant after Holm's correction over 1 case \(α = 0\.05\)/,
    );
  });
});

describe("eval files that set repeat", () => {
  it("refuses a range whose max is below its min, naming file and key", () => {
    const dir = suite("{ policy: all_attempts_successful }", `[${target("bot", "pass")}]`);
    sh("sed -i 's/^repeat: .*/repeat: { min: 5, max: 3 }/' a.eval.yaml", dir);
    const r = runCli(["validate"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/a\.eval\.yaml:\d+: repeat: max must be at least min/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("validate warns when the attempts can never make a regression significant", () => {
    const dir = suite("{ policy: all_attempts_successful }", `[${target("bot", "pass")}]`);
    sh("sed -i 's/^repeat: .*/repeat: 2/' a.eval.yaml", dir);
    const r = runCli(["validate"], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "note: a.eval.yaml: gate.regressions: with 2 attempts on each side no drop can be significant at α = 0.05; use repeat: {min: 3, max: 3}",
    );
    // The plain form stays valid; ignore, or 3 attempts a side, say nothing.
    sh("sed -i 's/^repeat: .*/repeat: 3/' a.eval.yaml", dir);
    expect(runCli(["validate"], dir).stdout).not.toContain("note:");
    sh("sed -i 's/^repeat: .*/repeat: 2/; s/^gate: .*/gate: { regressions: ignore }/' a.eval.yaml", dir);
    expect(runCli(["validate"], dir).stdout).not.toContain("note:");
  });
});

describe("the evidence of a failing scorer in the reports", () => {
  it("the reason keeps expected/actual; the comment and report.html show the end of the scorer's log", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "app/total.js": "module.exports = () => Number.NaN;\n",
      "app/total.test.js":
        'const test = require("node:test");\nconst assert = require("node:assert");\ntest("empty total", () => assert.strictEqual(require("./total.js")(), 0));\n',
      "agent.sh": "#!/bin/sh\nexit 0\n",
      "r.eval.yaml": `name: evidence
targets: [{ name: bot, provider: command, command: ["./agent.sh"] }]
workspace: { seed: { path: app } }
tests:
  - id: total
    instruction: "fix total"
    scorers: [{ name: unit, type: command, run: "node --test --test-reporter=spec total.test.js; echo scorer-log-end-marker; exit 1" }]
`,
    });
    sh("chmod +x agent.sh", dir);
    const r = runCli(["run", "--out", "b"], dir);
    expect(r.code).toBe(1);
    const comment = readFileSync(path.join(dir, "b/comment.md"), "utf8");
    expect(comment).toContain("Expected values to be strictly equal: NaN !== 0 (expected 0, actual NaN)");
    expect(comment).toMatch(
      /Log of scorer `unit` in attempt 1[^:]*:\n\n```text\n[\s\S]*scorer-log-end-marker\n```/,
    );
    const html = readFileSync(path.join(dir, "b/report.html"), "utf8");
    expect(html).toContain("<summary>log, the last lines</summary>");
    expect(html).toContain("scorer-log-end-marker");
    expect(html).toContain('<svg class="timeline"');
  });
});

/**
 * The flaky checks below count their runs in a file outside the workspace, across attempts: a
 * contained scorer cannot write there (docs/threat-model.md), so these runs leave grading
 * uncontained. They test the reruns, not the containment.
 */
const COUNTING = { EVALGATE_ISOLATION: "none" };

describe("verify_repeats", () => {
  it("an attempt whose scorers disagree with themselves is a verifier_flake, kept but not counted", () => {
    const dir = tempDir();
    // The check passes on its 1st and 3rd run, fails on the 2nd: a flaky verifier, not the agent.
    writeFiles(dir, {
      "app/x.txt": "x\n",
      "agent.sh": "#!/bin/sh\necho changed >> x.txt\nexit 0\n",
      "check.sh": `#!/bin/sh\nn=$(cat "${dir}/count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "${dir}/count"\n[ $((n % 2)) -eq 1 ]\n`,
      "v.eval.yaml": `name: verify
targets: [{ name: bot, provider: command, command: ["./agent.sh"] }]
workspace: { seed: { path: app } }
tests:
  - id: t
    instruction: "change x"
    verify_repeats: 2
    scorers: [{ name: check, type: command, run: ["${dir}/check.sh"] }]
`,
    });
    sh("chmod +x agent.sh check.sh", dir);
    const r = runCli(["run", "--out", "b"], dir, COUNTING);
    const row = readJsonl<
      Row & { classification: string; reason: string; runs: { failure_kind: string | null; dir: string }[] }
    >(path.join(dir, "b/index.jsonl"))[0]!;
    expect(row.runs[0]!.failure_kind).toBe("verifier_flake");
    expect(row.classification).toBe("verifier_flake");
    expect(row.attempts.counted).toBe(0);
    expect(row.verdict).toBe("error");
    expect(row.reason).toContain("no attempt could be counted");
    // The reruns' logs are kept beside the first.
    expect(existsSync(path.join(dir, "b", row.runs[0]!.dir, "verify-2/scorers/check.log"))).toBe(true);
    expect(r.code).toBe(1);
  });
});

describe("verify_repeats on a scorer, and the automatic rerun", () => {
  type VRow = Omit<Row, "runs"> & {
    classification: string;
    reason: string;
    runs: { attempt: number; status: string; failure_kind: string | null; dir: string }[];
  };
  /**
   * A check that counts its own runs in a file outside the workspace and fails on the runs listed
   * in FAIL_ON (a flaky verifier, deterministic); an agent that fixes the file except on the
   * attempts listed in its SKIP.
   */
  function verifySuite(test: string, scorerExtra: string, failOn: string, skip = ""): string {
    const dir = tempDir();
    writeFiles(dir, {
      "app/answer.txt": "wrong\n",
      // The calibration of a disagreeing attempt grades this reference (docs/gate.md, "Verifier flakes").
      "fix.patch": "--- a/answer.txt\n+++ b/answer.txt\n@@ -1 +1 @@\n-wrong\n+right\n",
      "agent.sh": `#!/bin/sh\ncase " ${skip} " in *" $EVALGATE_ATTEMPT "*) exit 0 ;; esac\necho right > answer.txt\n`,
      "check.sh": `#!/bin/sh\nn=$(cat "${dir}/count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "${dir}/count"\ncase " ${failOn} " in *" $n "*) exit 1 ;; esac\ngrep -q right answer.txt\n`,
      "v.eval.yaml": `name: verify
targets: [{ name: bot, provider: command, command: ["./agent.sh"] }]
repeat: 3
concurrency: 1
workspace: { seed: { path: app } }
tests:
  - id: t
    instruction: "write right"
    reference: fix.patch
${test}    scorers:
      - { name: check, type: command, run: ["${dir}/check.sh"]${scorerExtra} }
      - { name: steady, type: file, path: answer.txt, contains: right }
`,
    });
    sh("chmod +x agent.sh check.sh", dir);
    return dir;
  }
  const rowOf = (dir: string) => readJsonl<VRow>(path.join(dir, "b/index.jsonl"))[0]!;
  const resultOf = (dir: string, run: { dir: string }) =>
    readJson<{ verify: unknown; message: string | null }>(path.join(dir, "b", run.dir, "result.json"));

  it("a scorer's own verify_repeats reruns that scorer only; its disagreement is a verifier_flake", () => {
    // Runs 1-3 are attempt 1 (the first and 2 reruns): run 2 fails; runs 4-6 calibrate the check on
    // the reference, and run 5 fails: the check disagrees with itself there too.
    const dir = verifySuite("", ", verify_repeats: 2", "2 5");
    const r = runCli(["run", "--out", "b"], dir, COUNTING);
    const row = rowOf(dir);
    expect(row.runs[0]!.failure_kind).toBe("verifier_flake");
    expect(row.classification).toBe("verifier_flake");
    expect(row.attempts).toMatchObject({ counted: 2, passed: 2 });
    expect(row.verdict).toBe("pass");
    expect(r.code).toBe(0);
    const first = resultOf(dir, row.runs[0]!);
    expect(first.verify).toEqual({
      runs: 3,
      passed: 2,
      automatic: false,
      scorers: ["check"],
      calibration: { on: "reference", runs: 3, passed: 2, changed: ["check"], dir: "run-1" },
    });
    expect(first.message).toContain("passed 2 of 3 runs (check changed) (verify_repeats)");
    const run1 = path.join(dir, "b", row.runs[0]!.dir);
    expect(existsSync(path.join(run1, "verify-2/scorers/check.log"))).toBe(true);
    // The other scorer kept its first result: it did not run again.
    expect(existsSync(path.join(run1, "verify-1/scorers/steady.log"))).toBe(false);
    // Every attempt's check ran 3 times (attempts 2 and 3 agreed with themselves), and 3 calibrations.
    expect(readFileSync(path.join(dir, "count"), "utf8").trim()).toBe("12");
  });

  it("the only failing attempt among passes gets its scorers rerun: a flaky check is not the agent's", () => {
    // Attempts 1 and 2 pass (runs 1, 2); attempt 3's first check (run 3) fails, its reruns pass;
    // the calibration on the reference (runs 6-8) fails run 7.
    const dir = verifySuite("", "", "3 7");
    const r = runCli(["run", "--out", "b"], dir, COUNTING);
    const row = rowOf(dir);
    const third = row.runs.find((x) => x.attempt === 3)!;
    expect(third.failure_kind).toBe("verifier_flake");
    expect(resultOf(dir, third).verify).toEqual({
      runs: 3,
      passed: 2,
      automatic: true,
      scorers: ["check", "steady"],
      calibration: { on: "reference", runs: 3, passed: 2, changed: ["check"], dir: "run-3" },
    });
    expect(resultOf(dir, third).message).toContain("automatic rerun");
    expect(row).toMatchObject({ verdict: "pass", classification: "verifier_flake" });
    expect(row.attempts).toMatchObject({ counted: 2, passed: 2 });
    expect(r.code).toBe(0);
    // Attempts that agreed with their case were not rerun.
    expect(resultOf(dir, row.runs[0]!).verify).toBeNull();
    expect(readFileSync(path.join(dir, "count"), "utf8").trim()).toBe("8");
  });

  it("a real odd failure is rerun, confirmed, and counted against the agent", () => {
    const dir = verifySuite("", "", "", "3");
    const r = runCli(["run", "--out", "b"], dir, COUNTING);
    const row = rowOf(dir);
    const third = row.runs.find((x) => x.attempt === 3)!;
    expect(third.status).toBe("failed");
    expect(resultOf(dir, third).verify).toMatchObject({ runs: 3, passed: 0, automatic: true });
    expect(row).toMatchObject({ verdict: "fail", classification: "flaky" });
    expect(r.code).toBe(1);
  });

  it("verify_repeats: 0 on the test turns the automatic rerun off", () => {
    const dir = verifySuite("    verify_repeats: 0\n", "", "3");
    const r = runCli(["run", "--out", "b"], dir, COUNTING);
    const row = rowOf(dir);
    const third = row.runs.find((x) => x.attempt === 3)!;
    expect(third.status).toBe("failed");
    expect(resultOf(dir, third).verify).toBeNull();
    expect(existsSync(path.join(dir, "b", third.dir, "verify-1"))).toBe(false);
    expect(row.verdict).toBe("fail");
    expect(r.code).toBe(1);
  });

  it("refuses a negative verify_repeats on a scorer, naming file and key", () => {
    const dir = verifySuite("", ", verify_repeats: -1", "");
    const r = runCli(["validate"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /v\.eval\.yaml:\d+: tests\[0\]\.scorers\[0\]\.verify_repeats: number -1 is out of range: must be at least 0/,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("no attempt or retry for a case already decided", () => {
  /** The `[done/total]` counters of the CLI's progress lines (CI: one line per finished attempt). */
  const counters = (stdout: string) =>
    [...stdout.matchAll(/^\[(\d+)\/(\d+)[^\]]*\]/gm)].map((m) => [Number(m[1]), Number(m[2])] as const);

  /** Every attempt errors before its agent runs: setup cannot start (a case that can only be `error`). */
  function agentSuite(gate: string, repeat: string, agent: string): string {
    const dir = tempDir();
    writeFiles(dir, {
      "app/answer.txt": "wrong\n",
      "a.eval.yaml": `name: decided
targets: [{ name: bot, provider: command, command: ${agent} }]
repeat: ${repeat}
concurrency: 1
gate: ${gate}
workspace: { seed: { path: app }, setup: { command: "no-such-tool" } }
tests:
  - { id: answer, instruction: "write right", scorers: [{ type: file, path: answer.txt, contains: right }] }
`,
    });
    return dir;
  }

  it("an agent that cannot start gets min attempts, not max (on_error: exclude)", () => {
    // before: every attempt errored, none counted, the case stayed "open": 20 tries and [20/3].
    const dir = agentSuite(
      "{ policy: attempt_success_rate_at_least, min_rate: 0.5, on_error: exclude }",
      "{ min: 3, max: 20 }",
      '["true"]',
    );
    const r = runCli(["run", "--out", "b"], dir);
    const row = readJsonl<Row>(path.join(dir, "b/index.jsonl"))[0]!;
    expect(row.verdict).toBe("error");
    expect(row.runs.length).toBe(3);
    expect(counters(r.stdout)).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it("retries stop once another attempt errored for good (on_error: retry)", () => {
    // before: each of the 3 attempts got its 3 retries: 12 tries of an agent that cannot start.
    const dir = agentSuite(
      "{ policy: all_attempts_successful, on_error: retry, retries: 3 }",
      "3",
      '["true"]',
    );
    const r = runCli(["run", "--out", "b"], dir);
    const row = readJsonl<Row>(path.join(dir, "b/index.jsonl"))[0]!;
    expect(row.verdict).toBe("error");
    // Attempt 1: its first try and 3 retries; attempts 2 and 3: one try each (the case is error).
    expect(row.runs.length).toBe(6);
    expect(r.stdout.match(/\(retry \d\)/g)).toHaveLength(3);
  });

  it("the progress counter's total grows with adaptive attempts: never [10/3]", () => {
    // before: adaptive attempts counted as done but not in the total: the counter ended at [10/3].
    const dir = suite(
      "{ policy: attempt_success_rate_at_least, min_rate: 0.5 }",
      `[{ name: bot, provider: command, command: ["./agent.sh"] }]`,
    );
    writeFiles(dir, { mode: "alternate" });
    const r = runCli(["run", "--out", "b"], dir);
    const row = readJsonl<Row>(path.join(dir, "b/index.jsonl"))[0]!;
    expect(row.attempts.counted).toBeGreaterThan(3);
    const seen = counters(r.stdout);
    expect(seen.length).toBe(row.runs.length);
    for (const [done, total] of seen) expect(done).toBeLessThanOrEqual(total);
    expect(seen.at(-1)).toEqual([row.runs.length, row.runs.length]);
    // One name per idea: the case summary records the policy's rate as min_rate (before: threshold).
    const caseSummary = readJson<{ policy: Record<string, unknown> }>(path.join(dir, "b", row.summary_path));
    expect(caseSummary.policy).toEqual({
      name: "attempt_success_rate_at_least",
      min_rate: 0.5,
      on_error: "fail",
    });
  });
});
