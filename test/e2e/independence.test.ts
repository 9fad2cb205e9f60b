/**
 * Acceptance (issue 18): attempts are independent samples. A capture never writes to (or touches)
 * the prepared tree that attempts are copied from, so attempt N cannot read the blobs of attempts
 * 1..N−1 in its copied .git, and a copy taken while another attempt captures never fails.
 */
import { chmodSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

/** Every file of the prepared trees with its size and modification time, one line each. */
const TREE_STATE = `find "$WORKROOT/baselines" -path '*/tree/*' -printf '%P %s %T@ %m\\n' | sort | sha256sum | cut -c1-16`;

describe("independent attempts", () => {
  const dir = tempDir();
  const work = path.join(tempDir(), "work");
  writeFiles(dir, {
    "project/a.txt": "shared content\n",
    "project/src/b.txt": "b\n",
    // Attempt 1 writes a secret blob and a file equal to a baseline blob (which git would "freshen"
    // in the store it found it in); later attempts look for every secret in their copied .git.
    "agent.sh": `#!/bin/sh
echo "tree before: $(${TREE_STATE})"
echo "objects: $(git cat-file --batch-all-objects --batch | grep -c 'SECRET-' || true)"
echo "SECRET-$EVALGATE_ATTEMPT-4f1c9e" > secret.txt
cp a.txt copy-of-a.txt
git add -A >/dev/null 2>&1 || true
echo "tree after: $(${TREE_STATE})"
`,
    "c.eval.yaml": `name: independent
targets: [{ name: a, provider: command, command: ["./agent.sh"], env_passthrough: [WORKROOT] }]
repeat: 3
concurrency: 1
workspace: { seed: { path: project } }
tests:
  - { id: t, instruction: x, scorers: [{ type: diff, max_files: 5 }] }
`,
  });
  chmodSync(path.join(dir, "agent.sh"), 0o755);
  const out = path.join(dir, "bundle");
  const result = runCli(["run", ".", "--out", out, "--work-dir", work, "--keep-workspaces"], dir, {
    WORKROOT: work,
  });
  const row = readJsonl<{ runs: { dir: string; status: string }[] }>(path.join(out, "index.jsonl"))[0]!;
  const logs = row.runs.map((r) => readFileSync(path.join(out, r.dir, "agent.log"), "utf8"));

  it("captures every attempt's own change", () => {
    expect(result.stderr).toBe("");
    expect(row.runs.map((r) => r.status)).toEqual(["passed", "passed", "passed"]);
    for (const [i, r] of row.runs.entries()) {
      const patch = readFileSync(path.join(out, r.dir, "diff.patch"), "utf8");
      expect(patch).toContain(`+SECRET-${i + 1}-4f1c9e`);
      expect(patch).toContain("+++ b/copy-of-a.txt");
    }
  });

  it("no attempt's copied .git holds an earlier attempt's blobs", () => {
    for (const log of logs) expect(log).toContain("objects: 0\n");
  });

  it("the prepared tree is never written after it is prepared", () => {
    const states = logs.flatMap((log) => [...log.matchAll(/tree (?:before|after): (\w+)/g)].map((m) => m[1]));
    expect(states).toHaveLength(6);
    expect(new Set(states).size).toBe(1);
    // Nothing unreachable (no captured blob) in the prepared tree's object store.
    const baselines = sh("ls", path.join(work, "baselines")).trim().split("\n");
    for (const b of baselines) {
      const tree = path.join(work, "baselines", b, "tree");
      expect(sh("git fsck --unreachable --no-reflogs 2>&1", tree)).not.toMatch(/unreachable/);
      expect(sh("git cat-file --batch-all-objects --batch", tree)).not.toContain("SECRET-");
    }
  });
});

describe("many short attempts, four at a time", () => {
  const dir = tempDir();
  const files: Record<string, string> = {};
  for (let i = 0; i < 50; i++) files[`project/src/f${i}.txt`] = `file ${i}\n`;
  const tests = Array.from(
    { length: 40 },
    (_, i) => `  - { id: t${i}, instruction: x, scorers: [{ type: diff, max_files: 3 }] }`,
  ).join("\n");
  writeFiles(dir, {
    ...files,
    // A new blob and a blob the store already holds (which git would freshen where it found it).
    "agent.sh": `#!/bin/sh
echo "$EVALGATE_TEST_ID $EVALGATE_ATTEMPT" > mine.txt
cp src/f1.txt again.txt
`,
    "c.eval.yaml": `name: many
targets: [{ name: a, provider: command, command: ["./agent.sh"] }]
repeat: 3
concurrency: 4
workspace: { seed: { path: project } }
tests:
${tests}
`,
  });
  chmodSync(path.join(dir, "agent.sh"), 0o755);
  const out = path.join(dir, "bundle");
  const result = runCli(["run", ".", "--out", out], dir, {}, 900_000);
  const rows = readJsonl<{ runs: { dir: string; status: string; failure_kind?: string }[] }>(
    path.join(out, "index.jsonl"),
  );

  it("120 attempts, none a workspace_error, each with its own change only", () => {
    expect(result.stderr).toBe("");
    const runs = rows.flatMap((r) => r.runs);
    expect(runs).toHaveLength(120);
    expect(runs.filter((r) => r.status !== "passed")).toEqual([]);
    for (const r of runs.slice(0, 12)) {
      const patch = readFileSync(path.join(out, r.dir, "diff.patch"), "utf8");
      expect(patch).toContain("+++ b/mine.txt");
      expect(patch).toContain("+++ b/again.txt");
    }
  });
});
