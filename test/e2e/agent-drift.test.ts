/**
 * The agent CLI's version and model, per target in summary.json, and the comment's drift line when
 * they differ from the baseline's: two runs of one suite whose agent reports (through the output
 * contract) Claude Code 2.1.300 and then 2.1.332 with another model.
 */
import { chmodSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitRepo, readJson, runCli } from "../helpers.js";

const agent = (version: string, model: string) => `#!/bin/sh
printf '{"usage":{"input_tokens":10,"output_tokens":2,"model":"${model}"},"agent_version":"${version}"}' > "$1"
`;

const evalFile = `targets:
  - name: claude
    provider: command
    command: ["./agent.sh", "{OUTPUT_FILE}"]
repeat: 2
workspace: { seed: { path: project } }
tests:
  - id: t1
    instruction: do nothing
    scorers: [{ name: ok, type: command, run: "true" }]
`;

describe("agent drift against the baseline", () => {
  it("records versions and models per target and shows the change in the comment", () => {
    const base = gitRepo({
      "evals/a.eval.yaml": evalFile,
      "evals/agent.sh": agent("2.1.300", "claude-sonnet-4-5"),
      "evals/project/README.md": "x\n",
    });
    chmodSync(path.join(base, "evals/agent.sh"), 0o755);
    const first = runCli(["run", "evals", "--out", "out"], base, { CI: "1" });
    expect(first.code, first.stderr).toBe(0);

    const head = gitRepo({
      "evals/a.eval.yaml": evalFile,
      "evals/agent.sh": agent("2.1.332", "claude-opus-4-1"),
      "evals/project/README.md": "x\n",
    });
    chmodSync(path.join(head, "evals/agent.sh"), 0o755);
    const r = runCli(["run", "evals", "--out", "out", "--baseline", path.join(base, "out")], head, {
      CI: "1",
    });
    expect(r.code, r.stderr).toBe(0);

    const summary = readJson<{
      targets: { name: string; usage: { agent_versions: string[]; models: string[] } }[];
    }>(path.join(head, "out/summary.json"));
    expect(summary.targets[0]!.usage).toMatchObject({
      agent_versions: ["2.1.332"],
      models: ["claude-opus-4-1"],
    });

    const comment = runCli(["report", "out", "--format", "markdown"], head).stdout;
    expect(comment).toContain(
      "**Agent changed vs base** — `claude`: command 2.1.300 → 2.1.332, model claude-sonnet-4-5 → claude-opus-4-1",
    );
    // No drift, no line.
    const same = runCli(["report", path.join(base, "out"), "--format", "markdown"], base).stdout;
    expect(same).not.toContain("Agent changed");
  }, 120_000);
});
