import { describe, expect, it } from "vitest";
import { ConfigError, type ConfigProblem } from "../../src/errors.js";
import { tempDir, writeFiles } from "../helpers.js";
import { loadPlan } from "./load-plan.js";

const head = `targets: [{ name: none, provider: noop }]
timeouts: { scorer: 5m }
workspace: { seed: { path: project } }
tests:
  - id: one
    instruction: do it
    scorers:
`;

async function plan(scorers: string, extra: Record<string, string> = {}) {
  const dir = tempDir();
  writeFiles(dir, { "project/a.txt": "x\n", "e.eval.yaml": head + scorers, ...extra });
  return loadPlan({ cwd: dir, paths: ["."] });
}

async function problems(scorers: string): Promise<ConfigProblem[]> {
  try {
    await plan(scorers);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("scorer options in the plan", () => {
  it("resolves tests, ast-grep and llm-judge scorers with equal weights and their own timeouts", async () => {
    const p = await plan(
      `      - { type: tests, run: "npm test", report: junit.xml, timeout: 90s }
      - { type: ast-grep, lang: python, pattern: "eval($$$)", expect: absent }
      - { type: llm-judge, model: m, rubric_file: rubric.md, base_url: "http://127.0.0.1:9/v1" }
`,
      { "rubric.md": "be strict\n" },
    );
    const scorers = p.cases[0]!.test.scorers;
    expect(scorers.map((s) => [s.name, s.weight, s.timeoutMs])).toEqual([
      ["tests", 1 / 3, 90_000],
      ["ast-grep", 1 / 3, 300_000],
      ["llm-judge", 1 / 3, 300_000],
    ]);
  });

  it("reports each scorer's option mistakes with file, line and key", async () => {
    const found = await problems(
      `      - { type: tests, run: "npm test", report: ../junit.xml }
      - type: ast-grep
        lang: go
        pattern: "fmt.Println("
      - { name: count, type: ast-grep, lang: typescript, pattern: "eval($$$)", expect: count, min: 3, max: 1 }
      - { type: llm-judge, model: m, rubric: r, rubric_file: r.md }
`,
    );
    expect(found.map((p) => `${p.line} ${p.key}: ${p.message}`)).toEqual([
      '8 tests[0].scorers[0].report: report "../junit.xml" is outside the workspace',
      '11 tests[0].scorers[1].pattern: the pattern does not parse as go: unexpected "fmt.Println(" at line 1, column 1',
      "12 tests[0].scorers[2].min: min (3) is greater than max (1)",
      "13 tests[0].scorers[3]: give rubric or rubric_file, not both",
      "13 tests[0].scorers[3].rubric_file: rubric file r.md does not exist",
    ]);
    expect(found.every((p) => p.file === "e.eval.yaml")).toBe(true);
  });

  it("lists the supported languages for an unknown one", async () => {
    const [p] = await problems(`      - { type: ast-grep, lang: cobol, pattern: "x" }\n`);
    expect(p).toMatchObject({ key: "tests[0].scorers[0].lang", line: 8 });
    expect(p!.hint).toBe("use one of: typescript, tsx, javascript, html, css, python, go, rust, java");
  });
});
