import { describe, expect, it } from "vitest";
import { runSecrets, secretVariables } from "../../src/config/secrets.js";
import { runnerCredentials } from "../../src/sandbox/secrets.js";
import { loadPlan } from "../config/load-plan.js";
import { tempDir, writeFiles } from "../helpers.js";

describe("the secrets of a plan", () => {
  it("collects every passthrough and judge key of the selected cases, with where each is used", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "p/a": "",
      "x.eval.yaml": `targets:
  - { name: a, provider: noop, env_passthrough: [AGENT_KEY, PATH] }
  - { name: b, provider: noop, env_passthrough: [OTHER_KEY] }
workspace:
  seed: { path: p }
  setup: { command: "true", env_passthrough: [SETUP_KEY] }
tests:
  - id: t
    instruction: x
    targets: [a]
    scorers:
      - { name: s, type: command, run: "true", env_passthrough: [SCORER_KEY], weight: 0.5 }
      - { name: j, type: llm-judge, model: m, rubric: r, api_key_env: JUDGE_KEY, weight: 0.5 }
`,
    });
    const plan = await loadPlan({ cwd: dir, paths: ["."] });
    const vars = secretVariables(plan);
    expect(Object.fromEntries(vars)).toEqual({
      AGENT_KEY: ["target a env_passthrough"],
      SETUP_KEY: ["setup env_passthrough"],
      SCORER_KEY: ["scorer s env_passthrough"],
      JUDGE_KEY: ["scorer j api_key_env"],
    });
    const { redactor, tooShort } = runSecrets(plan, {
      AGENT_KEY: "agent-value",
      SETUP_KEY: "ab",
      JUDGE_KEY: "judge-value",
      OTHER_KEY: "other-value",
      PATH: "/usr/bin",
    });
    expect(tooShort).toEqual(["SETUP_KEY"]);
    expect(redactor.text("agent-value judge-value other-value /usr/bin")).toBe(
      "*** *** other-value /usr/bin",
    );
  });

  it("also masks the runner's own credentials, which no process is given", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "p/a": "",
      "x.eval.yaml": `targets: [{ name: a, provider: noop }]
workspace: { seed: { path: p } }
tests: [{ id: t, instruction: x, scorers: [{ type: command, run: "true" }] }]
`,
    });
    const plan = await loadPlan({ cwd: dir, paths: ["."] });
    const env = {
      GITHUB_TOKEN: "ghs_runner-token-value",
      "INPUT_GITHUB-TOKEN": "ghs_input-token-value",
      ACTIONS_RUNTIME_TOKEN: "eyJ-runtime-token-value",
      ACTIONS_CACHE_URL: "https://cache.example/",
      GITHUB_REPOSITORY: "acme/shop",
      MY_TOKEN: "not-the-runners-value",
    };
    expect(runnerCredentials(env).sort()).toEqual([
      "ACTIONS_RUNTIME_TOKEN",
      "GITHUB_TOKEN",
      "INPUT_GITHUB-TOKEN",
    ]);
    const { redactor } = runSecrets(plan, env);
    expect(redactor.text(Object.values(env).join(" "))).toBe(
      "*** *** *** https://cache.example/ acme/shop not-the-runners-value",
    );
  });
});
