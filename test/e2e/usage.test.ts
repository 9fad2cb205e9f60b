/**
 * Usage from custom agents (the {OUTPUT_FILE} contract) and its rollups: per case, per target, per
 * run, kept through `evalgate merge`, and held against the eval file's budget after a merge.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT, readJson, readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

const AGENT = path.join(ROOT, "test/fixtures/agents/report-agent.mjs");

function project(evalFile: object): string {
  const dir = tempDir("evalgate-usage-");
  cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(dir, "project"), { recursive: true });
  writeFiles(dir, { "usage.eval.yaml": JSON.stringify(evalFile, null, 2) });
  return dir;
}

const test = (id: string) => ({
  id,
  instruction: "Make an empty cart total 0.",
  scorers: [{ name: "unit", type: "command", run: "node --test test/total.test.js" }],
});

const agent = (name: string, mode: string, extra: object = {}) => ({
  name,
  provider: "command",
  command: mode === "env" ? [AGENT, "ok"] : [AGENT, mode, "{OUTPUT_FILE}"],
  ...extra,
});

interface Result {
  status: string;
  message: string | null;
  usage: Record<string, unknown> | null;
  warnings: string[];
  files: { agent_output: string | null };
}

describe("the {OUTPUT_FILE} contract of command agents", () => {
  let dir: string;
  let code: number;
  const result = (target: string): Result => {
    const row = readJsonl<{ target: string; runs: { result_path: string }[] }>(
      path.join(dir, "out/index.jsonl"),
    ).find((r) => r.target === target)!;
    return readJson<Result>(path.join(dir, "out", row.runs[0]!.result_path));
  };
  let secretFile: string;
  beforeAll(() => {
    secretFile = path.join(tempDir(), "secret.json");
    writeFileSync(secretFile, '{"usage": {"input_tokens": 1}, "secret": "s3cr3t-value"}');
    dir = project({
      targets: [
        agent("ok", "ok"),
        agent("env", "env"),
        agent("tokens-only", "tokens-only"),
        agent("priced", "tokens-only", {
          price: { input_per_mtok: 2, output_per_mtok: 8, cached_per_mtok: 0.5 },
        }),
        agent("bad-json", "bad-json"),
        agent("bad-types", "bad-types"),
        agent("error", "error"),
        agent("none", "none"),
        agent("symlink", "symlink", { env: { SECRET_FILE: secretFile } }),
      ],
      gate: { min_case_pass_rate: 0 },
      workspace: { seed: { path: "project" } },
      tests: [test("empty-cart-total")],
    });
    code = runCli(["run", "--out", "out", "--concurrency", "2"], dir).code;
  }, 120_000);

  it("records the usage, cost and version the agent reported, and keeps its file", () => {
    expect(code).toBe(0); // every target's work passes: an error the agent reports is no excuse, nor a failure
    const r = result("ok");
    expect(r.status).toBe("passed");
    expect(r.usage).toEqual({
      input_tokens: 1000,
      output_tokens: 200,
      cached_tokens: 50,
      cost_usd: 0.0125,
      cost_source: "agent",
      turns: 3,
      tool_calls: 2,
      model: "house-1",
      agent_version: "2.3.4",
    });
    expect(r.warnings).toEqual([]);
    expect(r.files.agent_output).toBe("agent-output.json");
    expect(result("env").usage).toEqual(r.usage);
  });

  it("prices tokens without a cost from the table, or from the target's price:", () => {
    expect(result("tokens-only").usage).toMatchObject({
      cost_usd: 0.0225,
      cost_source: "price_table",
      model: "gpt-5",
    });
    expect(result("priced").usage).toMatchObject({ cost_usd: 0.028, cost_source: "price_table" });
  });

  it("records a malformed file as a warning and leaves usage unknown", () => {
    const badJson = result("bad-json");
    expect(badJson.status).toBe("passed");
    expect(badJson.usage).toBeNull();
    expect(badJson.warnings[0]).toMatch(/^\{OUTPUT_FILE\} is not valid JSON/);
    const badTypes = result("bad-types");
    expect(badTypes.status).toBe("passed");
    expect(badTypes.usage).toBeNull();
    expect(badTypes.warnings[0]).toContain("usage.input_tokens");
    expect(badTypes.warnings[0]).toContain("usage.output_tokens");
  });

  it("grades the work of an agent that reported an error, and keeps its words as a warning", () => {
    // before (grading-integrity): the agent's own report made the attempt an error, which
    // on_error: exclude or retry would excuse; what the program under test says is no evidence.
    const r = result("error");
    expect(r).toMatchObject({ status: "passed", message: null });
    expect(r.warnings).toContain(
      "the agent reported an error: rate limited by the model API (429), but the work it left passed the scorers",
    );
    expect(r.usage).toMatchObject({ input_tokens: 10 });
    expect(result("none")).toMatchObject({ status: "passed", usage: null, warnings: [] });
  });

  it("never follows a link the agent planted as its output file", () => {
    const r = result("symlink");
    expect(r).toMatchObject({ status: "passed", usage: null });
    expect(r.warnings).toEqual(["{OUTPUT_FILE} is not a regular file (a symbolic link); it was ignored"]);
    expect(r.files.agent_output).toBeNull();
    const grep = spawnSync("grep", ["-rl", "s3cr3t", path.join(dir, "out")], { encoding: "utf8" });
    expect(grep.stdout).toBe("");
  });

  it("rolls up only the attempts that reported usage, and says how many did not", () => {
    const summary = readJson<{ usage: Record<string, unknown> }>(path.join(dir, "out/summary.json"));
    expect(summary.usage).toEqual({
      input_tokens: 1000 + 1000 + 10000 + 10000 + 10,
      output_tokens: 200 + 200 + 1000 + 1000 + 0,
      cached_tokens: 100,
      cost_usd: 0.0125 * 2 + 0.0225 + 0.028,
      attempts: 5,
      attempts_without_usage: 4,
      agent_versions: ["2.3.4"],
      models: ["gpt-5", "house-1"],
    });
  });
});

describe("usage rollups through shards and merge", () => {
  let dir: string;
  beforeAll(() => {
    dir = project({
      targets: [agent("house", "ok")],
      gate: { budget: { tokens: 2000 } },
      workspace: { seed: { path: "project" } },
      tests: [test("one"), test("two")],
    });
  });

  it("gives the merged bundle the usage of the whole run, and fails its token budget", () => {
    for (const shard of ["1/2", "2/2"]) {
      const r = runCli(["run", "--shard", shard, "--out", `shard-${shard[0]}`], dir);
      expect(r.code).toBe(0);
      const s = readJson<{ gate: { verdict: string }; usage: { attempts: number } }>(
        path.join(dir, `shard-${shard[0]}/summary.json`),
      );
      // 1250 tokens each: within the budget of 2000 on its own.
      expect(s.gate.verdict).toBe("pass");
      expect(s.usage.attempts).toBe(1);
    }
    const merged = runCli(["merge", "shard-1", "shard-2", "--out", "merged"], dir);
    expect(merged.code).toBe(1);
    const m = readJson<{
      usage: unknown;
      targets: { usage: unknown }[];
      gate: { reasons: string[] };
    }>(path.join(dir, "merged/summary.json"));
    const whole = {
      input_tokens: 2000,
      output_tokens: 400,
      cached_tokens: 100,
      cost_usd: 0.025,
      attempts: 2,
      attempts_without_usage: 0,
      agent_versions: ["2.3.4"],
      models: ["house-1"],
    };
    expect(m.usage).toEqual(whole);
    expect(m.targets[0]!.usage).toEqual(whole);
    expect(m.gate.reasons).toContain(
      "usage: the token budget of 2000 was exceeded (2500 used) (gate.budget)",
    );
    const rows = readFileSync(path.join(dir, "merged/index.jsonl"), "utf8");
    expect(rows).toContain('"usage":{"input_tokens":1000');

    // One unsharded run: the same rollup, and the scheduler's own budget stop.
    const single = runCli(["run", "--out", "single"], dir);
    expect(single.code).toBe(1);
    const s = readJson<{ usage: unknown; gate: { reasons: string[] } }>(
      path.join(dir, "single/summary.json"),
    );
    expect(s.usage).toEqual(whole);
    expect(s.gate.reasons[0]).toContain("the token budget of 2000 was exceeded (2500 used)");
  }, 120_000);
});

describe("usage against a baseline in the comment", () => {
  it("shows each target's cost and tokens with their change against the baseline's", () => {
    const evalFile = (mode: string) => ({
      targets: [agent("house", mode)],
      workspace: { seed: { path: "project" } },
      tests: [test("one")],
    });
    const dir = project(evalFile("ok"));
    expect(runCli(["run", "--out", "base"], dir).code).toBe(0);
    // The same agent now spends 11,000 tokens (priced from the table) where it spent 1,200.
    writeFiles(dir, { "usage.eval.yaml": JSON.stringify(evalFile("tokens-only"), null, 2) });
    expect(runCli(["run", "--out", "head", "--baseline", "base"], dir).code).toBe(0);
    const md = readFileSync(path.join(dir, "head/comment.md"), "utf8");
    const row = md.split("\n").find((l) => l.startsWith("| house"));
    expect(row).toMatch(/\| 100 % \(±0 pp\) \| \\\$0\.02 \(\+\\\$0\.01\) · 11 k \(\+10 k\) \|$/);
    // And the report command renders the same from the bundle.
    expect(runCli(["report", "head"], dir).stdout).toContain(row!);
  }, 120_000);
});

describe("a budget on the usage the agents report", () => {
  interface Rows {
    test_id: string;
    attempts: { cancelled: number };
    runs: { status: string; failure_kind: string | null; result_path: string }[];
  }
  it.each([
    // 0.0125 $ and 1250 tokens per attempt: the third attempt breaks the cost budget, the second the token one.
    { budget: { cost_usd: 0.03 }, ran: 3, reason: "the cost budget of $0.03 was exceeded ($0.04 spent)" },
    { budget: { tokens: 2000 }, ran: 2, reason: "the token budget of 2000 was exceeded (2500 used)" },
  ])("$reason: no new attempt starts, the rest are cancelled with the reason", ({ budget, ran, reason }) => {
    const dir = project({
      name: "costly",
      targets: [agent("house", "ok")],
      repeat: 2,
      concurrency: 1,
      gate: { budget },
      workspace: { seed: { path: "project" } },
      tests: [test("a"), test("b"), test("c")],
    });
    const r = runCli(["run", "--out", "out"], dir);
    expect(r.code, r.stderr).toBe(1);
    const cancelled = 6 - ran;
    expect(r.stdout).toContain(`costly: ${reason}; ${cancelled} attempts were cancelled (gate.budget)`);
    const rows = readJsonl<Rows>(path.join(dir, "out/index.jsonl"));
    const runs = rows.flatMap((row) => row.runs);
    expect(runs.filter((x) => x.status === "passed")).toHaveLength(ran);
    const stopped = runs.filter((x) => x.failure_kind === "cancelled");
    expect(stopped).toHaveLength(cancelled);
    expect(rows.reduce((n, row) => n + row.attempts.cancelled, 0)).toBe(cancelled);
    for (const x of stopped) {
      expect(readJson(path.join(dir, "out", x.result_path))).toMatchObject({
        status: "error",
        failure_stage: "budget",
        message: `not run: ${reason}`,
        usage: null,
      });
    }
    const summary = readJson<{
      usage: Record<string, number>;
      gate: { verdict: string; budget_stops: unknown };
    }>(path.join(dir, "out/summary.json"));
    // Only the attempts that ran were paid for.
    expect(summary.usage).toMatchObject({ attempts: ran, input_tokens: 1000 * ran });
    expect(summary.usage.cost_usd).toBeCloseTo(0.0125 * ran, 9);
    expect(summary.gate).toMatchObject({
      verdict: "fail",
      budget_stops: [{ eval_path: "usage.eval.yaml", reason }],
    });
  }, 120_000);
});
