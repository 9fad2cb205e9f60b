/**
 * A signal while evalgate reads a large eval file: `evalgate run` and `validate` end within a
 * second, as a CI cancel or a `timeout` expects (issue 28, point 5). The figures for a 300,000-test
 * file are in docs/performance.md (bench/large-eval-file.mjs prints them).
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI, tempDir } from "../helpers.js";

const TESTS = 40_000;

function evalFile(n: number): string {
  const tests = Array.from(
    { length: n },
    (_, i) => `  - { id: t${i}, instruction: x, scorers: [{ type: file, path: a.txt }] }\n`,
  ).join("");
  return `name: big\ntargets: [{ name: a, provider: noop }]\nworkspace: { seed: { empty: true } }\ntests:\n${tests}`;
}

/** Starts the CLI, sends SIGTERM once it has been reading for `afterMs`, and times the exit. */
function terminated(
  args: string[],
  cwd: string,
  afterMs: number,
): Promise<{ exitMs: number; code: number | null; signal: string | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    let sentAt = 0;
    setTimeout(() => {
      sentAt = Date.now();
      child.kill("SIGTERM");
    }, afterMs);
    const hard = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("close", (code, signal) => {
      clearTimeout(hard);
      resolve({ exitMs: Date.now() - sentAt, code, signal, stdout });
    });
  });
}

describe("SIGTERM while a large eval file is read", () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir("evalgate-large-");
    writeFileSync(path.join(dir, "big.eval.yaml"), evalFile(TESTS));
  });

  it("evalgate run ends within a second, before any attempt starts", async () => {
    // before: run installed its interrupt handler before reading the eval files, and the handler
    // could only run once the (synchronous) YAML parse was over; then it planned every attempt and
    // wrote each as interrupted: 381 s from SIGTERM to exit for 30,000 tests on this machine.
    const r = await terminated(["run", "big.eval.yaml", "--out", path.join(dir, "out")], dir, 4_000);
    expect(r.stdout).not.toContain("attempts planned");
    expect(r.signal ?? String(r.code)).toMatch(/SIGTERM|143/);
    expect(r.exitMs).toBeLessThan(1_000);
  }, 150_000);

  it("evalgate validate ends within a second", async () => {
    const r = await terminated(["validate", "big.eval.yaml"], dir, 4_000);
    expect(r.stdout).not.toContain("ok:");
    expect(r.exitMs).toBeLessThan(1_000);
  }, 150_000);
});
