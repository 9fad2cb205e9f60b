/**
 * Small things a new user tripped over (issue 12 item 8, issue 19 item 4), each reproduced with a
 * real run and shown gone.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJson, readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

describe("the bundle names only files it has", () => {
  it("a setup error leaves no prompt.md or agent.log, and nothing points at them", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "app/a.txt": "a\n",
      "a.eval.yaml": `targets:
  - { name: t, provider: command, command: ["true"] }
workspace: { seed: { path: app }, setup: { command: "exit 3" } }
tests:
  - { id: one, instruction: x, scorers: [{ type: command, run: "true" }] }
`,
    });
    const out = path.join(dir, "bundle");
    const r = runCli(["run", "--out", out], dir);
    expect(r.code).toBe(1);
    const row = readJsonl<{ result_dir: string; runs: { dir: string; result_path: string }[] }>(
      path.join(out, "index.jsonl"),
    )[0]!;
    const attemptDir = path.join(out, row.runs[0]!.dir);
    const result = readJson<{ failure_stage: string; files: Record<string, unknown> }>(
      path.join(out, row.runs[0]!.result_path),
    );
    expect(result.failure_stage).toBe("setup");
    expect(result.files.prompt).toBeNull();
    expect(result.files.agent_log).toBeNull();
    for (const f of Object.values(result.files)) {
      if (typeof f === "string") expect(existsSync(path.join(attemptDir, f)), f).toBe(true);
    }
    expect(existsSync(path.join(attemptDir, "agent.log"))).toBe(false);
    const html = readFileSync(path.join(out, "report.html"), "utf8");
    expect(html).not.toContain(`${row.runs[0]!.dir}/agent.log`);
    expect(html).not.toContain(`${row.runs[0]!.dir}/diff.patch`);
    expect(html).toContain(`${row.runs[0]!.dir}/result.json`);
  });
});
