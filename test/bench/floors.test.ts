/**
 * bench/floors.mjs (`npm run bench`) in its quickest mode on a tiny suite: the table's columns are
 * printed and both floors really ran (their result files are there, and the isolated floor's agent
 * and grader ran in bubblewrap's namespaces). Not timings: speed figures belong in bench/, not here.
 * before: there was no bench/floors.mjs, no shell floor and no result files; `npm run bench` ran
 * bench/run.mjs, whose isolated floor ran the grader outside bubblewrap.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const BENCH = path.join(import.meta.dirname, "..", "..", "bench", "floors.mjs");
const bwrap =
  spawnSync("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "/bin/true"]).status === 0;

interface FloorResult {
  test: string;
  attempt: number;
  status: string;
  answer: string;
  grader_said: string;
}

function results(dir: string): FloorResult[] {
  return readdirSync(dir)
    .sort()
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as FloorResult);
}

describe("bench/floors.mjs", () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "floors-test-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("prints the table of both floors from one round of a 2-case suite, and both floors ran", async () => {
    const keep = path.join(tmp, "results");
    const { stdout } = await run(
      process.execPath,
      [BENCH, "--rounds", "1", "--suites", "tiny", "--dir", tmp, "--results", keep],
      { timeout: 110_000 },
    );
    expect(stdout).toMatch(/1-minute load at start \d+\.\d\d/);
    expect(stdout).toMatch(/1-minute load at end \d+\.\d\d/);
    expect(stdout).toContain(
      "| suite | side | min (s) | median (s) | max (s) | ÷ plain floor | ÷ isolated floor | ÷ evalgate |",
    );
    // The evalgate row: a label, then min, median and max in seconds, then its ratio to the plain floor.
    expect(stdout).toMatch(
      /\| 2 tests × 1 attempt, 20 files \(2 attempts\) \| evalgate \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \(/,
    );
    expect(stdout).toMatch(/\| {2}\| plain floor \| [\d.]+ \| [\d.]+ \| [\d.]+ \| 1 \|/);
    expect(stdout).toMatch(/AgentV (not installed \(npm i -g agentv@4\.42\.4 to compare\)|4\.42\.4)/);

    const plain = results(path.join(keep, "tiny", "plain-floor"));
    expect(plain.map((r) => [r.test, r.attempt, r.status])).toEqual([
      ["t0", 1, "passed"],
      ["t1", 1, "passed"],
    ]);
    // The agent wrote its file in the attempt's copy and the grader found it, on this machine's host.
    expect(plain[0]!.answer).toMatch(/^t0 1 /);
    expect(plain[0]!.grader_said).not.toBe("evalgate-floor");

    if (!bwrap) {
      expect(stdout).toContain("isolated floor: not run (bubblewrap cannot make namespaces here)");
      return;
    }
    expect(stdout).toMatch(
      /\| {2}\| isolated floor \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \([\d.]+–[\d.]+\) \| 1 \|/,
    );
    const isolated = results(path.join(keep, "tiny", "isolated-floor"));
    expect(isolated.map((r) => [r.test, r.status, r.answer, r.grader_said])).toEqual([
      ["t0", "passed", "t0 1 evalgate-floor", "evalgate-floor"],
      ["t1", "passed", "t1 1 evalgate-floor", "evalgate-floor"],
    ]);
  }, 120_000);

  it("refuses a bad round count and an unknown option by name", async () => {
    const { parseArgs } = (await import(BENCH)) as {
      parseArgs: (a: string[]) => { rounds: number; suites: string[] };
    };
    expect(parseArgs([]).rounds).toBe(5);
    expect(parseArgs(["--quick"]).rounds).toBe(2);
    expect(parseArgs(["--rounds", "1"]).rounds).toBe(1);
    expect(parseArgs([]).suites).toEqual(["small", "large", "ignored", "npm"]);
    expect(() => parseArgs(["--rounds", "0"])).toThrow("--rounds needs a whole number of at least 1");
    expect(() => parseArgs(["--round", "1"])).toThrow("unknown option --round");
  });
});
