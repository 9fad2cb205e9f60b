/** Shared helpers for tests: temp folders, real git repositories, running the built CLI. */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";
import type { Usage } from "../src/run/types.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const CLI = path.join(ROOT, "bin", "evalgate.js");

const made: string[] = [];
afterAll(() => {
  if (process.env.EVALGATE_KEEP_TEST_DIRS) return;
  for (const d of made) rmSync(d, { recursive: true, force: true });
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
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
      ...env,
    },
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

/** Runs the built CLI (`npm run build` first; `npm test` does). */
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
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The CLI, asynchronously: for tests whose own servers must keep answering while it runs. */
export function runCliAsync(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, CI: "1", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => {
      stdout += c;
    });
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
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
