import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJson, readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

/** The message of the one attempt of a run whose agent could not start. */
function startFailure(evalYaml: string, files: Record<string, string>, chmod: string): string {
  const dir = tempDir();
  writeFiles(dir, { "x.eval.yaml": evalYaml, ...files });
  sh(`chmod +x ${chmod}`, dir);
  const out = path.join(tempDir(), "b");
  const r = runCli(["run", "--out", out], dir);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.code).toBe(1);
  const [row] = readJsonl<{ runs: { result_path: string }[] }>(path.join(out, "index.jsonl"));
  const result = readJson<{ status: string; failure_kind: string; message: string }>(
    path.join(out, row!.runs[0]!.result_path),
  );
  expect(result).toMatchObject({ status: "error", failure_kind: "agent_exit" });
  expect(r.stdout).toContain(result.message.slice(0, 60));
  return result.message;
}

describe("an agent that the system cannot start is an error that says why", () => {
  it("a script in the workspace saved with Windows line endings", () => {
    const message = startFailure(
      `targets: [{ name: a, provider: command, command: ["{WORKSPACE}/run.sh"] }]
workspace: { seed: { path: app } }
tests:
  - { id: t, instruction: go, scorers: [{ type: command, run: "true" }] }
`,
      { "app/run.sh": "#!/bin/sh\r\necho hi\r\n" },
      "app/run.sh",
    );
    expect(message).toMatch(
      /run\.sh has Windows line endings \(CRLF\).*"\/bin\/sh\\r", which does not exist/,
    );
  });

  it("a command line longer than the system takes", () => {
    // 100 arguments of 100 KiB each: every one is under the per-argument limit, together far over
    // the total the system takes (a quarter of the stack limit, 2 MiB by default).
    const message = startFailure(
      `targets: [{ name: a, provider: command, command: ["./agent.sh", ${Array(100).fill('"{PROMPT}"').join(", ")}] }]
workspace: { seed: { empty: true } }
tests:
  - { id: t, instruction_file: task.md, scorers: [{ type: command, run: "true" }] }
`,
      { "agent.sh": "#!/bin/sh\ntrue\n", "task.md": "x".repeat(100 * 1024) },
      "agent.sh",
    );
    expect(message).toMatch(/the command line is longer than the system allows.*\{PROMPT_FILE\}/);
  });
});
