/**
 * Placeholders in shell command lines: whatever the value holds, the real `sh` reads back exactly
 * the value, whether the placeholder is a word of its own or sits inside '...' or "...".
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ConfigError, type ConfigProblem } from "../../src/errors.js";
import { expandPlaceholders, unquotablePlaceholders } from "../../src/sandbox/commands.js";
import { loadPlan } from "../config/load-plan.js";
import { tempDir, writeFiles } from "../helpers.js";

const HOSTILE = `it's "quoted" $(echo INJECTED) \`echo TICK\` \${HOME} \\ back\\slash\nsecond line ' " done`;

/** What `sh -c` prints for the command, with {PROMPT} replaced by `value`. */
function shellSays(shell: string, value: string): string {
  const cmd = expandPlaceholders({ shell }, { PROMPT: value });
  if (!("shell" in cmd)) throw new Error("expected a shell command");
  return execFileSync("/bin/sh", ["-c", cmd.shell], { encoding: "utf8" });
}

describe("placeholders in a shell command line", () => {
  it.each([
    ["a word of its own", "printf '%s' {PROMPT}", HOSTILE],
    ["inside double quotes", "printf '%s' \"{PROMPT}\"", HOSTILE],
    ["inside single quotes", "printf '%s' '{PROMPT}'", HOSTILE],
    ["glued to text in double quotes", "printf '%s' \"[{PROMPT}]\"", `[${HOSTILE}]`],
    ["glued to text in single quotes", "printf '%s' '[{PROMPT}]'", `[${HOSTILE}]`],
    ["after an escaped double quote", 'printf \'%s\' "\\"{PROMPT}"', `"${HOSTILE}`],
    ["after an escaped single quote", "printf '%s' \\'{PROMPT}", `'${HOSTILE}`],
  ])("%s: the shell reads back the exact value", (_name, shell, expected) => {
    expect(shellSays(shell, HOSTILE)).toBe(expected);
  });

  it("keeps the value as one argument in an argv, unquoted", () => {
    expect(expandPlaceholders({ argv: ["agent", "--task={PROMPT}"] }, { PROMPT: HOSTILE })).toEqual({
      argv: ["agent", `--task=${HOSTILE}`],
    });
  });

  it("leaves unknown placeholders as written", () => {
    expect(expandPlaceholders({ shell: "run {NOPE} {PROMPT}" }, { PROMPT: "x" })).toEqual({
      shell: "run {NOPE} x",
    });
  });

  it.each([
    ["a here-document", "agent <<EOF\n{PROMPT}\nEOF", ["PROMPT"]],
    ["a quoted here-document", "agent <<'EOF'\n{PROMPT}\nEOF", ["PROMPT"]],
    ["a command substitution in double quotes", 'agent "$(cat {PROMPT_FILE})"', ["PROMPT_FILE"]],
    ["backquotes in double quotes", 'agent "`cat {PROMPT_FILE}`"', ["PROMPT_FILE"]],
    ["plain words and quotes", "agent {PROMPT} '{TEST_ID}' \"{ATTEMPT}\"", []],
    ["a command substitution outside quotes", "agent $(cat {PROMPT_FILE})", []],
  ])("finds placeholders it cannot quote: %s", (_name, shell, names) => {
    expect(unquotablePlaceholders({ shell })).toEqual(names);
  });

  it("rejects an unquotable placeholder at validation, naming file, line and key", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "x.eval.yaml": `targets:
  - name: heredoc
    provider: command
    command: "cat <<EOF\\n{PROMPT}\\nEOF"
workspace: { seed: { empty: true }, setup: { command: "echo \\"$(ls {WORKSPACE})\\"" } }
tests:
  - id: t
    instruction: go
    scorers: [{ type: command, run: "test -n \\"\`cat {EVAL_DIR}/x\`\\"" }]
`,
    });
    let problems: ConfigProblem[] = [];
    await loadPlan({ cwd: dir, paths: ["."] }).catch((error: unknown) => {
      if (!(error instanceof ConfigError)) throw error;
      problems = error.problems;
    });
    expect(problems.map((p) => `${p.line}: ${p.key}`)).toEqual([
      "4: targets[0].command",
      "5: workspace.setup.command",
      "9: tests[0].scorers[0].run",
    ]);
    expect(problems[0]!.message).toContain("{PROMPT} stands in a here-document");
    expect(problems[0]!.hint).toContain("read {PROMPT_FILE} instead");
  });
});
