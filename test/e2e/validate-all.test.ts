/**
 * `validate` as a new user meets it: every problem of every file in one pass, and the bounds that
 * used to pass validation and break the run (issue 12 item 7, issue 19 item 2).
 */
import { describe, expect, it } from "vitest";
import { runCli, tempDir, writeFiles } from "../helpers.js";

const TARGETS = `targets:
  - { name: t, provider: command, command: ["true"] }
`;

function validate(files: Record<string, string>, args: string[] = []) {
  const dir = tempDir();
  writeFiles(dir, { "fixtures/app/a.txt": "a\n", ...files });
  return runCli(["validate", ...args], dir);
}

/** The `file:line: key: message` heads of the problems, without hints. */
function heads(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((l) => /^ {2}\S/.test(l))
    .map((l) => l.trim());
}

describe("validate finds everything at once", () => {
  it("reports schema, path, weight, target and seed errors of one file together", () => {
    const r = validate({
      "a.eval.yaml": `${TARGETS}timeouts: { agent: "20 minutes" }
workspace: { seed: { path: fixtures/app } }
tests:
  - id: one
    instruction: Fix it
    reference: missing.patch
    scorers: [{ type: command, run: "true" }]
  - id: two
    instruction: Fix it
    scorers:
      - { name: a, type: command, run: "true", weight: 0.5 }
      - { name: b, type: command, run: "true", weight: 0.6 }
  - id: three
    instructions: Fix it
    scorers: [{ type: comand, run: "true" }]
  - id: four
    instruction: Fix it
    targets: [nope]
    workspace: { seed: { path: fixtures/missing } }
    scorers: [{ type: command, run: "true" }]
`,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(heads(r.stderr)).toEqual([
      'a.eval.yaml:3: timeouts.agent: the text "20 minutes" is not a duration such as "90s", "20m" or "1h"',
      'a.eval.yaml:17: tests[2].scorers[0].type: unknown type "comand"',
      'a.eval.yaml:16: tests[2].instructions: unknown key "instructions"',
      "a.eval.yaml:8: tests[0].reference: reference patch missing.patch does not exist",
      'a.eval.yaml:10: tests[1]: the weights of test "two" sum to 1.1, not 1.0',
      "a.eval.yaml:21: tests[3].workspace.seed.path: seed folder fixtures/missing does not exist",
      'a.eval.yaml:20: tests[3].targets[0]: unknown target "nope"',
    ]);
    expect(r.stderr).toContain("7 problems");
  });

  it("keeps line numbers right for tests after a dropped one, and in included case files", () => {
    const r = validate({
      "a.eval.yaml": `${TARGETS}workspace: { seed: { path: fixtures/app } }
tests:
  - { id: bad, instruction: x, scorers: [{ type: command, run: "true" }], colour: red }
  - { instruction: no id here, scorers: [{ type: command, run: "true" }] }
  - id: later
    instruction: x
    instruction_file: also.md
    scorers: [{ type: command, run: "true" }]
  - include: cases.yaml
`,
      "cases.yaml": `- id: c1
  instruction: x
  scorers: [{ type: command, run: "true", wieght: 1 }]
- id: c2
  instruction: x
  reference: nothing.patch
  scorers: [{ type: command, run: "true" }]
`,
    });
    expect(r.code).toBe(2);
    expect(heads(r.stderr)).toEqual([
      'a.eval.yaml:5: tests[0].colour: unknown key "colour"',
      'a.eval.yaml:6: tests[1].id: missing required key "id"',
      'cases.yaml:3: [0].scorers[0].wieght: unknown key "wieght"',
      'a.eval.yaml:7: tests[2]: test "later" has both instruction and instruction_file',
      "a.eval.yaml:9: tests[2].instruction_file: instruction file also.md does not exist",
      "cases.yaml:6: [1].reference: reference patch nothing.patch does not exist",
    ]);
  });

  it("does not echo a dropped part as a second, wrong problem", () => {
    const r = validate({
      "a.eval.yaml": `targets:
  - { name: t, provider: comand, command: ["true"] }
gate: { policy: attempt_success_rate_atleast, threshold: 0.5 }
workspace: { seed: { path: fixtures/app } }
tests:
  - id: one
    instruction: x
    targets: [t]
    scorers:
      - { name: a, type: command, run: "true", weight: 0.5 }
      - { name: b, type: command, run: "true", weight: "0.5" }
`,
    });
    expect(r.code).toBe(2);
    // No "unknown target t", no "takes no threshold", no weight sum or missing weight.
    expect(heads(r.stderr)).toEqual([
      'a.eval.yaml:2: targets[0].provider: the text "comand" is not allowed here',
      'a.eval.yaml:3: gate.policy: the text "attempt_success_rate_atleast" is not allowed here',
      'a.eval.yaml:11: tests[0].scorers[1].weight: expected a number, got the text "0.5"',
    ]);
  });

  it("still accepts a valid file", () => {
    const r = validate({
      "a.eval.yaml": `${TARGETS}workspace: { seed: { path: fixtures/app } }
tests:
  - { id: one, instruction: x, scorers: [{ type: command, run: "true" }] }
`,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});

describe("validate checks seeds that are not there", () => {
  it("a local git repository or file:// URL that does not exist is exit 2, like a missing folder", () => {
    const r = validate({
      "a.eval.yaml": `${TARGETS}tests:
  - id: one
    instruction: x
    workspace: { seed: { git: { url: ./no-such-repo, ref: main } } }
    scorers: [{ type: command, run: "true" }]
  - id: two
    instruction: x
    workspace: { seed: { git: { url: "file:///nonexistent/evalgate/repo" } } }
    scorers: [{ type: command, run: "true" }]
`,
    });
    expect(r.code).toBe(2);
    expect(heads(r.stderr)).toEqual([
      "a.eval.yaml:6: tests[0].workspace.seed.git.url: git repository no-such-repo does not exist",
      "a.eval.yaml:10: tests[1].workspace.seed.git.url: git repository /nonexistent/evalgate/repo does not exist",
    ]);
  });
});

describe("validate checks the bounds", () => {
  const file = (extra: string, test = "") => ({
    "a.eval.yaml": `${TARGETS}workspace: { seed: { empty: true } }
${extra}
tests:
  - id: one
    instruction: x
${test}    scorers: [{ type: command, run: "true" }]
`,
  });

  it.each([
    ["timeouts: { agent: 1000h }", "", "timeouts.agent", '"1000h"'],
    ["timeouts: { scorer: 0s }", "", "timeouts.scorer", '"0s"'],
    ["timeouts: { setup: 500ms }", "", "timeouts.setup", '"500ms"'],
    ["", "    timeout: 25h\n", "tests[0].timeout", '"25h"'],
    ["timeouts: { agent: 90000 }", "", "timeouts.agent", "number 90000"],
    ["gate: { budget: { duration: 0.5 } }", "", "gate.budget.duration", "number 0.5"],
  ])("refuses %s%s (durations are between 1s and 24h)", (extra, test, key, shown) => {
    const r = validate(file(extra, test));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${key}: ${"the text ".repeat(shown.startsWith('"') ? 1 : 0)}${shown}`);
    expect(r.stderr).toContain("out of range: durations are between 1s and 24h");
  });

  it.each([
    "timeouts: { agent: 24h }",
    "timeouts: { agent: 1s }",
    "timeouts: { agent: 1500ms }",
  ])("accepts %s", (extra) => {
    const r = validate(file(extra));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("caps repeat in the file and on the command line alike, before anything runs", () => {
    const yaml = validate(file("repeat: 1001"));
    expect(yaml.code).toBe(2);
    expect(yaml.stderr).toContain("a.eval.yaml:4: repeat: number 1001 is out of range: must be at most 1000");
    const dir = tempDir();
    writeFiles(dir, file(""));
    for (const [cmd, flag] of [
      ["run", "--repeat"],
      ["validate", "--attempts"],
    ] as const) {
      const cli = runCli(cmd === "run" ? [cmd, flag, "99999999999"] : [cmd, "--solvable", flag, "1001"], dir);
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain(`${flag} must be at most 1000 attempts per case`);
      expect(cli.stderr).not.toMatch(/heap|FATAL|internal error/);
    }
    const conc = runCli(["run", "--concurrency", "100000"], dir);
    expect(conc.code).toBe(2);
    expect(conc.stderr).toContain("--concurrency must be at most 256");
  });

  it("refuses names too long for the file names they become", () => {
    const long = "s".repeat(300);
    const r = validate({
      "a.eval.yaml": `targets:
  - { name: ${long}, provider: command, command: ["true"] }
workspace: { seed: { empty: true } }
tests:
  - id: ${long}
    instruction: x
    scorers: [{ name: ${long}, type: command, run: "true" }]
`,
    });
    expect(r.code).toBe(2);
    for (const key of ["targets[0].name", "tests[0].id", "tests[0].scorers[0].name"]) {
      expect(r.stderr).toContain(
        `${key}: the text "${"s".repeat(40)}…" is out of range: must be at most 100 characters`,
      );
    }
    const ok = validate({
      "a.eval.yaml": `${TARGETS}workspace: { seed: { empty: true } }
tests:
  - { id: ${"i".repeat(100)}, instruction: x, scorers: [{ name: ${"n".repeat(100)}, type: command, run: "true" }] }
`,
    });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
  });

  it("refuses a YAML alias bomb as a configuration error, not a bug", () => {
    const levels = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let yaml = `${levels[0]}: &${levels[0]} ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n`;
    for (let i = 1; i < levels.length; i++) {
      const prev = `*${levels[i - 1]}`;
      yaml += `${levels[i]}: &${levels[i]} [${Array(9).fill(prev).join(",")}]\n`;
    }
    yaml += "tests: [*h]\n";
    const r = validate({ "bomb.eval.yaml": yaml });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("bomb.eval.yaml: the YAML aliases (*name) expand to too much data");
    expect(r.stderr).not.toMatch(/internal error|a bug/);
  });

  it("still expands ordinary aliases and merge keys", () => {
    const ok = validate({
      "a.eval.yaml": `${TARGETS}workspace: { seed: { empty: true } }
tests:
  - { id: one, instruction: x, scorers: [&unit { type: command, run: "true" }] }
  - { id: two, instruction: x, scorers: [{ <<: *unit, name: u2 }] }
`,
    });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
  });
});
