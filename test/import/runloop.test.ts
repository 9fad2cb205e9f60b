/**
 * `evalgate import runloop` through the real CLI: scenarios as the scenario API returns them, with
 * every scoring function type evalgate runs, weights carried exactly; the imported suite must
 * pass `validate --solvable`, and scenarios it cannot carry are reported with the fix.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { gitRepo, runCli, sh, tempDir } from "../helpers.js";

const WD = "/home/user/proj";
const BUGGY = "def average(xs):\n    return sum(xs) / len(xs)\n";
const FIXED = "def average(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n";

/** The real diff of the fix, as a scenario's reference_output holds it. */
function fixDiff(): string {
  const repo = gitRepo({ "stats.py": BUGGY });
  writeFileSync(path.join(repo, "stats.py"), FIXED);
  return sh("git diff", repo);
}

function scenarios() {
  const fn = (name: string, weight: number, scorer: Record<string, unknown>) => ({ name, weight, scorer });
  const average = {
    id: "scn_1",
    name: "empty-average",
    metadata: { team: "data" },
    input_context: { problem_statement: "average([]) raises ZeroDivisionError; it should return 0.0." },
    environment: {
      blueprint_id: "bpt_123",
      working_directory: WD,
      launch_parameters: {
        launch_commands: [`mkdir -p ${WD}`, `printf '${BUGGY.replaceAll("\n", "\\n")}' > ${WD}/stats.py`],
      },
    },
    scoring_contract: {
      scoring_function_parameters: [
        fn("runs", 0.5, {
          type: "command_scorer",
          command: `cd ${WD} && python3 -c 'from stats import average; assert average([]) == 0.0'`,
        }),
        fn("guards-empty", 0.25, {
          type: "ast_grep_scorer",
          pattern: "$A if $B else $C",
          lang: "python",
          search_directory: WD,
        }),
        fn("script", 0.25, {
          type: "bash_script_scorer",
          bash_script: `cd ${WD}\nif python3 -c 'from stats import average; assert average([2, 4]) == 3'; then echo "score=1.0"; else echo "score=0.0"; fi\n`,
        }),
      ],
    },
    reference_output: fixDiff(),
  };
  const greet = {
    id: "scn_2",
    name: "greeting",
    input_context: { problem_statement: 'greet("Bo") should return "Hello, Bo!".' },
    environment: {
      working_directory: WD,
      launch_parameters: {
        launch_commands: [`printf 'def greet(n):\\n    return "Hi " + n\\n' > ${WD}/greet.py`],
      },
    },
    scoring_contract: {
      scoring_function_parameters: [
        fn("unit", 0.7, {
          type: "test_based_scorer",
          test_command: `cd ${WD} && python3 -m pytest -q -p no:cacheprovider --junitxml=report.xml tests`,
          test_files: [
            {
              file_path: `${WD}/tests/test_greet.py`,
              file_contents:
                'import greet\n\n\ndef test_greet():\n    assert greet.greet("Bo") == "Hello, Bo!"\n',
            },
            { file_path: `${WD}/tests/conftest.py`, file_contents: "import sys\nsys.path.insert(0, '.')\n" },
          ],
        }),
        fn("py", 0.3, {
          type: "python_script_scorer",
          python_script: `import sys\nsys.path.insert(0, "${WD}")\nimport greet\nprint(1.0 if greet.greet("Ann") == "Hello, Ann!" else 0.0)\n`,
        }),
      ],
    },
    // A sequence of commands, not a diff: run as a reference script.
    reference_output: `sed -i 's/"Hi " + n/"Hello, " + n + "!"/' ${WD}/greet.py`,
  };
  const broken = (name: string, over: Record<string, unknown>) => ({ ...average, id: name, name, ...over });
  return {
    has_more: false,
    scenarios: [
      average,
      greet,
      broken("llm-graded", {
        scoring_contract: {
          scoring_function_parameters: [fn("judge", 1, { type: "llm_judge_scorer", rubric: "x" })],
        },
      }),
      broken("custom", {
        scoring_contract: {
          scoring_function_parameters: [
            fn("c", 1, { type: "custom_scorer", custom_scorer_type: "my_scorer" }),
          ],
        },
      }),
      broken("light", {
        scoring_contract: {
          scoring_function_parameters: [fn("runs", 0.9, { type: "command_scorer", command: "true" })],
        },
      }),
      broken("no-statement", { input_context: {} }),
    ],
  };
}

describe("evalgate import runloop", () => {
  it("imports scenarios that pass validate --solvable, with the weights exactly, and reports the rest", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "scenarios.json"), JSON.stringify(scenarios(), null, 2));
    const r = runCli(["import", "runloop", "scenarios.json", "--out", "suite"], dir);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain("imported 2 tests into suite/runloop.eval.yaml, skipped 4");
    expect(r.stderr).toContain(
      'skipped llm-graded (scenarios.json[2]): scoring_function_parameters[0]: unknown scorer type "llm_judge_scorer". Fix: use ast_grep_scorer, bash_script_scorer',
    );
    expect(r.stderr).toContain(
      'skipped custom (scenarios.json[3]): scoring_function_parameters[0]: custom_scorer "my_scorer" runs only on Runloop',
    );
    expect(r.stderr).toContain("skipped light (scenarios.json[4]): the weights sum to 0.9, not 1. Fix:");
    expect(r.stderr).toContain(
      "skipped no-statement (scenarios.json[5]): no input_context.problem_statement",
    );

    const file = parse(readFileSync(path.join(dir, "suite/runloop.eval.yaml"), "utf8")) as {
      tests: { id: string; scorers: { type: string; weight: number; name: string; path?: string }[] }[];
    };
    expect(file.tests.map((t) => t.scorers.map((s) => [s.name, s.type, s.weight]))).toEqual([
      [
        ["runs", "command", 0.5],
        ["guards-empty", "ast-grep", 0.25],
        ["script", "script", 0.25],
      ],
      [
        ["unit", "tests", 0.7],
        ["py", "script", 0.3],
      ],
    ]);
    const yaml = readFileSync(path.join(dir, "suite/runloop.eval.yaml"), "utf8");
    expect(yaml).not.toContain(WD);
    const md = readFileSync(path.join(dir, "suite/IMPORT.md"), "utf8");
    expect(md).toContain("environment.blueprint_id bpt_123");
    expect(md).toContain(
      "Next: `evalgate validate suite/runloop.eval.yaml`, then `evalgate validate --solvable suite/runloop.eval.yaml`",
    );

    const s = runCli(["validate", "--solvable", "suite", "--json"], dir);
    expect(s.code, s.stdout + s.stderr).toBe(0);
    expect(JSON.parse(s.stdout).results).toMatchObject([
      { test_id: "empty-average", reference: { passed: 1 }, noop: { passed: 0 } },
      { test_id: "greeting", reference: { passed: 1 }, noop: { passed: 0 } },
    ]);
  });

  it("imports one scenario object too, and an unreadable file is a usage error", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "one.json"), JSON.stringify(scenarios().scenarios[0]));
    expect(runCli(["import", "runloop", "one.json", "--out", "o"], dir).code).toBe(0);
    writeFileSync(path.join(dir, "bad.json"), "{");
    const bad = runCli(["import", "runloop", "bad.json", "--out", "o2"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("evalgate: bad.json: not a JSON scenario");
    const repos = runCli(["import", "runloop", "one.json", "--repos", "m", "--out", "o4"], dir);
    expect(repos.code).toBe(2);
    expect(repos.stderr).toContain("--repos only applies to swe-bench");
    const unknown = runCli(["import", "promptfoo", "x", "--out", "o3"], dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown format "promptfoo": one of swe-bench, harbor, runloop, agentv');
  });
});
