/**
 * An interrupted run ends well: SIGINT or SIGTERM while an agent works kills the agent, writes a
 * partial bundle marked interrupted (sealed, readable), removes the workspaces, prints one line
 * and exits 130 / 143.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  CLI,
  expectCompleteBundle,
  gitRepo,
  readJson,
  readJsonl,
  runCli,
  running,
  sh,
  tempDir,
} from "../helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs a suite whose agent sleeps from attempt 2 on, and once it sleeps sends `signal`; with
 * `closeConsole`, first closes the pipes the CLI prints to, as spawnSync does when its timeout
 * fires (and `| head` when it has read enough).
 */
async function interrupted(signal: "SIGINT" | "SIGTERM", marker: string, closeConsole = false) {
  const dir = gitRepo({
    "x.eval.yaml": `targets:
  - { name: agent, provider: command, command: ["./agent.sh", "{ATTEMPT}"], timeout: 10m }
workspace: { seed: { path: app } }
repeat: 3
concurrency: 1
tests:
  - id: t1
    instruction: fix it
    scorers: [{ type: command, run: "true" }]
`,
    "app/x.txt": "x\n",
    // Attempt 1 finishes; from attempt 2 on, the agent (and a child of it) sleeps far longer than
    // the test waits.
    "agent.sh": `#!/bin/sh\n[ "$1" = 1 ] && exit 0\nsleep ${marker} &\nexec sleep ${marker}\n`,
  });
  sh("chmod +x agent.sh", dir);
  const out = path.join(tempDir(), "b");
  const work = path.join(tempDir(), "work");
  const child = spawn(process.execPath, [CLI, "run", ".", "--out", out, "--work-dir", work], {
    cwd: dir,
    env: { ...process.env, CI: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  // Once the second attempt's agent is running.
  for (let i = 0; i < 600 && running(`sleep ${marker}`).length < 2; i++) await sleep(100);
  expect(running(`sleep ${marker}`).length).toBeGreaterThanOrEqual(2);
  if (closeConsole) {
    child.stdout.destroy();
    child.stderr.destroy();
  }
  child.kill(signal);
  const code = await exited;
  return { code, stderr, stdout, out, work, dir };
}

describe("an interrupted run", () => {
  it("SIGINT: agents killed, a sealed partial bundle with status interrupted, no workspace left, exit 130", async () => {
    const r = await interrupted("SIGINT", "3137");
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(
      /^evalgate: interrupted by SIGINT: agents stopped, workspaces removed, 1 of 3 attempts finished; the partial bundle \(status: interrupted\) is in .*\n$/m,
    );
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(running("sleep 3137")).toEqual([]);
    expect(existsSync(r.work)).toBe(false);
    const summary = readJson<{
      status: string;
      gate: { verdict: string; reasons: string[] };
      seal: { files: Record<string, string> };
    }>(path.join(r.out, "summary.json"));
    expect(summary.status).toBe("interrupted");
    expect(summary.gate.verdict).toBe("fail");
    expect(summary.gate.reasons[0]).toBe("the run was interrupted (SIGINT): 1 of 3 attempts finished");
    const [row] = readJsonl<{ runs: { status: string; failure_kind: string }[] }>(
      path.join(r.out, "index.jsonl"),
    );
    expect(row!.runs.map((x) => `${x.status}/${x.failure_kind}`)).toEqual([
      "passed/null",
      "error/cancelled",
      "error/cancelled",
    ]);
    // What completed is kept as it was; the killed attempt is cancelled; the bundle reads as a bundle.
    const result = readJson<{ message: string }>(
      path.join(r.out, Object.keys(summary.seal.files).find((f) => f.endsWith("run-2/result.json"))!),
    );
    expect(result.message).toBe("stopped: the run was interrupted (SIGINT) while this attempt ran");
    const report = runCli(["report", r.out], r.dir);
    expect(report.code).toBe(0);
    expect(report.stdout).toContain("the run was interrupted (SIGINT)");
  }, 120_000);

  it("SIGTERM (the second signal of an Actions cancel) exits 143 the same way", async () => {
    const r = await interrupted("SIGTERM", "3139");
    expect(r.code).toBe(143);
    expect(r.stderr).toMatch(/^evalgate: interrupted by SIGTERM: /m);
    expect(running("sleep 3139")).toEqual([]);
    expect(existsSync(r.work)).toBe(false);
    expect(readJson<{ status: string }>(path.join(r.out, "summary.json")).status).toBe("interrupted");
  }, 120_000);

  it("SIGTERM after the console's reader went away (a parent's timeout) still writes the bundle, exit 143", async () => {
    // before: the first line after the signal met a closed pipe, Node threw EPIPE as an uncaught
    // error, and the run exited 1 (read as "gate failed") with no summary.json or index.jsonl.
    const r = await interrupted("SIGTERM", "3141", true);
    expect(r.code).toBe(143);
    expect(running("sleep 3141")).toEqual([]);
    expect(existsSync(r.work)).toBe(false);
    expect(readJson<{ status: string }>(path.join(r.out, "summary.json")).status).toBe("interrupted");
    expect(existsSync(path.join(r.out, "index.jsonl"))).toBe(true);
  }, 120_000);
});

describe("a run whose console's reader goes away (`evalgate run | head -1`)", () => {
  it("finishes, writes the whole bundle and exits by its gate", async () => {
    // before: exit 1 on the pipe's EPIPE (an uncaught error), and no bundle.
    const dir = gitRepo({
      "x.eval.yaml": `targets: [{ name: agent, provider: command, command: "sleep 1; echo done > done.txt" }]
workspace: { seed: { path: app } }
repeat: 2
concurrency: 1
tests:
  - { id: t1, instruction: go, scorers: [{ type: file, path: done.txt }] }
`,
      "app/x.txt": "x\n",
    });
    const out = path.join(tempDir(), "b");
    const child = spawn(process.execPath, [CLI, "run", ".", "--out", out], {
      cwd: dir,
      env: { ...process.env, CI: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    // Like `head -1`: read the first line, then close the pipe while the agents still run.
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expectCompleteBundle({ code: code ?? -1, stdout: "(closed after the first line)", stderr }, out, 0);
    expect(stderr).not.toMatch(/EPIPE|internal error/);
    expect(readJsonl<{ verdict: string }>(path.join(out, "index.jsonl")).map((r) => r.verdict)).toEqual([
      "pass",
    ]);
  }, 120_000);
});
