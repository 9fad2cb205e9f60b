import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJson, readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

interface Row {
  history_key?: string;
  change: {
    change: string;
    base_attempts: { counted: number; passed: number } | null;
    base_runs?: number;
    key_changed?: boolean;
    p_value: number | null;
  } | null;
}

/** An agent that fixes the file unless the file `mode` next to the eval file says fail. */
function suite(): string {
  const dir = tempDir();
  writeFiles(dir, {
    "app/answer.txt": "wrong\n",
    "agent.sh": `#!/bin/sh\n[ "$(cat "${dir}/mode")" = fail ] || echo right > answer.txt\nexit 0\n`,
    mode: "pass",
    "a.eval.yaml": `name: pooled
targets: [{ name: bot, provider: command, command: ["./agent.sh"] }]
repeat: 3
gate: { policy: all_attempts_successful, min_case_pass_rate: 0 }
workspace: { seed: { path: app } }
tests:
  - { id: answer, instruction: "write right", scorers: [{ type: file, path: answer.txt, contains: right }] }
`,
  });
  sh("chmod +x agent.sh", dir);
  return dir;
}

describe("the base branch's history as the baseline", () => {
  const dir = suite();
  for (const i of [1, 2, 3]) runCli(["run", "--out", `base/r${i}`], dir);

  it("evalgate history shows a case's runs and what they pool", () => {
    const r = runCli(["history", "base"], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("pooled/answer on bot (a.eval.yaml)");
    expect(r.stdout).toContain("pooled: 9 of 9 attempts over 3 runs = 100 %");
    const json = JSON.parse(runCli(["history", "base", "--json"], dir).stdout);
    expect(json.schema).toBe("evalgate.history/v1");
    expect(json.cases[0].runs).toHaveLength(3);
    expect(json.cases[0].history_key).toMatch(/^sha256:/);
  });

  it("--baseline DIR pools every bundle in it; --baseline B1 --baseline B2 pools those", () => {
    writeFiles(dir, { mode: "fail" });
    const head = runCli(["run", "--out", "head", "--baseline", "base"], dir);
    expect(head.code).toBe(1);
    const row = readJsonl<Row>(path.join(dir, "head/index.jsonl"))[0]!;
    expect(row.change).toMatchObject({
      change: "regressed",
      base_attempts: { counted: 9, passed: 9 },
      base_runs: 3,
    });
    // 9/9 → 0/3 (before, one base run of 3: p = 1/64).
    expect(row.change!.p_value).toBeLessThan(0.005);
    const summary = readJson<{ comparison: { baseline_runs: number } }>(path.join(dir, "head/summary.json"));
    expect(summary.comparison.baseline_runs).toBe(3);
    expect(head.stdout).toContain("(newest of 3 runs pooled)");
    expect(readFileSync(path.join(dir, "head/report.html"), "utf8")).toContain('<svg class="history"');

    const two = runCli(["run", "--out", "two", "--baseline", "base/r1", "--baseline", "base/r2"], dir);
    expect(two.code).toBe(1);
    expect(readJsonl<Row>(path.join(dir, "two/index.jsonl"))[0]!.change).toMatchObject({
      base_attempts: { counted: 6, passed: 6 },
      base_runs: 2,
    });
  });

  it("a changed exam starts a new history: the newest base run is compared alone, flagged", () => {
    const changed = suite();
    sh(`cp -r ${dir}/base ${changed}/base`, changed);
    sh("sed -i 's/write right/write right, please/' a.eval.yaml", changed);
    runCli(["run", "--out", "head", "--baseline", "base"], changed);
    const row = readJsonl<Row>(path.join(changed, "head/index.jsonl"))[0]!;
    expect(row.change).toMatchObject({ base_attempts: { counted: 3, passed: 3 }, key_changed: true });
    expect(row.change!.base_runs).toBeUndefined();
  });

  it("a folder that holds no bundle is named, with the reader's reason", () => {
    writeFiles(dir, { "empty/note.txt": "x" });
    const r = runCli(["run", "--out", "nope", "--baseline", "empty"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--baseline: empty is not an evalgate bundle: it has no summary.json");
  });
});

/**
 * An agent that succeeds at a rate, through the real CLI: a counter over all its attempts (kept
 * beside the eval file, concurrency 1) makes the sequence reproducible. `good`: fails every 10th
 * attempt (0.9); `dropped`: passes every 3rd (0.33).
 */
function rateSuite(): string {
  const dir = tempDir();
  writeFiles(dir, {
    "app/answer.txt": "wrong\n",
    "agent.sh": `#!/bin/sh
n=$(($(cat "${dir}/counter") + 1)); echo $n > "${dir}/counter"
case "$(cat "${dir}/mode")" in
  good) [ $((n % 10)) -ne 0 ] && echo right > answer.txt ;;
  dropped) [ $((n % 3)) -eq 0 ] && echo right > answer.txt ;;
esac
exit 0
`,
    counter: "0",
    mode: "good",
    "a.eval.yaml": `name: rate
targets: [{ name: bot, provider: command, command: ["./agent.sh"] }]
repeat: { min: 3, max: 10 }
concurrency: 1
gate: { policy: attempt_success_rate_at_least, min_rate: 0.5, regressions: fail }
workspace: { seed: { path: app } }
tests:
  - { id: answer, instruction: "write right", verify_repeats: 0, scorers: [{ type: file, path: answer.txt, contains: right }] }
`,
  });
  sh("chmod +x agent.sh", dir);
  return dir;
}

describe("a base history of a 0.9 agent, then unchanged and dropped heads (the verdicts the simulator predicts)", () => {
  const dir = rateSuite();
  for (const i of [1, 2, 3, 4, 5]) runCli(["run", "--out", `base/r${i}`], dir);

  it("an unchanged head passes: no drop against the pooled history", () => {
    const head = runCli(["run", "--out", "same", "--baseline", "base"], dir);
    expect(head.code).toBe(0);
    const row = readJsonl<Row>(path.join(dir, "same/index.jsonl"))[0]!;
    expect(row.change!.base_runs).toBe(5);
    expect(row.change!.base_attempts!.counted).toBe(15);
  });

  it("a head dropped to 0.33 is blocked and named a regression", () => {
    writeFiles(dir, { mode: "dropped" });
    const head = runCli(["run", "--out", "dropped", "--baseline", "base"], dir);
    expect(head.code).toBe(1);
    expect(head.stdout).toMatch(
      /rate\/answer on bot: regressed: \d+ of \d+ attempts passed \(base \d+ of 15/,
    );
    const row = readJsonl<Row>(path.join(dir, "dropped/index.jsonl"))[0]!;
    expect(row.change!.p_value).toBeLessThan(0.05);
  });
});
