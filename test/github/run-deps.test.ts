/**
 * The action's run mode runs agents, setups and scorers with the process runner it is given and
 * reports attempts to the progress it is given, as the CLI's run command does: main.ts builds the
 * defaults at the edge, nothing below constructs its own.
 */
import { cpSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ArtifactStore } from "../../src/github/artifact.js";
import { ActionsLogger } from "../../src/github/io.js";
import { run } from "../../src/github/main.js";
import type { AttemptLine, Progress } from "../../src/report/console.js";
import { ChildProcessRunner, type ProcessRunner, type ProcessSpec } from "../../src/sandbox/process.js";
import { gitRepo, ROOT, tempDir } from "../helpers.js";
import { pushStepEnv } from "./harness.js";

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
  stop(): void {}
}

describe("the action's run mode", () => {
  const saved = { ...process.env };
  let out = "";
  beforeEach(() => {
    out = "";
    const files = tempDir("evalgate-files-");
    process.env.GITHUB_OUTPUT = path.join(files, "output");
    process.env.GITHUB_STEP_SUMMARY = path.join(files, "summary");
    writeFileSync(process.env.GITHUB_OUTPUT, "");
    writeFileSync(process.env.GITHUB_STEP_SUMMARY, "");
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
    process.env = saved;
  });

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
    expect(out).not.toMatch(/\[\d+\/3\]/);
    // The tests' scorer commands ran through the given runner.
    expect(spawned.length).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
