/**
 * Acceptance: two attempts of one case that run at the same time work in separate workspaces,
 * HOMEs and TMPDIRs, and neither sees the files the other writes.
 */
import { chmodSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

describe("concurrent attempts of one case", () => {
  const dir = tempDir();
  const rendezvous = tempDir();
  writeFiles(dir, {
    "project/a.txt": "a\n",
    "agent.sh": `#!/bin/sh
touch "$RENDEZVOUS/started-$EVALGATE_ATTEMPT"
i=0
while [ "$(ls "$RENDEZVOUS" | grep -c started)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
echo "started together: $(ls "$RENDEZVOUS" | grep -c started)"
echo "attempt $EVALGATE_ATTEMPT" > "mine-$EVALGATE_ATTEMPT.txt"
echo "home $EVALGATE_ATTEMPT" > "$HOME/home.txt"
echo "tmp $EVALGATE_ATTEMPT" > "$TMPDIR/tmp.txt"
touch "$RENDEZVOUS/wrote-$EVALGATE_ATTEMPT"
i=0
while [ "$(ls "$RENDEZVOUS" | grep -c wrote)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
echo "files:" $(ls)
echo "home:" $(cat "$HOME"/*.txt)
echo "tmp:" $(cat "$TMPDIR"/*.txt)
`,
    "c.eval.yaml": `name: together
# The rendezvous folder is shared by both attempts, which the default sandbox forbids.
targets: [{ name: a, provider: command, command: ["./agent.sh"], env_passthrough: [RENDEZVOUS], sandbox: none }]
repeat: 2
concurrency: 2
workspace: { seed: { path: project } }
tests:
  - { id: t, instruction: x, scorers: [{ type: diff, max_files: 1 }] }
`,
  });
  chmodSync(path.join(dir, "agent.sh"), 0o755);
  const out = path.join(dir, "bundle");
  const result = runCli(["run", ".", "--out", out], dir, { RENDEZVOUS: rendezvous });
  const row = readJsonl<{ runs: { dir: string; status: string }[] }>(path.join(out, "index.jsonl"))[0]!;

  it("ran both attempts at once, each seeing only its own files", () => {
    expect(result.stderr.trim()).toMatch(/^warning: isolation: none for a: [^\n]*$/);
    for (const n of [1, 2]) {
      const log = readFileSync(path.join(out, row.runs[n - 1]!.dir, "agent.log"), "utf8");
      expect(log).toContain("started together: 2");
      expect(log).toContain(`files: a.txt mine-${n}.txt\n`);
      expect(log).toContain(`home: home ${n}\n`);
      expect(log).toContain(`tmp: tmp ${n}\n`);
      const patch = readFileSync(path.join(out, row.runs[n - 1]!.dir, "diff.patch"), "utf8");
      expect(patch).toContain(`+++ b/mine-${n}.txt`);
      expect(patch).not.toContain(`mine-${3 - n}.txt`);
    }
    expect(row.runs.map((r) => r.status)).toEqual(["passed", "passed"]);
  });
});
