/**
 * Small things a new user tripped over (issue 12 item 8, issue 19 item 4), each reproduced with a
 * real run and shown gone.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { gitRepo, ROOT, readJson, readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

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

describe("a bundle in the checkout is never committed by accident", () => {
  it("the default .evalgate/ ignores itself, so git status stays clean after a run", () => {
    const dir = gitRepo({
      "app/a.txt": "a\n",
      "a.eval.yaml": `targets:
  - { name: t, provider: command, command: ["true"] }
workspace: { seed: { path: app } }
tests:
  - { id: one, instruction: x, scorers: [{ type: command, run: "true" }] }
`,
    });
    const r = runCli(["run"], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/bundle: .*\.evalgate\/results\//);
    expect(sh("git status --porcelain --untracked-files=all", dir)).toBe("");
    expect(readFileSync(path.join(dir, ".evalgate/.gitignore"), "utf8")).toContain("*\n");
    // An auto-commit step's `git add -A` takes nothing of it.
    sh("git add -A", dir);
    expect(sh("git diff --cached --name-only", dir)).toBe("");
  });
});

describe("the fork recipe", () => {
  it("comments only for pull requests from forks", () => {
    const wf = parse(readFileSync(path.join(ROOT, "docs/workflows/evals-fork-comment.yml"), "utf8"));
    const condition = String(wf.jobs.comment.if);
    expect(condition).toContain("github.event.workflow_run.head_repository.full_name != github.repository");
    expect(condition).toContain("github.event.workflow_run.event == 'pull_request'");
  });
});
