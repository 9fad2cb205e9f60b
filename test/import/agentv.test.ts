/**
 * `evalgate import agentv` through the real CLI: an AgentV 4.x eval file with a workspace template,
 * a before_all hook, trials and code-grader assertions; what cannot be graded here is listed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { gitRepo, runCli, sh, tempDir, writeFiles } from "../helpers.js";

const BUGGY = "def average(xs):\n    return sum(xs) / len(xs)\n";
const FIXED = "def average(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n";

const EVAL = `name: stats
description: Stats fixes
execution:
  target: codex
  trials:
    count: 2
    strategy: pass_at_k
workspace:
  template: ./template
  hooks:
    before_all:
      command: ["sh", "./scripts/prepare.sh"]
    after_each:
      reset: fast
assertions:
  - name: behaves
    type: code-grader
    command: ["python3", "./graders/check.py"]
tests:
  - id: empty-average
    criteria: average([]) returns 0.0
    input: average([]) raises ZeroDivisionError. Make it return 0.0.
    assertions:
      - type: contains
        value: "0.0"
  - id: with-context
    criteria: average([]) returns 0.0
    input:
      - role: user
        content:
          - type: file
            value: ./context.md
          - type: text
            value: Fix the empty case.
  - id: judged-only
    criteria: The explanation is clear
    input: Explain the bug.
    execution:
      skip_defaults: true
    assertions:
      - name: clarity
        type: llm-grader
        prompt: ./graders/clarity.md
`;

// A code grader as AgentV documents it: JSON on stdin, {"score", "assertions"} on stdout.
const CHECK = `import json, os, subprocess, sys
data = json.load(sys.stdin)
ws = data["workspace_path"]
assert os.environ["AGENTV_WORKSPACE_PATH"] == ws, "workspace path differs"
assert os.path.exists(os.path.join(ws, "prepared.txt")), "the before_all hook did not run"
ok = subprocess.run([sys.executable, "-c", "from stats import average; assert average([]) == 0.0"], cwd=ws).returncode == 0
print(json.dumps({"score": 1.0 if ok else 0.0, "assertions": [{"text": data["criteria"], "passed": ok}]}))
`;

describe("evalgate import agentv", () => {
  it("maps code graders, the workspace, hooks and trials; lists the rest; passes validate --solvable once a reference is added", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "evals/stats.eval.yaml": EVAL,
      "evals/template/stats.py": BUGGY,
      "evals/scripts/prepare.sh": "echo ready > prepared.txt\n",
      "evals/graders/check.py": CHECK,
      "evals/graders/clarity.md": "Is the explanation clear?\n",
      "evals/context.md": "stats.py computes averages.\n",
    });
    const r = runCli(["import", "agentv", "evals/stats.eval.yaml", "--out", "suite"], dir);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain("imported 2 tests into suite/agentv.eval.yaml, skipped 1");
    expect(r.stderr).toContain(
      "skipped judged-only (evals/stats.eval.yaml tests[2]): nothing evalgate can grade (clarity (llm-grader): an LLM grader without a judge model",
    );
    expect(r.stderr).toContain(
      "Fix: add a code-grader assertion that checks the workspace, or give the llm-grader a model",
    );
    const md = readFileSync(path.join(dir, "suite/IMPORT.md"), "utf8");
    expect(md).toContain(
      "not mapped: contains (contains): grades the agent's reply; evalgate grades the workspace",
    );
    expect(md).toContain("workspace.hooks.after_each");
    expect(md).toContain('execution target(s) "codex"');

    const evalFile = path.join(dir, "suite/agentv.eval.yaml");
    const file = parse(readFileSync(evalFile, "utf8")) as { tests: Record<string, unknown>[] };
    expect(file.tests.map((t) => [t.id, t.repeat])).toEqual([
      ["empty-average", 2],
      ["with-context", 2],
    ]);
    expect(readFileSync(path.join(dir, "suite/agentv/stats/with-context/instruction.md"), "utf8")).toContain(
      "stats.py computes averages.",
    );
    expect(runCli(["validate", "suite"], dir).code).toBe(0);

    // AgentV has no reference: the user adds one, as IMPORT.md says.
    const repo = gitRepo({ "stats.py": BUGGY });
    writeFileSync(path.join(repo, "stats.py"), FIXED);
    writeFileSync(path.join(dir, "suite/fix.patch"), sh("git diff", repo));
    for (const t of file.tests) t.reference = "fix.patch";
    writeFileSync(evalFile, stringify(file));
    const s = runCli(["validate", "--solvable", "suite", "--json"], dir);
    expect(s.code, s.stdout + s.stderr).toBe(0);
    expect(JSON.parse(s.stdout).results).toMatchObject([
      { test_id: "empty-average", reference: { passed: 1 }, noop: { passed: 0 } },
      { test_id: "with-context", reference: { passed: 1 }, noop: { passed: 0 } },
    ]);
  });

  it("a workspace of two repositories is reported per test with the fix", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "e.eval.yaml": `workspace:\n  repos:\n    - path: ./a\n      source: { type: local, path: ./a }\n    - path: ./b\n      source: { type: local, path: ./b }\ntests:\n  - id: t1\n    input: do it\n    assertions:\n      - type: code-grader\n        command: ["true"]\n`,
    });
    const r = runCli(["import", "agentv", "e.eval.yaml", "--out", "o"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "skipped t1 (e.eval.yaml tests[0]): the workspace has 2 repositories; an evalgate workspace is one. Fix: keep one repository",
    );
  });
});
