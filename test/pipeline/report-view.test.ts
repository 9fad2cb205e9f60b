import { appendFileSync, cpSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  DIFF_READ_BYTES,
  LOG_TAIL_READ_BYTES,
  loadReportView,
  viewOfRecords,
} from "../../src/pipeline/report-view.js";
import { renderComment } from "../../src/report/comment.js";
import { COMPACT_ABOVE, COMPACT_ABOVE_ATTEMPTS, renderHtml } from "../../src/report/html.js";
import { renderJUnit } from "../../src/report/junit.js";
import { expectCompleteBundle, quickstartRun, runCli, sh, tempDir, writeFiles } from "../helpers.js";

/**
 * An agent that prints 3 MB and writes a 2 MB file, and a `tests` scorer with named failures. One
 * awk prints the 3 MB: a shell loop of 30,000 command substitutions took 5 minutes under bubblewrap
 * on a loaded 2-core machine, past runCli's limit, whose SIGTERM and closed pipes then cut the run
 * short (the CLI exited 1 on the pipe's EPIPE, with no summary.json: cli/main.ts now outlives it).
 */
function loudSuite(): string {
  const dir = tempDir();
  writeFiles(dir, {
    "app/README.md": "hi\n",
    "agent.sh": `#!/bin/sh
awk 'BEGIN { for (i = 0; i < 30000; i++) printf "line %d: %0100d\\n", i, 0; print "THE LAST LINE" }'
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "row %06d %s\\n", i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }' > big.txt
`,
    "report.xml": `<testsuite name="cart"><testcase classname="cart" name="empty total"><failure message="expected 0, got NaN"/></testcase><testcase classname="cart" name="adds item"/></testsuite>`,
    "l.eval.yaml": `name: loud
targets: [{ name: bot, provider: command, command: ["./agent.sh"] }]
workspace: { seed: { path: app } }
tests:
  - id: loud
    instruction: "be loud"
    scorers:
      - { name: unit, type: tests, run: "cp {EVAL_DIR}/report.xml junit.xml; exit 1", report: junit.xml, fail_to_pass: ["cart > empty total"], pass_to_pass: ["cart > adds item"] }
`,
  });
  sh("chmod +x agent.sh", dir);
  return dir;
}

describe("loadReportView", () => {
  const dir = loudSuite();
  const bundle = path.join(dir, "b");
  beforeAll(() => {
    // The gate fails (the scorer does), and the bundle is complete: every test below reads it.
    expectCompleteBundle(runCli(["run", "--out", "b"], dir), bundle, 1);
  }, 150_000);

  it("reads a huge diff from its head and a huge log from its tail, within their caps", async () => {
    const view = await loadReportView(bundle);
    const attempt = view.cases[0]!.runs[0]!;
    const e = attempt.evidence!;
    expect(e.diff!.totalBytes).toBeGreaterThan(1_500_000);
    expect(e.diff!.truncated).toBe(true);
    expect(Buffer.byteLength(e.diff!.text)).toBeLessThanOrEqual(DIFF_READ_BYTES);
    expect(e.diff!.text.startsWith("diff --git a/big.txt b/big.txt")).toBe(true);
    expect(e.diff!.text.endsWith("\n")).toBe(true);
    expect(e.logTail!.totalBytes).toBeGreaterThan(2_000_000);
    expect(Buffer.byteLength(e.logTail!.text)).toBeLessThanOrEqual(LOG_TAIL_READ_BYTES);
    expect(e.logTail!.text.trimEnd().endsWith("THE LAST LINE")).toBe(true);
    expect(e.logTail!.text.startsWith("line ")).toBe(true); // begins at a whole line
    // The failing test is named from grading.json's details.
    expect(e.scorers![0]).toMatchObject({
      name: "unit",
      type: "tests",
      passed: false,
      failingTests: [{ name: "cart > empty total", outcome: "failed", message: "expected 0, got NaN" }],
      failingTestsTotal: 1,
    });
    const md = renderComment(view, { key: "default", maxChars: 65_536 });
    expect(md).toContain("    - `cart > empty total`: expected 0, got NaN");
    expect(md).toContain("_Diff cut; the whole file (");
    expect(md).toContain("THE LAST LINE");
    expect(md.length).toBeLessThan(40_000);
  });

  it("loads no evidence for stable passes unless asked, and reads every case's summary", async () => {
    // The quickstart run the end-to-end tests read too: made once per test run, only read here.
    const quick = quickstartRun().out;
    const problems = await loadReportView(quick);
    const pass = problems.cases.find((c) => c.testId === "empty-cart-total" && c.target === "reference")!;
    expect(pass.runs[0]!.evidence).toBeNull();
    expect(pass.policy).toEqual({ name: "all_attempts_successful", threshold: null, onError: "fail" });
    const fail = problems.cases.find((c) => c.target === "noop")!;
    expect(fail.runs[0]!.evidence?.scorers?.map((s) => s.name)).toEqual(["unit", "small"]);
    const all = await loadReportView(quick, { evidence: "all" });
    const passAll = all.cases.find((c) => c.testId === "empty-cart-total" && c.target === "reference")!;
    expect(passAll.runs[0]!.evidence?.diff?.text).toContain("diff --git");
    expect(passAll.runs[0]!.evidence?.logTail).toBeNull();
    expect(all.problems).toEqual([]);
  });

  it("in a large bundle (by cases or by attempts) reads no diff of a case that needs no review", async () => {
    const quick = quickstartRun().out;
    const summary = JSON.parse(readFileSync(path.join(quick, "summary.json"), "utf8"));
    const rows = readFileSync(path.join(quick, "index.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { test_id: string; target: string; runs: unknown[] });
    const isPass = (c: { testId: string; target: string }) =>
      c.testId === "empty-cart-total" && c.target === "reference";
    const evidenceOf = async (cases: { row: unknown }[]) => {
      const view = await viewOfRecords({ dir: quick, summary, cases }, { evidence: "all" });
      const pass = view.cases.find(isPass)!;
      const fail = view.cases.find((c) => c.target === "noop")!;
      return { pass: pass.runs[0]!.evidence, fail: fail.runs[0]!.evidence, problems: view.problems };
    };
    // Small: every case's evidence, as report.html shows it inline.
    const small = await evidenceOf(rows.map((row) => ({ row })));
    expect(small.pass?.diff?.text).toContain("diff --git");
    expect(small.pass?.diffStat).not.toBeNull(); // from result.json
    // More cases than COMPACT_ABOVE: the passing case is one line of links, its diff and result.json
    // are not read (its grading.json still is, for junit.xml); the failing case keeps its diff.
    const many = Array.from({ length: Math.ceil((COMPACT_ABOVE + 1) / rows.length) }, () => rows).flat();
    const byCases = await evidenceOf(many.map((row) => ({ row })));
    expect(byCases.pass?.diff).toBeNull();
    expect(byCases.pass?.diffStat).toBeNull(); // result.json not read either
    expect(byCases.pass?.scorers?.map((s) => s.name)).toEqual(["unit", "small"]);
    expect(byCases.fail?.diff).not.toBeNull(); // read (noop changed nothing: empty)
    expect(byCases.fail?.scorers?.map((s) => s.name)).toEqual(["unit", "small"]);
    // Few cases, but more attempts than COMPACT_ABOVE_ATTEMPTS in their index rows: compact too.
    const repeated = rows.map((row, i) =>
      i === 0 ? { ...row, runs: Array.from({ length: COMPACT_ABOVE_ATTEMPTS }, () => row.runs[0]) } : row,
    );
    const byAttempts = await evidenceOf(repeated.map((row) => ({ row })));
    expect(byAttempts.pass?.diff).toBeNull();
    expect(byAttempts.fail?.diff).not.toBeNull();
    expect(byAttempts.problems).toEqual([]);
  });

  it("reads verdicts, statuses and enums it does not know as not passing, and renders them", async () => {
    const copy = path.join(tempDir(), "garbled");
    cpSync(bundle, copy, { recursive: true });
    const index = path.join(copy, "index.jsonl");
    const row = JSON.parse(readFileSync(index, "utf8").trim());
    const garbled = {
      ...row,
      verdict: "***",
      classification: "stable_***",
      evidence: "***",
      runs: row.runs.map((r: object) => ({ ...r, status: "***ed", failure_kind: 7 })),
    };
    writeFileSync(index, `${JSON.stringify(garbled)}\n`);
    const caseSummary = path.join(copy, row.result_dir, "summary.json");
    const cs = JSON.parse(readFileSync(caseSummary, "utf8"));
    cs.runs = cs.runs.map((r: object) => ({ ...r, status: "***" }));
    writeFileSync(caseSummary, JSON.stringify(cs));
    const summaryFile = path.join(copy, "summary.json");
    const summary = JSON.parse(readFileSync(summaryFile, "utf8"));
    summary.gate.verdict = "***";
    delete summary.seal;
    writeFileSync(summaryFile, JSON.stringify(summary));
    const view = await loadReportView(copy, { evidence: "all" });
    expect(view.gate.verdict).toBe("fail");
    expect(view.cases[0]).toMatchObject({ verdict: "error", evidence: "decided" });
    expect(view.cases[0]!.runs.map((r) => r.status)).toEqual(["error"]);
    expect(() => renderComment(view, { key: "k", maxChars: 65_536 })).not.toThrow();
    const r = runCli(["report", copy, "--format", "markdown"], dir);
    expect(r.stderr).not.toContain("internal error");
    expect(r.stdout).not.toContain("gate passed");
  });

  it("refuses paths that leave the bundle, lists missing files, and reads usage when a bundle has it", async () => {
    const copy = path.join(tempDir(), "copy");
    cpSync(bundle, copy, { recursive: true });
    const index = path.join(copy, "index.jsonl");
    const row = JSON.parse(readFileSync(index, "utf8").trim());
    const evil = {
      ...row,
      test_id: "evil",
      summary_path: "../../../etc/passwd",
      result_dir: "../outside",
      runs: row.runs.map((r: object) => ({ ...r, dir: "../outside/run-1" })),
      usage: {
        input_tokens: 1200,
        output_tokens: 300,
        cached_tokens: null,
        cost_usd: 0.02,
        attempts: 1,
        attempts_without_usage: 0,
      },
    };
    writeFileSync(index, `${JSON.stringify(row)}\n${JSON.stringify(evil)}\n`);
    rmSync(path.join(copy, row.result_dir, "run-1", "grading.json"));
    // A symbolic link inside the bundle that points out of it is not followed.
    const secret = path.join(tempDir(), "secret.txt");
    writeFileSync(secret, "TOP SECRET\n");
    rmSync(path.join(copy, row.result_dir, "run-1", "agent.log"));
    symlinkSync(secret, path.join(copy, row.result_dir, "run-1", "agent.log"));
    const summaryFile = path.join(copy, "summary.json");
    const summary = JSON.parse(readFileSync(summaryFile, "utf8"));
    const rollup = {
      input_tokens: 5000,
      output_tokens: 700,
      cached_tokens: 100,
      cost_usd: 0.05,
      attempts: 2,
      attempts_without_usage: 1,
    };
    summary.usage = rollup;
    summary.targets[0].usage = rollup;
    // Edited by hand: unsealed, like a bundle of an evalgate before seals (a sealed one is refused).
    delete summary.seal;
    writeFileSync(summaryFile, JSON.stringify(summary));
    const view = await loadReportView(copy);
    expect(view.usage).toEqual(view.targets[0]!.usage);
    expect(view.usage).toMatchObject({ inputTokens: 5000, costUsd: 0.05, attemptsWithoutUsage: 1 });
    // Usage known for only some attempts is a lower bound.
    expect(renderComment(view, { key: "k", maxChars: 65_536 })).toMatch(
      /\| bot \| .* \| ≥ \\\$0\.05 · ≥ 6 k \|/,
    );
    expect(view.problems).toContain("../../../etc/passwd: the path leaves the bundle; not read");
    expect(view.problems).toContain(`${row.result_dir}/run-1/grading.json: missing`);
    const e = view.cases.find((c) => c.testId === "evil")!;
    expect(e.usage).toEqual({
      inputTokens: 1200,
      outputTokens: 300,
      cachedTokens: null,
      costUsd: 0.02,
      attempts: 1,
      attemptsWithoutUsage: 0,
      agentVersions: [],
      models: [],
    });
    expect(e.runs[0]!.dir).toBe("../outside/run-1");
    expect(e.runs[0]!.evidence!.problems).toEqual([
      "../outside/run-1/result.json: the path leaves the bundle; not read",
      "../outside/run-1/agent.log: the path leaves the bundle; not read",
    ]);
    expect(view.cases[0]!.runs[0]!.evidence!.scorers).toBeNull();
    expect(view.problems).toContain(
      `${row.result_dir}/run-1/agent.log: the path leaves the bundle; not read`,
    );
    expect(view.cases[0]!.runs[0]!.evidence!.logTail).toBeNull();
    // A damaged bundle still renders, and says what it could not read.
    expect(renderComment(view, { key: "k", maxChars: 65_536 })).toContain("could not be read");
  });

  /** A copy of the run's bundle, changed by `change` (bundle folder, its first index row). */
  function changedCopy(change: (copy: string, row: { result_dir: string }) => void): string {
    const copy = path.join(tempDir(), "copy");
    cpSync(bundle, copy, { recursive: true });
    change(copy, JSON.parse(readFileSync(path.join(copy, "index.jsonl"), "utf8").trim()));
    return copy;
  }
  const onRead = { sealOnReadAbove: 0 } as const;

  it("checks a large bundle's seal file by file as it reads them: the same view and the same pages", async () => {
    // sealOnReadAbove: 0 treats this real run's bundle as a large one (above SEAL_ON_READ_ABOVE files).
    for (const evidence of ["problems", "all"] as const) {
      const whole = await loadReportView(bundle, { evidence });
      const perFile = await loadReportView(bundle, { evidence, ...onRead });
      expect(perFile).toEqual(whole);
      expect(renderComment(perFile, { key: "k", maxChars: 65_536 })).toBe(
        renderComment(whole, { key: "k", maxChars: 65_536 }),
      );
      expect(renderHtml(perFile)).toBe(renderHtml(whole));
      expect(renderJUnit(perFile)).toBe(renderJUnit(whole));
    }
  });

  it("in a large bundle reads only what it renders: a changed file it does not show is not read", async () => {
    // The agent's prompt.md is in the bundle and its seal, but no report shows it.
    const copy = changedCopy((c, row) =>
      appendFileSync(path.join(c, row.result_dir, "run-1", "prompt.md"), "x"),
    );
    // A small bundle is hashed whole, so the change is named...
    await expect(loadReportView(copy)).rejects.toThrow(
      /changed after evalgate wrote it.*changed: .*prompt\.md/,
    );
    // ...a large one's report does not read that file (before: every file was hashed, and this threw).
    const view = await loadReportView(copy, { evidence: "all", ...onRead });
    expect(view.cases[0]!.runs[0]!.evidence!.logTail!.text).toContain("THE LAST LINE");
  });

  it("in a large bundle still refuses a file it shows that changed or went missing, and a changed summary.json", async () => {
    const refused = async (copy: string, problem: RegExp) => {
      for (const o of [{}, onRead])
        await expect(loadReportView(copy, { evidence: "all", ...o })).rejects.toThrow(problem);
    };
    // The agent log's first line (its tail is what the report shows: the whole file is hashed).
    await refused(
      changedCopy((c, row) => {
        const log = path.join(c, row.result_dir, "run-1", "agent.log");
        writeFileSync(log, readFileSync(log, "utf8").replace("line 0:", "line O:"));
      }),
      /changed after evalgate wrote it, so it is not trusted: its files do not match its seal \(changed: .*agent\.log/,
    );
    await refused(
      changedCopy((c, row) => rmSync(path.join(c, row.result_dir, "run-1", "result.json"))),
      /not match its seal \(missing: .*result\.json/,
    );
    await refused(
      changedCopy((c) => appendFileSync(path.join(c, "index.jsonl"), "\n")),
      /not match its seal \(changed: index\.jsonl/,
    );
    await refused(
      changedCopy((c) => {
        const file = path.join(c, "summary.json");
        const summary = JSON.parse(readFileSync(file, "utf8"));
        summary.counts.passed += 1;
        writeFileSync(file, JSON.stringify(summary));
      }),
      /summary\.json changed/,
    );
  });
});
