/**
 * Limits: a diff over limits.diff is stored cut with a marker and flagged in result.json and the
 * case row; agent output over limits.log is cut with a marker; workspaces are removed once their
 * evidence is written, unless --keep-workspaces.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJson, readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

interface Row {
  target: string;
  runs: { dir: string; diff_truncated: boolean }[];
}

describe("limits on the evidence an attempt keeps", () => {
  const dir = tempDir();
  writeFiles(dir, {
    "project/README.md": "hi\n",
    // 3 MiB of text in a new file, and 1 MiB printed.
    "agents/big.sh": `#!/bin/sh
# Four files each under limits.diff (a larger one would not be read at all), 3 MB together.
for f in 0 1 2 3; do node -e 'for (let i = 0; i < 7500; i++) console.log(String(i).padStart(8, "0") + " " + "x".repeat(95))' > big-$f.txt; done
node -e 'for (let i = 0; i < 16000; i++) console.log("line " + i + " " + "y".repeat(58))'
echo "LAST LINE"
`,
    "agents/small.sh": "#!/bin/sh\necho small > small.txt\n",
    "l.eval.yaml": `name: limits
targets:
  - { name: big, provider: command, command: ["./agents/big.sh"] }
  - { name: small, provider: command, command: ["./agents/small.sh"] }
limits: { diff: 1MiB, log: 64KiB }
workspace: { seed: { path: project } }
tests:
  - id: t
    instruction: write a lot
    scorers:
      - { name: lines, type: diff, max_lines: 100000000 }
`,
  });
  for (const a of ["big", "small"]) chmodSync(path.join(dir, "agents", `${a}.sh`), 0o755);
  const out = path.join(dir, "bundle");
  const work = path.join(dir, "work");
  const result = runCli(["run", ".", "--out", out, "--work-dir", work], dir);
  const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
  const runOf = (t: string) => rows.find((r) => r.target === t)!.runs[0]!;

  it("stores a diff over limits.diff cut at a line, with a marker, and flags it", () => {
    expect(result.stderr).toBe("");
    const runDir = path.join(out, runOf("big").dir);
    const patch = readFileSync(path.join(runDir, "diff.patch"), "utf8");
    expect(Buffer.byteLength(patch)).toBeLessThanOrEqual(1024 * 1024 + 200);
    expect(Buffer.byteLength(patch)).toBeGreaterThan(1024 * 1024 - 200);
    const lines = patch.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(
      /^# evalgate: diff truncated: \d+ of \d+ bytes kept \(limits\.diff is 1 MiB\)$/,
    );
    // Cut at a line end: the last kept line is whole.
    expect(lines.at(-2)).toMatch(/^\+\d{8} x{95}$/);
    const r = readJson<{ diff: { bytes: number; truncated: boolean; additions: number } }>(
      path.join(runDir, "result.json"),
    );
    expect(r.diff.truncated).toBe(true);
    expect(r.diff.bytes).toBeGreaterThan(3_000_000);
    // The scorers saw the whole change, not the stored cut.
    expect(r.diff.additions).toBe(30000);
    expect(runOf("big").diff_truncated).toBe(true);
    const summary = readJson<{ runs: { diff_truncated: boolean }[] }>(
      path.join(out, path.dirname(runOf("big").dir), "summary.json"),
    );
    expect(summary.runs[0]!.diff_truncated).toBe(true);
  });

  it("keeps a diff under the limit whole and unflagged", () => {
    const runDir = path.join(out, runOf("small").dir);
    expect(runOf("small").diff_truncated).toBe(false);
    const patch = readFileSync(path.join(runDir, "diff.patch"), "utf8");
    expect(patch).not.toContain("evalgate: diff truncated");
    const repo = tempDir();
    writeFiles(repo, { "README.md": "hi\n" });
    sh(`git init -q . && git apply ${JSON.stringify(path.join(runDir, "diff.patch"))}`, repo);
    expect(readFileSync(path.join(repo, "small.txt"), "utf8")).toBe("small\n");
  });

  it("cuts agent output over limits.log with a marker, keeping the first and last part", () => {
    const log = readFileSync(path.join(out, runOf("big").dir, "agent.log"), "utf8");
    expect(Buffer.byteLength(log)).toBeLessThan(64 * 1024 + 300);
    expect(log.startsWith("line 0 ")).toBe(true);
    expect(log).toMatch(
      /\[evalgate: output cut here: \d+ bytes not kept; the log keeps the first and last part of a 65536-byte cap\]/,
    );
    expect(log.trimEnd().endsWith("LAST LINE")).toBe(true);
  });

  it("removes every workspace once its evidence is written", () => {
    expect(existsSync(work)).toBe(false);
  });
});

const UNSANDBOXED = { EVALGATE_ISOLATION: "none" };

describe("--keep-workspaces", () => {
  const dir = tempDir();
  writeFiles(dir, {
    "project/a.txt": "a\n",
    // Attempt 2 looks for attempt 1's folder: with --keep-workspaces it is still there. (Only an
    // agent outside the sandbox can look: a sandboxed one never sees another attempt's folder, so
    // these runs use EVALGATE_ISOLATION=none.)
    "agent.sh": `#!/bin/sh
echo "attempt $EVALGATE_ATTEMPT" > mine.txt
prev="$(dirname "$(dirname "$PWD")")/run-1/ws"
if [ "$EVALGATE_ATTEMPT" = 2 ]; then
  if [ -d "$prev" ]; then echo "run-1 still there"; else echo "run-1 gone"; fi
fi
`,
    "k.eval.yaml": `name: keep
targets: [{ name: a, provider: command, command: ["./agent.sh"] }]
repeat: 2
concurrency: 1
workspace: { seed: { path: project } }
tests:
  - { id: t, instruction: x, scorers: [{ type: file, path: mine.txt }] }
`,
  });
  chmodSync(path.join(dir, "agent.sh"), 0o755);

  it("removes an attempt's workspace before the next attempt runs, by default", () => {
    const out = path.join(dir, "b1");
    const work = path.join(dir, "w1");
    const r = runCli(["run", ".", "--out", out, "--work-dir", work], dir, UNSANDBOXED);
    expect(r.code).toBe(0);
    const row = readJsonl<Row>(path.join(out, "index.jsonl"))[0]!;
    expect(readFileSync(path.join(out, row.runs[1]!.dir, "agent.log"), "utf8")).toBe("run-1 gone\n");
    expect(existsSync(work)).toBe(false);
  });

  it("keeps every workspace, with the agent's changes, and says where", () => {
    const out = path.join(dir, "b2");
    const work = path.join(dir, "w2");
    const r = runCli(["run", ".", "--out", out, "--work-dir", work, "--keep-workspaces"], dir, UNSANDBOXED);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`workspaces kept in ${work}`);
    const row = readJsonl<Row>(path.join(out, "index.jsonl"))[0]!;
    expect(readFileSync(path.join(out, row.runs[1]!.dir, "agent.log"), "utf8")).toBe("run-1 still there\n");
    const attempts = path.join(work, "attempts");
    const [caseDir] = readdirSync(attempts);
    for (const n of [1, 2]) {
      const ws = path.join(attempts, caseDir!, `run-${n}`, "ws");
      expect(statSync(ws).isDirectory()).toBe(true);
      expect(readFileSync(path.join(ws, "mine.txt"), "utf8")).toBe(`attempt ${n}\n`);
      // A repository of its own (copied, not linked) at the prepared baseline, for a look afterwards.
      expect(sh("git describe --tags --exact-match HEAD", ws).trim()).toBe("evalgate-baseline");
      expect(sh("git status --porcelain", ws)).toBe("?? mine.txt\n");
    }
    expect(readdirSync(path.join(work, "baselines")).length).toBe(1);
  });
});
