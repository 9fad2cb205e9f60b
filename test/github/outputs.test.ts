/**
 * The step's outputs as a runner reads them (GITHUB_OUTPUT), from run() itself: `inconclusive`
 * counts the cases whose attempts did not settle their verdict (docs/action.md, "Outputs").
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ArtifactStore } from "../../src/github/artifact.js";
import { ActionsLogger } from "../../src/github/io.js";
import { run } from "../../src/github/main.js";
import { gitRepo, sh } from "../helpers.js";
import { inProcessStep, pushStepEnv } from "./harness.js";

const uploads: ArtifactStore = { upload: async () => ({ id: 1, size: 0 }) };

/** GITHUB_OUTPUT's `name<<delimiter\nvalue\ndelimiter` records. */
function outputsOf(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /^([\w-]+)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (const m of readFileSync(file, "utf8").matchAll(re)) out[m[1]!] = m[3]!;
  return out;
}

describe("the step's outputs", () => {
  inProcessStep();

  it("inconclusive counts the cases whose attempts did not settle their verdict", async () => {
    // One agent fixes the file on odd attempts only: 3 of 5 at min_rate 0.5 is inconclusive.
    // The other always fixes it: 5 of 5 is decided (exact test: 0.5^5 = 0.031 < 0.05; 4 of 4,
    // 0.0625, would not be).
    const repo = gitRepo({
      "evals/app/answer.txt": "wrong\n",
      "evals/agent.sh": `#!/bin/sh\ncase "$MODE" in\n  pass) echo right > answer.txt ;;\n  alternate) [ $((EVALGATE_ATTEMPT % 2)) -eq 1 ] && echo right > answer.txt ;;\nesac\nexit 0\n`,
      "evals/a.eval.yaml": `name: outputs
targets:
  - { name: flaky, provider: command, command: ["./agent.sh"], env: { MODE: alternate } }
  - { name: stable, provider: command, command: ["./agent.sh"], env: { MODE: pass } }
repeat: 5
concurrency: 1
gate: { policy: attempt_success_rate_at_least, min_rate: 0.5 }
workspace: { seed: { path: app } }
tests:
  - { id: answer, instruction: "write right", scorers: [{ type: file, path: answer.txt, contains: right }] }
`,
    });
    sh("chmod +x evals/agent.sh && git add -A && git commit -qm agent", repo);
    const code = await run({
      env: pushStepEnv(repo, { evals: "evals" }),
      artifacts: uploads,
      logger: new ActionsLogger(),
    });
    const out = outputsOf(process.env.GITHUB_OUTPUT!);
    expect(out).toMatchObject({
      verdict: "pass",
      cases: "2",
      passed: "2",
      inconclusive: "1",
      regressions: "0",
    });
    expect(code).toBe(0);
  }, 120_000);
});
