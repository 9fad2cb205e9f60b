/**
 * Issue 28, "a baseline of a different suite is compared anyway": `evalgate run --baseline` (and the
 * action, which reads its baseline through the same pipeline) with a baseline bundle of other suites.
 * before: the comparison went ahead, its totals read as "+5 passed", and nothing said the baseline
 * was of another exam.
 */
import { renameSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EVAL, GOOD_AGENT } from "../github/fixture.js";
import { readJson, runCli, tempDir, writeFiles } from "../helpers.js";

interface Summary {
  comparison: { baseline_run_id: string; regressed: number; new: number; removed: number } | null;
  run: { id: string };
}

const suite = (name: string) => EVAL.replace("name: demo", `name: ${name}`);

describe("a baseline of other suites", () => {
  it("shares no suite with the run: refused, with a note that says so", () => {
    const dir = tempDir();
    writeFiles(dir, { "evals/a.eval.yaml": suite("alpha"), "evals/agent.sh": GOOD_AGENT });
    const base = runCli(["run", "evals", "--out", "base"], dir);
    expect(base.code).toBe(0);
    // Another team's suite, the same cases by id: a comparison would match greet with greet.
    renameSync(path.join(dir, "evals/a.eval.yaml"), path.join(dir, "evals/b.eval.yaml"));
    const head = runCli(["run", "evals", "--out", "head", "--baseline", "base"], dir);
    expect(head.code).toBe(0);
    expect(head.stdout + head.stderr).toContain(
      "the baseline ran other suites (evals/a.eval.yaml) than this run (evals/b.eval.yaml), so it was not compared",
    );
    expect(readJson<Summary>(path.join(dir, "head", "summary.json")).comparison).toBeNull();
  }, 180_000);

  it("shares some: compared over the shared suites only, with a note naming the others", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "evals/a.eval.yaml": suite("alpha"),
      "evals/old.eval.yaml": suite("old"),
      "evals/agent.sh": GOOD_AGENT,
    });
    const base = runCli(["run", "evals", "--out", "base"], dir);
    expect(base.code).toBe(0);
    rmSync(path.join(dir, "evals/old.eval.yaml"));
    writeFiles(dir, { "evals/new.eval.yaml": suite("new") });
    const head = runCli(["run", "evals", "--out", "head", "--baseline", "base"], dir);
    expect(head.code).toBe(0);
    expect(head.stdout + head.stderr).toContain(
      "compared over the suites both ran: evals/new.eval.yaml is new (not in the baseline); the baseline's evals/old.eval.yaml did not run here",
    );
    const summary = readJson<Summary>(path.join(dir, "head", "summary.json"));
    // old's two cases are not "removed" (they were not in this exam); new's two are new.
    expect(summary.comparison).toMatchObject({ regressed: 0, removed: 0, new: 2 });
  }, 180_000);
});
