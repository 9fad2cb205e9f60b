/**
 * Flat memory: once an attempt's records are in the bundle, the run keeps only what its decisions
 * read. An attempt whose agent changed 2,000 files and whose tests scorer listed 300 tests has those
 * lists in result.json and grading.json, not in what the run holds until it ends (a run of thousands
 * of attempts would otherwise grow with every one). Not a timing test: it weighs what is kept.
 */
import { chmodSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_NAMING } from "../../src/cli/args.js";
import { MemoryLogger } from "../../src/log.js";
import { runEvals } from "../../src/pipeline/run.js";
import type { Progress } from "../../src/report/console.js";
import { ChildProcessRunner } from "../../src/sandbox/process.js";
import { readJson, tempDir, writeFiles } from "../helpers.js";

const TESTS = 300;

const quiet: Progress = {
  start: () => {},
  attemptStarted: () => {},
  attemptFinished: () => {},
  addPlanned: () => {},
  addAttempts: () => {},
  stop: () => {},
};

describe("what the run keeps of a finished attempt", () => {
  it("leaves the changed-file list and the scorers' details to the bundle", async () => {
    const dir = tempDir();
    const cases = Array.from({ length: TESTS }, (_, i) => `<testcase classname="t" name="case${i}"/>`).join(
      "",
    );
    writeFiles(dir, {
      "project/README.md": "seed\n",
      "agent.sh": `#!/bin/sh\nmkdir -p out\ni=0\nwhile [ $i -lt 2000 ]; do echo $i > out/f$i.txt; i=$((i+1)); done\n`,
      "report.sh": `#!/bin/sh\nmkdir -p reports\necho '<testsuite name="t">${cases}</testsuite>' > reports/junit.xml\n`,
      "kept.eval.yaml": `targets: [{ name: many, provider: command, command: ["./agent.sh"] }]
workspace: { seed: { path: project } }
tests:
  - id: wide
    instruction: write many files
    scorers:
      - name: unit
        type: tests
        run: "{EVAL_DIR}/report.sh"
        report: reports/junit.xml
        pass_to_pass: [${Array.from({ length: TESTS }, (_, i) => `"t.case${i}"`).join(", ")}]
`,
    });
    chmodSync(path.join(dir, "agent.sh"), 0o755);
    chmodSync(path.join(dir, "report.sh"), 0o755);

    const outcome = await runEvals(
      { cwd: dir, paths: ["kept.eval.yaml"], out: "bundle", naming: CLI_NAMING },
      { runner: new ChildProcessRunner(), progress: quiet, logger: new MemoryLogger() },
    );

    const attempt = outcome.cases[0]!.tries[0]!;
    expect(attempt.status).toBe("passed");
    // The bundle has every file and every listed test...
    const runDir = path.join(outcome.bundleDir, outcome.rows[0]!.runs[0]!.dir);
    const result = readJson<{ diff: { files: unknown[]; empty: boolean } }>(path.join(runDir, "result.json"));
    expect(result.diff.files).toHaveLength(2000);
    expect(result.diff.empty).toBe(false);
    const grading = readJson<{ scorers: { details: { pass_to_pass: unknown[] } }[] }>(
      path.join(runDir, "grading.json"),
    );
    expect(grading.scorers[0]!.details.pass_to_pass).toHaveLength(TESTS);
    // ...and the run holds neither list: what it kept of the attempt is small.
    expect(attempt.diff).toMatchObject({ fileCount: 2000, truncated: false });
    expect(attempt.diff?.files).toBeUndefined();
    expect(attempt.grading!.scorers[0]!.result).not.toHaveProperty("details");
    expect(JSON.stringify(outcome.cases.map((c) => c.tries)).length).toBeLessThan(5_000);
  });
});
