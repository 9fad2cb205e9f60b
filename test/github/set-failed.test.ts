/**
 * The action fails its step through core.setFailed, with the gate's reason, as well as by its
 * return value: run() itself sets the process's exit status, so a runner (or a local action runner)
 * that reads either the `::error::` line or the status sees the failure.
 */
import { cpSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ArtifactStore } from "../../src/github/artifact.js";
import { ActionsLogger } from "../../src/github/io.js";
import { run } from "../../src/github/main.js";
import { gitRepo, ROOT } from "../helpers.js";
import { inProcessStep, pushStepEnv } from "./harness.js";

const uploads: ArtifactStore = { upload: async () => ({ id: 1, size: 0 }) };

describe("a failed step", () => {
  const step = inProcessStep();

  it("a failing gate calls core.setFailed with the gate's reason", async () => {
    const repo = gitRepo({ "README.md": "x\n" });
    cpSync(path.join(ROOT, "examples/quickstart"), path.join(repo, "evals/quickstart"), { recursive: true });
    cpSync(path.join(ROOT, "examples/agents"), path.join(repo, "evals/agents"), { recursive: true });
    const env = pushStepEnv(repo, { evals: "evals/quickstart", target: "noop" });
    const code = await run({ env, artifacts: uploads, logger: new ActionsLogger() });
    expect(code).toBe(1);
    // Set by core.setFailed inside run(), not by the entry point's use of the return value.
    expect(process.exitCode).toBe(1);
    expect(step.out()).toMatch(/::error::evalgate: gate failed: \S.*/);
  }, 120_000);

  it("bad input fails the step too, naming the input", async () => {
    const repo = gitRepo({ "README.md": "x\n" });
    const env = pushStepEnv(repo, { evals: "no/such/folder" });
    const code = await run({ env, artifacts: uploads, logger: new ActionsLogger() });
    expect(code).toBe(2);
    expect(process.exitCode).toBe(1);
    expect(step.out()).toMatch(/::error::evalgate: .*no\/such\/folder/);
  });
});
