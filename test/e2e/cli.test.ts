import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  gitRepo,
  quickstartRun,
  ROOT,
  readJson,
  readJsonl,
  runCli,
  running,
  sh,
  tempDir,
  writeFiles,
} from "../helpers.js";

interface Row {
  test_id: string;
  target: string;
  verdict: string;
  classification: string;
  result_dir: string;
  summary_path: string;
  runs: {
    status: string;
    failure_kind: string | null;
    dir: string;
    result_path: string;
    grading_path: string | null;
    diff_path: string | null;
  }[];
}

describe("evalgate run on the quickstart example", () => {
  // The same run as shard.test.ts's whole run: made once per test run, read here.
  const { out, result } = quickstartRun();

  it("exits 0 and prints passing and failing cases and the bundle path", () => {
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/✓ pass\s+quickstart\/empty-cart-total\s+reference/);
    expect(result.stdout).toMatch(/✗ fail\s+quickstart\/discount-percent\s+scripted-agent/);
    expect(result.stdout).toContain("✓ gate passed: 5 of 9 cases passed");
    expect(result.stdout).toContain(`bundle: ${out}`);
  });

  it("writes an index whose rows point to files that exist", () => {
    const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
    expect(rows).toHaveLength(9);
    for (const row of rows) {
      expect(existsSync(path.join(out, row.summary_path))).toBe(true);
      for (const run of row.runs) {
        for (const p of [run.result_path, run.grading_path, run.diff_path]) {
          expect(p).not.toBeNull();
          expect(existsSync(path.join(out, p!)), p!).toBe(true);
        }
        for (const f of ["agent.log", "prompt.md", "scorers/unit.log"])
          expect(existsSync(path.join(out, run.dir, f))).toBe(true);
      }
    }
    const summary = readJson<{
      schema: string;
      gate: { verdict: string };
      counts: { cases: number; passed: number };
    }>(path.join(out, "summary.json"));
    expect(summary.schema).toBe("evalgate.summary/v1");
    expect(summary.gate.verdict).toBe("pass");
    expect(summary.counts).toMatchObject({ cases: 9, passed: 5 });
  });

  it("gives verdicts that match what each agent did", () => {
    const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
    const verdict = Object.fromEntries(rows.map((r) => [`${r.test_id}/${r.target}`, r.verdict]));
    expect(verdict).toEqual({
      "empty-cart-total/reference": "pass",
      "empty-cart-total/scripted-agent": "pass",
      "empty-cart-total/noop": "fail",
      "discount-percent/reference": "pass",
      "discount-percent/scripted-agent": "fail",
      "discount-percent/noop": "fail",
      "price-format/reference": "pass",
      "price-format/scripted-agent": "pass",
      "price-format/noop": "fail",
    });
    for (const r of rows.filter((x) => x.target === "noop"))
      expect(r.runs[0]!.failure_kind).toBe("empty_diff");
    const wrongFix = rows.find((r) => r.test_id === "discount-percent" && r.target === "scripted-agent")!;
    expect(wrongFix.runs[0]!.failure_kind).toBe("quality");
    const attempt = readJson<{ message: string; diff: { files: { path: string }[] } }>(
      path.join(out, wrongFix.runs[0]!.result_path),
    );
    expect(attempt.message).toContain("not ok 1 - a 10% discount takes a tenth off");
    expect(attempt.diff.files.map((f) => f.path)).toEqual(["src/cart.js"]);
  });

  it("writes patches that apply to the baseline", () => {
    const base = path.join(tempDir(), "base");
    cpSync(path.join(ROOT, "examples/quickstart/project"), base, { recursive: true });
    sh("git init -q && git add -A && git commit -qm base", base);
    const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
    let nonEmpty = 0;
    for (const row of rows) {
      const patch = path.join(out, row.runs[0]!.diff_path!);
      if (readFileSync(patch).length === 0) continue;
      nonEmpty++;
      sh(`git apply --check ${patch}`, base);
    }
    expect(nonEmpty).toBe(6);
  });

  it("fails the gate, exit 1, when only the noop target runs", () => {
    const r = runCli(
      ["run", "examples/quickstart", "--target", "noop", "--out", path.join(tempDir(), "b")],
      ROOT,
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("✗ gate failed: 0 of 3 cases passed");
    expect(r.stdout).toContain(
      "quickstart: 0 of 3 cases passed (0 %); the gate needs at least 50 % (gate.min_case_pass_rate)",
    );
  });
});

describe("evalgate run with a hung agent", () => {
  it("ends the attempt as a timeout within seconds and leaves no process behind", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "hang.eval.yaml": `targets:
  - { name: hang, provider: command, command: "sleep 1237 & sleep 1237", timeout: 2s }
workspace: { seed: { empty: true } }
tests:
  - id: hangs
    instruction: wait forever
    scorers: [{ type: command, run: "false" }] # graded on what it left: nothing that passes
`,
    });
    const started = Date.now();
    const r = runCli(["run", "--out", "b"], dir);
    const elapsed = Date.now() - started;
    expect(r.code).toBe(1);
    expect(elapsed).toBeLessThan(15_000);
    const row = readJsonl<Row>(path.join(dir, "b/index.jsonl"))[0]!;
    // A timeout without infrastructure trouble is the agent's own failure (docs/gate.md).
    expect(row.runs[0]).toMatchObject({ status: "failed", failure_kind: "agent_timeout" });
    expect(row.verdict).toBe("fail");
    expect(running("sleep 1237")).toEqual([]);
  });
});

describe("bad input gives one clear message and exit 2, never a stack trace", () => {
  const base = (extra = "") => `targets:
  - { name: agent, provider: command, command: ["./agent.sh"] }
workspace: { seed: { path: app } }
tests:
  - id: t1
    instruction: fix it
    scorers: [{ type: command, run: "true" }]
${extra}`;

  function check(files: Record<string, string>, expected: RegExp, args: string[] = ["run"]) {
    const dir = tempDir();
    writeFiles(dir, { "app/x.txt": "x\n", "agent.sh": "#!/bin/sh\ntrue\n", ...files });
    sh("chmod +x agent.sh", dir);
    const r = runCli(args, dir);
    expect(r.stderr).toMatch(expected);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.code).toBe(2);
    return r;
  }

  it.each([
    ["malformed YAML", { "x.eval.yaml": "tests: [\n  - id: a\n" }, /x\.eval\.yaml:\d+: malformed YAML/],
    [
      "an unknown key",
      { "x.eval.yaml": base().replace("instruction:", "instrucion:") },
      /x\.eval\.yaml:6: tests\[0\]\.instrucion: unknown key "instrucion"\n\s+hint: did you mean "instruction"\?/,
    ],
    ["a wrong type", { "x.eval.yaml": base("repeat: lots\n") }, /x\.eval\.yaml:8: repeat: expected a number/],
    [
      "a missing instruction file",
      { "x.eval.yaml": base().replace("instruction: fix it", "instruction_file: nope.md") },
      /instruction file nope\.md does not exist/,
    ],
    [
      "a duplicate test id",
      {
        "x.eval.yaml": base(
          "  - id: t1\n    instruction: again\n    scorers: [{ type: command, run: 'true' }]\n",
        ),
      },
      /duplicate test id "t1"/,
    ],
    [
      "weights that do not sum to 1",
      { "x.eval.yaml": base().replace('run: "true" }', 'run: "true", weight: 0.5 }') },
      /sum to 0\.5, not 1\.0/,
    ],
    [
      "a missing reference patch",
      {
        "x.eval.yaml": base().replace("instruction: fix it", "instruction: fix it\n    reference: fix.patch"),
      },
      /reference patch fix\.patch does not exist/,
    ],
    [
      "an agent command that does not exist",
      { "x.eval.yaml": base().replace("./agent.sh", "./missing-agent.sh") },
      /the agent command of target "agent" cannot run: .*missing-agent\.sh does not exist/,
    ],
    [
      "an agent program not on PATH",
      { "x.eval.yaml": base().replace('["./agent.sh"]', '["no-such-agent-binary"]') },
      /"no-such-agent-binary" was not found on PATH/,
    ],
    [
      "a test id with a slash, a space and an accent",
      { "x.eval.yaml": base().replace("id: t1", 'id: "checkout/Café total"') },
      /x\.eval\.yaml:5: tests\[0\]\.id: the text "checkout\/Café total" is not ASCII letters, digits.*\n\s+hint: for example "checkout-Cafe-total"/,
    ],
    [
      "an agent script with Windows line endings",
      { "x.eval.yaml": base(), "agent.sh": "#!/bin/sh\r\ntrue\r\n" },
      /targets\[0\]\.command: .*agent\.sh has Windows line endings \(CRLF\), so its first line asks for the interpreter "\/bin\/sh\\r"/,
    ],
    [
      "a scorer script that is not executable",
      {
        "x.eval.yaml": base().replace('run: "true"', 'run: "{EVAL_DIR}/score.sh --strict"'),
        "score.sh": "#!/bin/sh\n",
      },
      /x\.eval\.yaml:7: tests\[0\]\.scorers\[0\]\.run: the command cannot run: .*score\.sh is not executable \(chmod \+x it/,
    ],
    [
      "a setup script that does not exist",
      {
        "x.eval.yaml": base().replace(
          "{ path: app } }",
          '{ path: app }, setup: { command: ["{EVAL_DIR}/setup.sh"] } }',
        ),
      },
      /x\.eval\.yaml:3: workspace\.setup\.command: the command cannot run: .*setup\.sh does not exist/,
    ],
    [
      "a task too long to pass as {PROMPT}",
      {
        "x.eval.yaml": base()
          .replace('["./agent.sh"]', '"./agent.sh {PROMPT}"')
          .replace("instruction: fix it", "instruction_file: task.md"),
        "task.md": "x".repeat(200 * 1024),
      },
      /tests\[0\]\.instruction_file: the task of test "t1" is 200 KiB, too long for the \{PROMPT\} of target "agent".*\n\s+hint: pass the task to the agent through \{PROMPT_FILE\}/,
    ],
  ])("%s", (_name, files, expected) => {
    check(files, expected);
  });

  it("a missing agent is reported together with a missing seed, not after it is fixed", () => {
    const r = check(
      { "x.eval.yaml": base().replace("./agent.sh", "./missing.sh").replace("path: app", "path: nope") },
      /2 problems in the eval files/,
      ["validate"],
    );
    expect(r.stderr).toMatch(/seed folder nope does not exist/);
    expect(r.stderr).toMatch(/target "agent" cannot run: .*missing\.sh does not exist/);
  });

  it("an include cycle", () => {
    check(
      {
        "a.eval.yaml": `${base()}  - { include: b.eval.yaml, type: suite }\n`,
        "b.eval.yaml": "tests:\n  - { include: a.eval.yaml, type: suite }\n",
      },
      /include cycle: a\.eval\.yaml → b\.eval\.yaml → a\.eval\.yaml/,
      ["run", "a.eval.yaml"],
    );
  });

  it("a git ref that does not exist", () => {
    const repo = gitRepo({ "a.txt": "a\n" });
    const r = check(
      {
        "x.eval.yaml": base().replace(
          "seed: { path: app }",
          `seed: { git: { url: "${repo}", ref: no-such-tag } }`,
        ),
      },
      /ref "no-such-tag" was not found in /,
    );
    expect(r.stderr).toContain("never falls back to the default branch");
  });

  it("a judge whose api_key_env is not set: run stops before any agent runs, validate does not need it", () => {
    const judge = "scorers: [{ type: llm-judge, model: m, rubric: r, api_key_env: EVALGATE_TEST_UNSET_KEY }]";
    const files = { "x.eval.yaml": base().replace('scorers: [{ type: command, run: "true" }]', judge) };
    const r = check(
      files,
      /x\.eval\.yaml:7: tests\[0\]\.scorers\[0\]\.api_key_env: EVALGATE_TEST_UNSET_KEY is not set, so the judge "llm-judge" cannot call its model/,
    );
    expect(r.stdout).not.toContain("attempt");
    const dir = tempDir();
    writeFiles(dir, { "app/x.txt": "x\n", "agent.sh": "#!/bin/sh\ntrue\n", ...files });
    sh("chmod +x agent.sh", dir);
    expect(runCli(["validate"], dir).code).toBe(0);
  });

  it("a bundle folder that holds something already (run never writes over an earlier bundle)", () => {
    const r = check({ "x.eval.yaml": base() }, /--out app exists and is not empty/, ["run", "--out", "app"]);
    expect(r.stdout).not.toContain("attempt");
  });

  it("an unknown flag value", () => {
    check({ "x.eval.yaml": base() }, /--repeat must be a whole number/, ["run", "--repeat", "0"]);
  });

  it("validate reports every problem of every file at once", () => {
    const r = check(
      {
        "a.eval.yaml": base().replace("instruction:", "instrucion:"),
        "sub/b.eval.yaml": base("concurrency: 0\n").replace("path: app", "path: ../app"),
      },
      /3 problems in the eval files/,
      ["validate"],
    );
    expect(r.stderr).toContain("a.eval.yaml:6");
    expect(r.stderr).toContain("sub/b.eval.yaml:8: concurrency");
    // The schema error of b no longer hides its agent's problem (it has no agent.sh beside it).
    expect(r.stderr).toContain(
      'sub/b.eval.yaml:2: targets[0].command: the agent command of target "agent" cannot run',
    );
  });

  it("validate says ok for good files", () => {
    const dir = tempDir();
    writeFiles(dir, { "app/x.txt": "x\n", "agent.sh": "#!/bin/sh\ntrue\n", "x.eval.yaml": base() });
    sh("chmod +x agent.sh", dir);
    const r = runCli(["validate"], dir);
    expect(r.stdout).toBe("ok: 1 eval file, 1 test, 1 case\n");
    expect(r.code).toBe(0);
  });
});

describe("the user's checkout", () => {
  it("is never touched by a run", () => {
    const repo = gitRepo({
      "app/x.txt": "x\n",
      "agent.sh": "#!/bin/sh\necho changed > x.txt\nrm -f ../../*.txt 2>/dev/null\n",
      "x.eval.yaml": `targets: [{ name: a, provider: command, command: ["./agent.sh"] }]
workspace: { seed: { path: app } }
tests:
  - { id: t, instruction: go, scorers: [{ type: file, path: x.txt, contains: changed }] }
`,
    });
    sh("chmod +x agent.sh && git add -A && git commit -qm x", repo);
    const r = runCli(["run", "--out", path.join(tempDir(), "b")], repo);
    expect(r.code).toBe(0);
    expect(sh("git status --porcelain", repo)).toBe("");
    expect(readFileSync(path.join(repo, "app/x.txt"), "utf8")).toBe("x\n");
    writeFileSync(path.join(repo, "unrelated"), "");
  });

  it("runs an agent named through {EVAL_DIR}, in an argv and as a shell string's program", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "agents dir/agent.sh": '#!/bin/sh\nprintf "%s" "$1" > out.txt\n',
      "bin/agent.sh": '#!/bin/sh\nprintf "%s" "$1" > out.txt\n',
      "x.eval.yaml": `targets:
  - { name: argv, provider: command, command: ["{EVAL_DIR}/agents dir/agent.sh", "{TEST_ID}"] }
  - { name: shell, provider: command, command: "{EVAL_DIR}/bin/agent.sh {TEST_ID}" }
workspace: { seed: { empty: true } }
tests:
  - { id: t1, instruction: go, scorers: [{ type: file, path: out.txt, contains: t1 }] }
`,
    });
    sh('chmod +x "agents dir/agent.sh" bin/agent.sh', dir);
    const out = path.join(tempDir(), "b");
    const r = runCli(["run", "--out", out], dir);
    expect(r.stderr).not.toContain("does not exist");
    expect(r.code).toBe(0);
    const rows = readJsonl<{ target: string; verdict: string }>(path.join(out, "index.jsonl"));
    expect(rows.map((c) => `${c.target}:${c.verdict}`).sort()).toEqual(["argv:pass", "shell:pass"]);

    writeFiles(dir, {
      "x.eval.yaml": readFileSync(path.join(dir, "x.eval.yaml"), "utf8").replaceAll("agents dir", "nowhere"),
    });
    const bad = runCli(["validate"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr + bad.stdout).toMatch(/target "argv" cannot run: .*nowhere\/agent\.sh does not exist/);
  });
});
