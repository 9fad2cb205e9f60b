import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { quickstartRun, ROOT, readJson, readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

interface Row {
  test_id: string;
  target: string;
  verdict: string;
  result_dir: string;
}

describe("--shard and merge", () => {
  const dir = tempDir();
  const shards = [1, 2, 3].map((i) => {
    const out = path.join(dir, `s${i}`);
    const r = runCli(["run", "examples/quickstart", "--shard", `${i}/3`, "--out", out], ROOT);
    return { out, r };
  });
  // The unsharded run, read only: made once per test run (cli.test.ts reads it too).
  const whole = quickstartRun().out;

  it("splits the cases into disjoint shards that exit 0 and leave the gate to merge", () => {
    const ids = shards.flatMap((s) =>
      readJsonl<Row>(path.join(s.out, "index.jsonl")).map((r) => `${r.test_id}/${r.target}`),
    );
    expect(ids).toHaveLength(9);
    expect(new Set(ids).size).toBe(9);
    for (const s of shards) {
      expect(s.r.code).toBe(0);
      expect(s.r.stdout).toMatch(
        /shard \d\/3 finished: \d of \d cases failing so far; the merge job decides the gate/,
      );
      expect(s.r.stdout).not.toMatch(/✗ gate failed|gate passed/);
      expect(readJson<{ run: { shard: unknown } }>(path.join(s.out, "summary.json")).run.shard).toMatchObject(
        { total: 3 },
      );
    }
  });

  it("merges the shards into the bundle and verdict of the whole run", () => {
    const merged = path.join(dir, "merged");
    const r = runCli(["merge", ...shards.map((s) => s.out), "--out", merged], ROOT);
    expect(r.code).toBe(0);
    const rows = readJsonl<Row>(path.join(merged, "index.jsonl"));
    const wholeRows = readJsonl<Row>(path.join(whole, "index.jsonl"));
    const key = (x: Row) => `${x.test_id}/${x.target}=${x.verdict}`;
    expect(rows.map(key).sort()).toEqual(wholeRows.map(key).sort());
    for (const row of rows) expect(readJson(path.join(merged, row.result_dir, "summary.json"))).toBeTruthy();
    const summary = readJson<{ gate: unknown; counts: unknown; run: { merged_from: string[] } }>(
      path.join(merged, "summary.json"),
    );
    const wholeSummary = readJson<{ gate: unknown; counts: unknown }>(path.join(whole, "summary.json"));
    expect(summary.gate).toEqual(wholeSummary.gate);
    expect(summary.counts).toEqual(wholeSummary.counts);
    expect(summary.run.merged_from).toHaveLength(3);
    // The merged bundle gets its own reports, over every case of every shard.
    const comment = readFileSync(path.join(merged, "comment.md"), "utf8");
    expect(comment).toContain("merged from 3 shards");
    expect(comment).toContain("**9 cases** · 5 passed · 4 failed");
    expect(readFileSync(path.join(merged, "junit.xml"), "utf8").match(/<testcase /g)).toHaveLength(9);
    expect(readFileSync(path.join(merged, "report.html"), "utf8")).toContain("<!doctype html>");
  });

  it("refuses a missing shard, a shard given twice and a bad --shard", () => {
    const missing = runCli(["merge", shards[0]!.out, shards[2]!.out, "--out", path.join(dir, "m2")], ROOT);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("shard 2/3 missing: a merged verdict needs every shard");
    const twice = runCli(
      ["merge", shards[0]!.out, shards[0]!.out, shards[1]!.out, "--out", path.join(dir, "m3")],
      ROOT,
    );
    expect(twice.stderr).toContain("shard 1/3 appears twice");
    const bad = runCli(["run", "examples/quickstart", "--shard", "4/3"], ROOT);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--shard takes I/N with 1 <= I <= N");
  });
});

describe("merge keeps what the agents ran under", () => {
  it("the merged summary and comment carry the weakest isolation of the shards, with its reason", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "project/a.txt": "a\n",
      "iso.eval.yaml": `name: iso
targets:
  - name: agent
    provider: command
    command: ["sh", "-c", "echo done > done.txt"]
workspace:
  seed: { path: project }
tests:
  - id: one
    instruction: write done.txt
    scorers: [{ name: done, type: file, path: done.txt, exists: true }]
  - id: two
    instruction: write done.txt
    scorers: [{ name: done, type: file, path: done.txt, exists: true }]
`,
    });
    const s1 = runCli(["run", ".", "--shard", "1/2", "--out", "s1"], dir);
    // The second shard's runner cannot do better than a subreaper (as on a runner without bubblewrap).
    const s2 = runCli(["run", ".", "--shard", "2/2", "--out", "s2"], dir, {
      EVALGATE_ISOLATION: "subreaper",
    });
    expect(s1.code, s1.stderr).toBe(0);
    expect(s2.code, s2.stderr).toBe(0);
    type Iso = {
      isolation?: { level: string | null; reason: string | null; gaps?: string[]; targets: unknown[] };
    };
    const weak = readJson<Iso>(path.join(dir, "s2/summary.json")).isolation!;
    expect(weak.level).toBe("subreaper");
    expect(readJsonl(path.join(dir, "s2/index.jsonl"))).toHaveLength(1);

    const m = runCli(["merge", "s1", "s2", "--out", "merged"], dir);
    expect(m.code, m.stderr).toBe(0);
    const merged = readJson<Iso>(path.join(dir, "merged/summary.json")).isolation;
    expect(weak.reason).toBe("bubblewrap cannot run here: EVALGATE_ISOLATION=subreaper"); // said once
    expect(weak.gaps).toContain("read the answer key from the code its scorers run");
    expect(merged).toEqual({
      level: "subreaper",
      reason: weak.reason,
      gaps: weak.gaps,
      targets: [{ name: "agent", level: "subreaper", reason: weak.reason }],
    });
    expect(readFileSync(path.join(dir, "merged/comment.md"), "utf8")).toContain("**Isolation: subreaper**");
    // The merged bundle's seal covers what merge wrote.
    expect(runCli(["report", "merged", "--format", "markdown"], dir).code).toBe(0);
  });
});

describe("merge keeps how setup-built trees were shared", () => {
  // before: the merged summary.json had no setup_trees, though both shards' summaries had one.
  it("the merged summary counts each shard's attempts by mode, with every shard's reasons", () => {
    const dir = tempDir();
    const test = (id: string) => ({
      id,
      instruction: "write done.txt",
      scorers: [{ name: "done", type: "file", path: "done.txt", exists: true }],
    });
    writeFiles(dir, {
      "project/.gitignore": "node_modules/\n",
      "project/a.txt": "a\n",
      "trees.eval.yaml": JSON.stringify({
        name: "trees",
        repeat: 2,
        targets: [{ name: "agent", provider: "command", command: ["sh", "-c", "echo done > done.txt"] }],
        workspace: {
          seed: { path: "project" },
          setup: { command: ["sh", "-c", "mkdir -p node_modules/x && echo 1 > node_modules/x/i.js"] },
        },
        tests: [test("one"), test("two")],
      }),
    });
    const s1 = runCli(["run", ".", "--shard", "1/2", "--out", "s1"], dir);
    // The second shard's agents are not under bubblewrap: its trees are copied, and it says why.
    const s2 = runCli(["run", ".", "--shard", "2/2", "--out", "s2"], dir, {
      EVALGATE_ISOLATION: "subreaper",
    });
    expect(s1.code, s1.stderr).toBe(0);
    expect(s2.code, s2.stderr).toBe(0);
    type Trees = { mode: string; attempts: Record<string, number>; reasons: string[] };
    const shard = (name: string) => readJson<Record<string, unknown>>(path.join(dir, name, "summary.json"));
    const t1 = shard("s1").setup_trees as Trees;
    const t2 = shard("s2").setup_trees as Trees;
    expect(t2).toEqual({
      mode: "copy",
      attempts: { copy: 2 },
      reasons: ["the agent does not run under bubblewrap"],
    });
    expect(Object.values(t1.attempts).reduce((a, b) => a + b)).toBe(2);

    const m = runCli(["merge", "s1", "s2", "--out", "merged"], dir);
    expect(m.code, m.stderr).toBe(0);
    const merged = shard("merged");
    const attempts: Record<string, number> = { ...t1.attempts };
    for (const [mode, n] of Object.entries(t2.attempts)) attempts[mode] = (attempts[mode] ?? 0) + n;
    expect(merged.setup_trees).toEqual({
      mode: Object.keys(attempts).length === 1 ? Object.keys(attempts)[0] : "mixed",
      attempts,
      reasons: [...new Set([...t1.reasons, ...t2.reasons])].sort(),
    });
    // Nothing a shard's summary says is dropped by the merge; each case's summary keeps its setup.
    expect(Object.keys(merged)).toEqual(expect.arrayContaining(Object.keys(shard("s1"))));
    expect(Object.keys(merged)).toEqual(expect.arrayContaining(Object.keys(shard("s2"))));
    const rows = readJsonl<{ result_dir: string }>(path.join(dir, "merged/index.jsonl"));
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const c = readJson<{ setup?: { command: unknown } }>(
        path.join(dir, "merged", row.result_dir, "summary.json"),
      );
      expect(c.setup?.command).toEqual([
        "sh",
        "-c",
        "mkdir -p node_modules/x && echo 1 > node_modules/x/i.js",
      ]);
    }
  });
});
