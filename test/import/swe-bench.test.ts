/**
 * `evalgate import swe-bench` through the real CLI: instances against a local git repository with
 * a real bug, its real fix and real tests; the imported suite must pass `validate --solvable`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitRepo, runCli, sh, tempDir, writeFiles } from "../helpers.js";

const TESTS_BEFORE = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";
const TESTS_AFTER = `from calc import add, mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n\n\ndef test_add():\n    assert add(2, 3) == 5\n`;

/** acme/calc with a bug in add; returns the mirror folder, base commit, gold patch and test patch. */
function calcRepo(mirrors: string) {
  const repo = gitRepo(
    {
      "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
      "tests/__init__.py": "",
      "tests/test_calc.py": TESTS_BEFORE,
    },
    path.join(mirrors, "acme", "calc"),
  );
  const base = sh("git rev-parse HEAD", repo).trim();
  writeFileSync(
    path.join(repo, "calc.py"),
    "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
  );
  const patch = sh("git diff", repo);
  sh("git checkout -q -- .", repo);
  writeFiles(repo, {
    "tests/test_calc.py": TESTS_AFTER,
    "tests/test_extra.py": "from calc import add\n\n\ndef test_add_zero():\n    assert add(4, 0) == 4\n",
  });
  sh("git add -N tests/test_extra.py", repo);
  const testPatch = sh("git diff", repo);
  sh("git reset -q && git checkout -q -- . && rm tests/test_extra.py", repo);
  return { repo, base, patch, testPatch };
}

describe("evalgate import swe-bench", () => {
  it("imports instances that pass validate --solvable, and reports each malformed one with its id and fix", () => {
    const dir = tempDir();
    const mirrors = path.join(dir, "mirrors");
    const { base, patch, testPatch } = calcRepo(mirrors);
    const good = {
      instance_id: "acme__calc-1",
      repo: "acme/calc",
      base_commit: base,
      problem_statement: "add(2, 3) returns -1 instead of 5.",
      patch,
      test_patch: testPatch,
      // As the published files have them: JSON-encoded lists.
      FAIL_TO_PASS: JSON.stringify(["tests/test_calc.py::test_add", "tests/test_extra.py::test_add_zero"]),
      PASS_TO_PASS: JSON.stringify(["tests/test_calc.py::test_mul"]),
      version: "1.0",
      hints_text: "look at the operator",
    };
    const lines = [
      good,
      { ...good, instance_id: "acme__calc-2", patch: undefined },
      { ...good, instance_id: "acme__calc-3", patch: patch.replace("return a - b", "return a - b - 0") },
      { ...good, instance_id: "other__lib-4", repo: "other/lib" },
    ].map((x) => JSON.stringify(x));
    lines.splice(2, 0, "{not json");
    writeFileSync(path.join(dir, "instances.jsonl"), `${lines.join("\n")}\n`);
    writeFileSync(
      path.join(dir, "specs.yaml"),
      'acme/calc:\n  test: "python3 -m pytest -q -p no:cacheprovider --junitxml=report.xml tests"\n  report: report.xml\n',
    );

    const r = runCli(
      [
        "import",
        "swe-bench",
        "instances.jsonl",
        "--specs",
        "specs.yaml",
        "--repos",
        "mirrors",
        "--out",
        "suite",
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain("imported 1 test into suite/swe-bench.eval.yaml, skipped 4");
    expect(r.stderr).toContain(
      "skipped acme__calc-2 (instances.jsonl:2): missing patch. Fix: every SWE-bench instance needs",
    );
    expect(r.stderr).toContain("skipped (unreadable) (instances.jsonl:3): not JSON");
    expect(r.stderr).toMatch(
      /skipped acme__calc-3 \(instances\.jsonl:4\): patch does not apply at base_commit [0-9a-f]{12}: .*Fix: regenerate patch/,
    );
    expect(r.stderr).toContain(
      "skipped other__lib-4 (instances.jsonl:5): no test command for other/lib. Fix: add other/lib: { setup: ..., test: ..., report: ... } to the --specs file",
    );
    const md = readFileSync(path.join(dir, "suite/IMPORT.md"), "utf8");
    expect(md).toContain("- imported: 1 test");
    expect(md).toContain("`acme__calc-3`");
    expect(md).toContain("| FAIL_TO_PASS, PASS_TO_PASS | tests scorer fail_to_pass, pass_to_pass |");
    const yaml = readFileSync(path.join(dir, "suite/swe-bench.eval.yaml"), "utf8");
    expect(yaml).toContain(`ref: ${base}`);
    expect(yaml).toContain("- tests/test_calc.py::test_add");
    // The mirror is named relative to the eval file (before: an absolute path of this machine).
    expect(yaml).toContain("url: ../mirrors/acme/calc");
    expect(yaml).not.toContain(dir);

    expect(runCli(["validate", "suite"], dir).code).toBe(0);
    const s = runCli(["validate", "--solvable", "suite", "--json"], dir);
    expect(s.code, s.stdout + s.stderr).toBe(0);
    const report = JSON.parse(s.stdout) as {
      results: { test_id: string; reference: { passed: number }; noop: { passed: number } }[];
    };
    expect(report.results).toMatchObject([
      { test_id: "acme__calc-1", reference: { attempts: 1, passed: 1 }, noop: { attempts: 1, passed: 0 } },
    ]);
  });

  it("restores the test files the agent changed before applying the test patch", () => {
    const dir = tempDir();
    const mirrors = path.join(dir, "mirrors");
    const { base, patch, testPatch } = calcRepo(mirrors);
    writeFileSync(
      path.join(dir, "i.json"),
      JSON.stringify([
        {
          instance_id: "acme__calc-1",
          repo: "acme/calc",
          base_commit: base,
          problem_statement: "add is wrong",
          patch,
          test_patch: testPatch,
          FAIL_TO_PASS: ["tests/test_calc.py::test_add"],
          PASS_TO_PASS: ["tests/test_calc.py::test_mul"],
        },
      ]),
    );
    writeFileSync(
      path.join(dir, "specs.yaml"),
      "acme/calc: { test: python3 -m pytest -q -p no:cacheprovider --junitxml=r.xml tests, report: r.xml }\n",
    );
    expect(
      runCli(
        ["import", "swe-bench", "i.json", "--specs", "specs.yaml", "--repos", "mirrors", "--out", "s"],
        dir,
      ).code,
    ).toBe(0);
    // An agent that rewrites the tests instead of fixing the code.
    writeFiles(dir, {
      // ... and commits them, moving evalgate's baseline tag onto its commit.
      "cheat.sh": `#!/bin/sh\nprintf 'def test_mul():\\n    pass\\n\\n\\ndef test_add():\\n    pass\\n' > tests/test_calc.py\ngit add -A && git -c user.name=a -c user.email=a@a commit -qm cheat && git tag -f evalgate-baseline >/dev/null\n`,
    });
    sh("chmod +x cheat.sh", dir);
    const evalFile = path.join(dir, "s/swe-bench.eval.yaml");
    writeFileSync(
      evalFile,
      readFileSync(evalFile, "utf8").replace(
        "  - name: noop\n    provider: noop",
        `  - name: cheat\n    provider: command\n    command: ["${path.join(dir, "cheat.sh")}"]`,
      ),
    );
    const run = runCli(["run", "s", "--out", "b", "--json"], dir);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const grading = sh("cat b/*/run-1/grading.json", dir);
    expect(grading).toContain("fail_to_pass not passing: tests/test_calc.py::test_add (failed");
  });

  it("--filter and --limit choose the instances; a missing --specs entry is a usage error only for bad specs", () => {
    const dir = tempDir();
    const inst = (n: number) => ({
      instance_id: `acme__calc-${n}`,
      repo: "acme/calc",
      base_commit: "0".repeat(40),
      problem_statement: "x",
      patch: "diff --git a/x b/x\n",
      test_patch: "diff --git a/t b/t\n",
      FAIL_TO_PASS: ["t::a"],
      PASS_TO_PASS: [],
    });
    writeFileSync(path.join(dir, "i.jsonl"), [1, 2, 3, 12].map((n) => JSON.stringify(inst(n))).join("\n"));
    writeFileSync(path.join(dir, "specs.yaml"), "acme/calc: { test: pytest, report: r.xml }\n");
    const r = runCli(
      [
        "import",
        "swe-bench",
        "i.jsonl",
        "--specs",
        "specs.yaml",
        "--filter",
        "acme__calc-1*",
        "--limit",
        "1",
        "--out",
        "o",
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const yaml = readFileSync(path.join(dir, "o/swe-bench.eval.yaml"), "utf8");
    expect(yaml).toContain("id: acme__calc-1\n");
    expect(yaml).not.toContain("acme__calc-12");
    expect(yaml).toContain("url: https://github.com/acme/calc.git");
    writeFileSync(path.join(dir, "bad.yaml"), "acme/calc: { setup: make }\n");
    const bad = runCli(["import", "swe-bench", "i.jsonl", "--specs", "bad.yaml", "--out", "o2"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--specs bad.yaml: acme/calc needs test (the test command) and report");
  });

  it("--images points each test at its instance's image, with the workspace at /testbed", () => {
    // before: every instance needed a setup on the runner host; the image was never named.
    const dir = tempDir();
    const inst = {
      instance_id: "django__django-11099",
      repo: "django/django",
      base_commit: "0".repeat(40),
      problem_statement: "x",
      patch: "diff --git a/x b/x\n",
      test_patch: "diff --git a/t b/t\n",
      FAIL_TO_PASS: ["t::a"],
      PASS_TO_PASS: [],
      environment_setup_commit: "1".repeat(40),
    };
    writeFileSync(path.join(dir, "i.jsonl"), JSON.stringify(inst));
    writeFileSync(
      path.join(dir, "specs.yaml"),
      "django/django: { test: ./tests/runtests.py, report: r.xml }\n",
    );
    const r = runCli(
      ["import", "swe-bench", "i.jsonl", "--specs", "specs.yaml", "--images", "--out", "o"],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const yaml = readFileSync(path.join(dir, "o/swe-bench.eval.yaml"), "utf8");
    expect(yaml).toContain("image: swebench/sweb.eval.x86_64.django_1776_django-11099:latest");
    expect(yaml).toContain("workdir: /testbed");
    const md = readFileSync(path.join(dir, "o/IMPORT.md"), "utf8");
    expect(md).not.toContain("environment_setup_commit 111111111111 is not used");
    expect(md).toContain("mounted over the image's /testbed");
    const own = runCli(
      [
        "import",
        "swe-bench",
        "i.jsonl",
        "--specs",
        "specs.yaml",
        "--images",
        "reg.local/swe/{id}:v1",
        "--out",
        "p",
      ],
      dir,
    );
    expect(own.code, own.stderr).toBe(0);
    expect(readFileSync(path.join(dir, "p/swe-bench.eval.yaml"), "utf8")).toContain(
      "image: reg.local/swe/django_1776_django-11099:v1",
    );
    expect(runCli(["import", "harbor", "x", "--images", "--out", "q"], dir).stderr).toMatch(
      /--images only applies to swe-bench/,
    );
  });
});
