/**
 * The action's run mode runs agents, setups and scorers with the process runner it is given and
 * reports attempts to the progress it is given, as the CLI's run command does: main.ts builds the
 * defaults at the edge, nothing below constructs its own.
 */
import { cpSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ArtifactStore } from "../../src/github/artifact.js";
import { ActionsLogger } from "../../src/github/io.js";
import { run } from "../../src/github/main.js";
import type { AttemptLine, Progress } from "../../src/report/console.js";
import { ChildProcessRunner, type ProcessRunner, type ProcessSpec } from "../../src/sandbox/process.js";
import { gitRepo, ROOT } from "../helpers.js";
import { inProcessStep, pushStepEnv } from "./harness.js";

const uploads: ArtifactStore = { upload: async () => ({ id: 1, size: 0 }) };

class RecordingProgress implements Progress {
  total = 0;
  readonly finished: AttemptLine[] = [];
  start(total: number): void {
    this.total = total;
  }
  attemptStarted(): void {}
  attemptFinished(line: AttemptLine): void {
    this.finished.push(line);
  }
  addPlanned(): void {}
  addAttempts(): void {}
  stop(): void {}
}

describe("the action's run mode", () => {
  const step = inProcessStep();

  it("uses the runner and the progress it is given", async () => {
    const repo = gitRepo({ "README.md": "x\n" });
    cpSync(path.join(ROOT, "examples/quickstart"), path.join(repo, "evals/quickstart"), { recursive: true });
    cpSync(path.join(ROOT, "examples/agents"), path.join(repo, "evals/agents"), { recursive: true });
    const spawned: ProcessSpec[] = [];
    const inner = new ChildProcessRunner();
    const runner: ProcessRunner = {
      run: (spec) => {
        spawned.push(spec);
        return inner.run(spec);
      },
    };
    const progress = new RecordingProgress();
    const env = pushStepEnv(repo, { evals: "evals/quickstart", target: "reference" });
    const code = await run({ env, artifacts: uploads, logger: new ActionsLogger(), runner, progress });
    expect(code).toBe(0);
    // Three tests, one attempt each, every one through the given progress and none on stdout.
    expect(progress.total).toBe(3);
    expect(progress.finished.map((l) => l.status)).toEqual(["passed", "passed", "passed"]);
    expect(step.out()).not.toMatch(/\[\d+\/3\]/);
    // The tests' scorer commands ran through the given runner.
    expect(spawned.length).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
