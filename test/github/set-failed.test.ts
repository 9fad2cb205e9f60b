/**
 * The action fails its step through core.setFailed, with the gate's reason, as well as by its
 * return value: run() itself sets the process's exit status, so a runner (or a local action runner)
 * that reads either the `::error::` line or the status sees the failure.
 */
import { cpSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ArtifactStore } from "../../src/github/artifact.js";
import { ActionsLogger } from "../../src/github/io.js";
import { run } from "../../src/github/main.js";
import { gitRepo, ROOT, tempDir } from "../helpers.js";
import { examplePayload } from "./harness.js";

const uploads: ArtifactStore = { upload: async () => ({ id: 1, size: 0 }) };

function actionEnv(workspace: string, inputs: Record<string, string>): NodeJS.ProcessEnv {
  const dir = tempDir("evalgate-step-");
  const eventPath = path.join(dir, "event.json");
  const sha = "0".repeat(40);
  writeFileSync(eventPath, JSON.stringify({ ...examplePayload("push"), ref: "refs/heads/main", after: sha }));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: tempDir("evalgate-home-"),
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: "push",
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: "o/r",
    GITHUB_REPOSITORY_OWNER: "o",
    GITHUB_SHA: sha,
    GITHUB_REF: "refs/heads/main",
    GITHUB_RUN_ID: "1",
    GITHUB_RUN_ATTEMPT: "1",
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: tempDir("evalgate-runner-temp-"),
    "INPUT_GITHUB-TOKEN": "",
    INPUT_COMMENT: "off",
    INPUT_BASELINE: "",
    "INPUT_ARTIFACT-NAME": "evalgate",
    "INPUT_RETENTION-DAYS": "1",
    "INPUT_CHECK-NAME": "",
  };
  for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.toUpperCase()}`] = v;
  return env;
}

describe("a failed step", () => {
  let out: string;
  const saved = { ...process.env };
  beforeEach(() => {
    out = "";
    process.exitCode = undefined;
    const files = tempDir("evalgate-files-");
    // core.setOutput and the job summary write to the files the runner names in process.env.
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

  it("a failing gate calls core.setFailed with the gate's reason", async () => {
    const repo = gitRepo({ "README.md": "x\n" });
    cpSync(path.join(ROOT, "examples/quickstart"), path.join(repo, "evals/quickstart"), { recursive: true });
    cpSync(path.join(ROOT, "examples/agents"), path.join(repo, "evals/agents"), { recursive: true });
    const env = actionEnv(repo, { evals: "evals/quickstart", target: "noop" });
    const code = await run({ env, artifacts: uploads, logger: new ActionsLogger() });
    expect(code).toBe(1);
    // Set by core.setFailed inside run(), not by the entry point's use of the return value.
    expect(process.exitCode).toBe(1);
    expect(out).toMatch(/::error::evalgate: gate failed: \S.*/);
  }, 120_000);

  it("bad input fails the step too, naming the input", async () => {
    const repo = gitRepo({ "README.md": "x\n" });
    const env = actionEnv(repo, { evals: "no/such/folder" });
    const code = await run({ env, artifacts: uploads, logger: new ActionsLogger() });
    expect(code).toBe(2);
    expect(process.exitCode).toBe(1);
    expect(out).toMatch(/::error::evalgate: .*no\/such\/folder/);
  });
});
