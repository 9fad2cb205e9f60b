import { describe, expect, it } from "vitest";
import { BASE_VARIABLES, buildEnv, deniedVariable } from "../../src/sandbox/env.js";

const RUNNER_ENV: NodeJS.ProcessEnv = {
  PATH: "/opt/bin:/usr/bin",
  LANG: "en_US.UTF-8",
  HOME: "/home/runner",
  TMPDIR: "/runner-tmp",
  TZ: "Europe/Paris",
  GITHUB_TOKEN: "ghs_runner_token_value",
  ACTIONS_RUNTIME_TOKEN: "runtime-token",
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: "oidc-token",
  GITHUB_ENV: "/runner/env-file",
  AWS_SECRET_ACCESS_KEY: "aws",
  MY_KEY: "mine",
};

describe("buildEnv", () => {
  it("gives the minimal base plus exactly the passed-through variables", () => {
    const env = buildEnv({
      passthrough: ["MY_KEY", "NOT_SET"],
      values: { MODE: "fast" },
      home: "/a/home",
      tmp: "/a/tmp",
      from: RUNNER_ENV,
    });
    expect(env).toEqual({
      PATH: "/opt/bin:/usr/bin",
      LANG: "en_US.UTF-8",
      TZ: "UTC",
      HOME: "/a/home",
      TMPDIR: "/a/tmp",
      CI: "true",
      NO_COLOR: "1",
      GIT_TERMINAL_PROMPT: "0",
      MY_KEY: "mine",
      MODE: "fast",
    });
    expect(
      Object.keys(env)
        .filter((k) => !["MY_KEY", "MODE"].includes(k))
        .sort(),
    ).toEqual([...BASE_VARIABLES].sort());
  });

  it("refuses a denied name even if a caller skipped validation", () => {
    const base = { home: "/h", tmp: "/t", from: RUNNER_ENV };
    expect(() => buildEnv({ ...base, passthrough: ["GITHUB_TOKEN"] })).toThrow(/never be passed/);
    expect(() => buildEnv({ ...base, passthrough: [], values: { HOME: "/root" } })).toThrow(/never be set/);
    expect(() => buildEnv({ ...base, passthrough: [], values: { ACTIONS_X: "1" } })).toThrow(/never be set/);
  });
});

describe("deniedVariable", () => {
  it.each([
    "GITHUB_TOKEN",
    "GITHUB_ENV",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "GITHUB_STEP_SUMMARY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_CACHE_URL",
    "ACTIONS_RESULTS_URL",
    "RUNNER_TEMP",
    "RUNNER_TRACKING_ID",
    "INPUT_GITHUB_TOKEN",
    "STATE_isPost",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "github_token",
    "HOME",
    "TMPDIR",
  ])("denies %s", (name) => {
    expect(deniedVariable(name)).toBeTruthy();
  });

  it.each([
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "MY_GITHUB_APP_KEY",
    "PATH",
    "NODE_OPTIONS",
    "GHX",
  ])("allows %s", (name) => {
    expect(deniedVariable(name)).toBeUndefined();
  });
});
