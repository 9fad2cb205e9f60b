/**
 * The run's preflight: the questions about this machine and each scorer that config asks and does
 * not answer, and that their answers join the eval files' own problems in one message.
 */
import { chmodSync, mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_NAMING } from "../../src/cli/args.js";
import { loadPlan } from "../../src/config/plan/index.js";
import { ConfigError, type ConfigProblem } from "../../src/errors.js";
import { preflight, programProblem } from "../../src/run/preflight.js";
import { tempDir, writeFiles } from "../helpers.js";

describe("whether a program runs here", () => {
  it("finds a program on the given PATH, and says why one cannot run", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "bin/tool": "#!/bin/sh\nexit 0\n",
      "crlf.sh": "#!/bin/sh\r\nexit 0\r\n",
      "plain.sh": "#!/bin/sh\nexit 0\n",
    });
    chmodSync(path.join(dir, "bin/tool"), 0o755);
    chmodSync(path.join(dir, "crlf.sh"), 0o755);
    mkdirSync(path.join(dir, "folder"));
    expect(programProblem("tool", path.join(dir, "bin"))).toBeUndefined();
    expect(programProblem("tool", "/nowhere")).toBe('"tool" was not found on PATH');
    expect(programProblem(path.join(dir, "missing.sh"))).toMatch(/missing\.sh does not exist$/);
    expect(programProblem(path.join(dir, "folder"))).toMatch(/folder is a folder, not a program$/);
    expect(programProblem(path.join(dir, "plain.sh"))).toMatch(/plain\.sh is not executable \(chmod \+x it/);
    expect(programProblem(path.join(dir, "crlf.sh"))).toMatch(/crlf\.sh has Windows line endings \(CRLF\)/);
  });

  it("asks about agents' programs and variables only when told to, in the environment given", () => {
    const env = { PATH: "/nowhere", SET_KEY: "value", EMPTY_KEY: "" };
    const all = preflight({ variables: true, env });
    expect(all.agentProgram?.("tool")).toBe('"tool" was not found on PATH');
    expect(all.variableSet?.("SET_KEY")).toBe(true);
    expect(all.variableSet?.("EMPTY_KEY")).toBe(false);
    expect(all.variableSet?.("UNSET_KEY")).toBe(false);
    const validate = preflight({ env });
    expect(validate.variableSet).toBeUndefined();
    expect(validate.program?.("tool")).toBe('"tool" was not found on PATH');
    const solvable = preflight({ agentPrograms: false, variables: true, env });
    expect(solvable.agentProgram).toBeUndefined();
    expect(solvable.program).toBeDefined();
  });

  it("asks each scorer its own check of its options", () => {
    const { scorer } = preflight();
    expect(scorer?.({ type: "file", path: "a", matches: "(" }, "/")).toEqual([
      { at: ["matches"], message: expect.stringMatching(/^not a valid regular expression: /) },
    ]);
    expect(scorer?.({ type: "diff", deny: ["ok/**", "src/[a"] }, "/")).toEqual([
      { at: ["deny", 1], message: expect.stringMatching(/^bad glob "src\/\[a": /) },
    ]);
    expect(scorer?.({ type: "command", run: "true" }, "/")).toEqual([]);
  });
});

describe("the preflight's answers in the plan", () => {
  const files = {
    "p/a.txt": "a\n",
    "x.eval.yaml": `targets: [{ name: me, provider: command, command: ["./agent.sh", "{PROMPT_FILE}"] }]
workspace: { seed: { path: p } }
tests:
  - id: t
    instruction: go
    scorers:
      - { type: file, path: a.txt, matches: "(", weight: 0.5 }
      - { type: llm-judge, model: m, rubric: r, api_key_env: PREFLIGHT_UNSET_KEY, weight: 0.6 }
`,
  };

  async function problems(checks: Parameters<typeof loadPlan>[0]["checks"]): Promise<string[]> {
    const dir = tempDir();
    writeFiles(dir, files);
    try {
      await loadPlan({ cwd: dir, paths: ["."], naming: CLI_NAMING, checks });
    } catch (error) {
      if (error instanceof ConfigError)
        return error.problems.map((p: ConfigProblem) => `${p.key}: ${p.message}`);
      throw error;
    }
    return [];
  }

  it("without a preflight, config checks the eval files only", async () => {
    expect(await problems(undefined)).toEqual(['tests[0]: the weights of test "t" sum to 1.1, not 1.0']);
  });

  it("with one, its answers come in the same message, each at its file, line and key", async () => {
    expect(await problems(preflight({ variables: true, env: { PATH: "/usr/bin:/bin" } }))).toEqual([
      'tests[0]: the weights of test "t" sum to 1.1, not 1.0',
      expect.stringMatching(/^tests\[0\]\.scorers\[0\]\.matches: not a valid regular expression: /),
      expect.stringMatching(
        /^targets\[0\]\.command: the agent command of target "me" cannot run: .*agent\.sh does not exist$/,
      ),
      'tests[0].scorers[1].api_key_env: PREFLIGHT_UNSET_KEY is not set, so the judge "llm-judge" cannot call its model',
    ]);
  });
});
