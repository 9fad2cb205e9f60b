/** Shards balanced by the baseline's durations (longest first onto the least-loaded shard), else by count. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assignShards } from "../../src/run/shard.js";
import { readJson, readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

const key = (test: string, target: string) => `s.eval.yaml\u0000${test}\u0000${target}`;
const cases = (tests: string[], targets: string[]) =>
  targets.flatMap((target) => tests.map((t) => ({ key: key(t, target), target })));

describe("assignShards", () => {
  it("by count, deals each target's cases round the shards (not one target per shard)", () => {
    const a = assignShards(cases(["a", "b", "c", "d"], ["llm", "script"]), 2);
    expect(a.by).toBe("count");
    for (const shard of a.shards) {
      expect(shard.filter((k) => k.endsWith("llm"))).toHaveLength(2);
      expect(shard.filter((k) => k.endsWith("script"))).toHaveLength(2);
    }
  });

  it.each([
    // durations (ms) → expected loads of two shards (LPT: longest first onto the least loaded)
    [
      [10, 10, 10, 10, 1, 1, 1, 1],
      [22, 22],
    ],
    [
      [7, 5, 4, 3, 1],
      [10, 10],
    ],
    // LPT is a heuristic: the optimum here is 6 + 6
    [
      [3, 3, 2, 2, 2],
      [7, 5],
    ],
    [
      [100, 1, 1, 1],
      [100, 3],
    ],
  ])("by duration %j → loads %j", (ms, loads) => {
    const cs = ms.map((_, i) => ({ key: key(`t${i}`, "x"), target: "x" }));
    const a = assignShards(cs, 2, new Map(cs.map((c, i) => [c.key, ms[i]!])));
    expect(a.by).toBe("duration");
    expect(a.loads).toEqual(loads);
    expect(a.shards.flat().sort()).toEqual(cs.map((c) => c.key).sort());
  });

  it("counts a case the baseline lacks as the mean of the known ones, and never loses or repeats one", () => {
    const cs = cases(["a", "b", "c"], ["x"]);
    const a = assignShards(cs, 3, new Map([[cs[0]!.key, 30]]));
    expect(a.loads).toEqual([30, 30, 30]);
    expect(new Set(a.shards.flat()).size).toBe(3);
  });
});

describe("evalgate run --shard with a baseline: a two-target suite", () => {
  // One slow target (the "LLM agent") and one quick; the baseline holds their real durations.
  const dir = tempDir();
  const tests = ["a", "b", "c", "d"]
    .map((t) => `  - { id: ${t}, instruction: go, scorers: [{ type: command, run: "true" }] }`)
    .join("\n");
  writeFiles(dir, {
    "s.eval.yaml": `name: s
targets:
  - { name: llm, provider: command, command: "sleep 0.4" }
  - { name: script, provider: command, command: "true" }
workspace: { seed: { empty: true } }
tests:
${tests}
`,
  });
  const base = path.join(dir, "base");
  const baseRun = runCli(["run", "s.eval.yaml", "--out", base], dir);
  const shards = [1, 2].map((i) => {
    const out = path.join(dir, `shard${i}`);
    return {
      out,
      r: runCli(["run", "s.eval.yaml", "--shard", `${i}/2`, "--baseline", base, "--out", out], dir),
    };
  });

  it("gives each shard within 20 % of the other's baseline time, and says the merge decides", () => {
    expect(baseRun.code).toBe(0);
    const ms = new Map<string, number>();
    for (const row of readJsonl<{ test_id: string; target: string; summary_path: string }>(
      path.join(base, "index.jsonl"),
    )) {
      const s = readJson<{ runs: { duration_ms: number }[] }>(path.join(base, row.summary_path));
      ms.set(
        `${row.test_id}/${row.target}`,
        s.runs.reduce((a, r) => a + r.duration_ms, 0),
      );
    }
    const loads = shards.map((s) =>
      readJsonl<{ test_id: string; target: string }>(path.join(s.out, "index.jsonl")).reduce(
        (a, r) => a + ms.get(`${r.test_id}/${r.target}`)!,
        0,
      ),
    );
    expect(Math.abs(loads[0]! - loads[1]!) / Math.max(...loads)).toBeLessThan(0.2);
    for (const [i, s] of shards.entries()) {
      expect(s.r.code).toBe(0);
      expect(s.r.stdout).toMatch(
        new RegExp(
          `shard ${i + 1}/2 finished: \\d of 4 cases failing so far; the merge job decides the gate`,
        ),
      );
      expect(s.r.stdout).not.toContain("gate failed");
      expect(s.r.stdout).not.toContain("gate passed");
      // The shard's comment.md (its job summary in the action) leads with the same words, no ❌ / ✅.
      const comment = readFileSync(path.join(s.out, "comment.md"), "utf8");
      expect(comment).toContain(`## ⏳ evalgate — shard ${i + 1}/2 finished:`);
      expect(comment).not.toMatch(/^## .*(❌|✅|gate (passed|failed))/m);
    }
  });
});
