/** Shared helpers for tests: temp folders, real git repositories, running the built CLI. */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, inject } from "vitest";
import { gitEnv } from "../bench/git-env.mjs";
import type { Usage } from "../src/providers/types.js";
import { acquireFixture, changedFixtures, type Fixture } from "./shared-fixtures.js";

export { contentKey, type Fixture } from "./shared-fixtures.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const CLI = path.join(ROOT, "bin", "evalgate.js");

const made: string[] = [];
/** The per-run shared fixtures this file used: root and name. */
const shared: [string, string][] = [];
afterAll(() => {
  // A write into a shared fixture fails the file that used it, whichever test of it wrote.
  const changed = shared.flatMap(([root, id]) => changedFixtures(root, [id]));
  if (!process.env.EVALGATE_KEEP_TEST_DIRS) for (const d of made) rmSync(d, { recursive: true, force: true });
  if (changed.length > 0)
    throw new Error(
      `a test wrote into the shared fixture ${changed.join(", ")}: copy it first (copyFixture)`,
    );
});

export function tempDir(prefix = "evalgate-test-"): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}

/** Writes files (relative path → content) under `dir`. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(dir, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
}

export function sh(cmd: string, cwd: string, env: NodeJS.ProcessEnv = {}): string {
  return execFileSync("/bin/sh", ["-c", cmd], {
    cwd,
    env: { ...process.env, ...gitEnv("t", "t@t"), ...env },
    encoding: "utf8",
  });
}

/** A real git repository with the given files committed on `main`. */
export function gitRepo(files: Record<string, string>, dir = tempDir("evalgate-repo-")): string {
  writeFiles(dir, files);
  sh("git init -q -b main . && git add -A && git commit -qm initial", dir);
  return dir;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI (`npm run build` first; `npm test` does). A run past `timeoutMs` throws with
 * what the CLI printed: spawnSync stops it with SIGTERM and closes its pipes, and the status that
 * follows (143, or whatever the CLI managed) must never pass for a verdict.
 */
export function runCli(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 120_000,
): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...process.env, CI: "1", ...env },
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error)
    throw new Error(
      `evalgate ${args.join(" ")} (in ${cwd}) did not finish: ${r.error.message} after ${timeoutMs / 1000} s at most; exit status ${r.status}\n--- stdout:\n${r.stdout}\n--- stderr:\n${r.stderr}`,
    );
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Asserts that a `run` (or `merge`) exited with `code` and left a complete bundle in `bundle`
 * (summary.json with status complete, index.jsonl), showing the CLI's output when it did not.
 */
export function expectCompleteBundle(run: CliResult, bundle: string, code: number): void {
  const summaryFile = path.join(bundle, "summary.json");
  const status = existsSync(summaryFile) ? readJson<{ status?: string }>(summaryFile).status : "missing";
  expect(
    { code: run.code, summary: status, index: existsSync(path.join(bundle, "index.jsonl")) },
    `the CLI's output:\n--- stdout:\n${run.stdout}\n--- stderr:\n${run.stderr}`,
  ).toEqual({ code, summary: "complete", index: true });
}

/**
 * Runs the built CLI without blocking the test's event loop, for tests that serve something to it
 * from the test process (an HTTP git server, a model endpoint).
 */
export function runCliAsync(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 120_000,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { ...process.env, CI: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** Every file under `dir` (at any depth, `.git` included) whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  try {
    return execFileSync("grep", ["-rlF", "--", needle, dir], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
  } catch (error) {
    // grep exits 1 when nothing matches; anything else (a folder that does not exist) is an error.
    if ((error as { status?: number }).status === 1) return [];
    throw error;
  }
}

export function readJson<T = Record<string, unknown>>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

export function readJsonl<T = Record<string, unknown>>(file: string): T[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

/** An attempt's usage with every value unknown except those given. */
export function usage(u: Partial<Usage> = {}): Usage {
  return {
    inputTokens: null,
    outputTokens: null,
    cachedTokens: null,
    costUsd: null,
    costSource: null,
    turns: null,
    toolCalls: null,
    model: null,
    agentVersion: null,
    ...u,
  };
}

/** Running processes whose command line contains `needle` (zombies excluded). */
export function running(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z") continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").includes(needle))
        found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

let ownFixtureRoot: string | undefined;

/**
 * A folder that test files share read-only, built once per test run by `build(dir)` (which creates
 * `dir`, as a run's `--out` does; the first file to ask builds it, the others wait and reuse it),
 * with the JSON value `build` returned. With `key` (a contentKey of every input) it is kept across
 * runs instead, under node_modules/.cache/evalgate-test/: for build outputs, not for results of the
 * code under test. A test that writes into it copies it first (copyFixture); a write into it fails
 * the run.
 */
export function sharedFixture<T>(name: string, build: (dir: string) => T, key?: string): Fixture<T> {
  if (key) {
    const cache = path.join(ROOT, "node_modules/.cache/evalgate-test");
    const id = `${name}-${key}`;
    const fixture = acquireFixture(cache, id, build, "rebuild");
    // Builds of older inputs are never asked for again.
    for (const old of readdirSync(cache)) {
      const other = old.startsWith(`${name}-`) && /^[0-9a-f]{16}$/.test(old.slice(name.length + 1));
      if (other && old !== id) rmSync(path.join(cache, old), { recursive: true, force: true });
    }
    return fixture;
  }
  // Without the global setup (a config that does not name it), the fixture is this file's own.
  if (!inject("fixtureRoot") && !ownFixtureRoot) ownFixtureRoot = tempDir("evalgate-fixtures-");
  const root = inject("fixtureRoot") ?? ownFixtureRoot!;
  if (!shared.some(([r, id]) => r === root && id === name)) shared.push([root, name]);
  return acquireFixture(root, name, build, "fail");
}

/** A copy of a shared fixture (cp -a: modes, links and times kept) that the test may write into. */
export function copyFixture(
  dir: string,
  dest = path.join(tempDir("evalgate-copy-"), path.basename(dir)),
): string {
  execFileSync("cp", ["-a", "--", dir, dest]);
  return dest;
}

/**
 * `evalgate run examples/quickstart --out <bundle>` from the checkout, as several test files run it
 * only to read the bundle: run once per test run. `out` is the bundle, `result` the run's exit code
 * and output (which names `out`).
 */
export function quickstartRun(): { out: string; result: CliResult } {
  const f = sharedFixture("quickstart-run", (dir) =>
    runCli(["run", "examples/quickstart", "--out", dir], ROOT),
  );
  return { out: f.dir, result: f.value };
}
