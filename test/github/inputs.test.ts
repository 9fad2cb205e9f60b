import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { UsageError } from "../../src/errors.js";
import { ACTION_NAMING, envInputReader, parseInputs } from "../../src/github/inputs.js";
import { ROOT } from "../helpers.js";

const yml = parse(readFileSync(path.join(ROOT, "action.yml"), "utf8")) as {
  inputs: Record<string, { default?: string; description: string }>;
  outputs: Record<string, { description: string }>;
};

/** The inputs as the runner passes them: action.yml's defaults, overridden by the step's `with:`. */
function inputs(given: Record<string, string> = {}) {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, spec] of Object.entries(yml.inputs)) {
    env[`INPUT_${name.toUpperCase()}`] =
      given[name] ?? (spec.default?.includes("github.token") ? "tok" : (spec.default ?? ""));
  }
  return parseInputs(envInputReader(env), { workspace: "/ws" });
}

describe("action inputs", () => {
  it("reads exactly the inputs action.yml declares", () => {
    const asked = new Set<string>();
    parseInputs(
      (name) => {
        asked.add(name);
        return "";
      },
      { workspace: "/ws" },
    );
    expect([...asked].sort()).toEqual(Object.keys(yml.inputs).sort());
  });

  it("declares every output the action sets (docs/action.md's outputs and more)", async () => {
    const { emptyOutputs } = await import("../../src/github/io.js");
    expect(Object.keys(yml.outputs).sort()).toEqual(Object.keys(emptyOutputs()).sort());
    for (const o of [
      "verdict",
      "run-id",
      "bundle-path",
      "artifact-id",
      "comment-id",
      "cases",
      "passed",
      "failed",
      "errored",
      "flaky",
      "regressions",
      "inconclusive",
    ]) {
      expect(yml.outputs[o], o).toBeDefined();
    }
  });

  it("builds the same RunOptions the CLI builds from flags", () => {
    const a = inputs({
      evals: "evals/\nmore/*.eval.yaml",
      target: "claude, house",
      test: "cart-*",
      tag: "smoke",
      repeat: "3",
      concurrency: "2",
      "working-directory": "sub",
      shard: "2/4",
    });
    expect(a.mode).toEqual({
      kind: "run",
      options: {
        cwd: "/ws/sub",
        paths: ["evals/", "more/*.eval.yaml"],
        targets: ["claude", "house"],
        tests: ["cart-*"],
        tags: ["smoke"],
        repeat: 3,
        concurrency: 2,
        out: undefined,
        shard: { index: 2, total: 4 },
        naming: ACTION_NAMING,
      },
    });
    expect(a).toMatchObject({
      token: "tok",
      comment: "always",
      commentKey: "default",
      baseline: { kind: "auto" },
      artifactName: "evalgate",
      allowPullRequestTarget: false,
    });
    expect(a.checkName).toBeUndefined();
    expect(a.retentionDays).toBeUndefined();
  });

  it("knows the other modes and baseline forms", () => {
    expect(inputs({ merge: "artifacts" }).mode).toEqual({ kind: "merge", from: "artifacts" });
    expect(inputs({ merge: "shards/*\nother" }).mode).toEqual({ kind: "merge", from: ["shards/*", "other"] });
    expect(inputs({ bundle: "workflow-run" }).mode).toEqual({ kind: "publish", from: "workflow-run" });
    expect(inputs({ baseline: "off" }).baseline).toEqual({ kind: "off" });
    // Keywords in any case, like comment's: "Off" is not a folder called Off.
    expect(inputs({ baseline: "Off" }).baseline).toEqual({ kind: "off" });
    expect(inputs({ baseline: "AUTO", comment: "Failures" })).toMatchObject({
      baseline: { kind: "auto" },
      comment: "failures",
    });
    // Booleans as YAML and people write them.
    for (const yes of ["true", "True", "yes", "on"])
      expect(inputs({ "allow-pull-request-target": yes }).allowPullRequestTarget, yes).toBe(true);
    expect(inputs({ "allow-pull-request-target": "False" }).allowPullRequestTarget).toBe(false);
    expect(inputs({ baseline: "base-bundle" }).baseline).toEqual({ kind: "path", path: "/ws/base-bundle" });
    expect(inputs({ "retention-days": "14", "check-name": "evals" })).toMatchObject({
      retentionDays: 14,
      checkName: "evals",
    });
  });

  it("takes what a merge or a published bundle does use", () => {
    // out, baseline and retention-days apply to a merge (it writes, compares and uploads a bundle).
    expect(
      inputs({ merge: "artifacts", out: "m", baseline: "off", "retention-days": "3", evals: "." }),
    ).toMatchObject({ mode: { kind: "merge", out: "m" }, baseline: { kind: "off" }, retentionDays: 3 });
    expect(inputs({ bundle: "b", baseline: "Auto" }).mode).toEqual({ kind: "publish", from: "b" });
  });

  it.each([
    [
      { comment: "sometimes" },
      'input comment: "sometimes" is not a comment mode; use one of always, changes, failures, off',
    ],
    [{ repeat: "0" }, 'input repeat must be a whole number of at least 1 (got "0")'],
    [{ shard: "5/4" }, 'input shard takes I/N with 1 <= I <= N, e.g. 2/4 (got "5/4")'],
    [{ "retention-days": "400" }, "input retention-days: at most 90 days"],
    [{ "artifact-name": "a/b" }, 'input artifact-name: "a/b" has a character artifacts cannot use'],
    [{ "comment-key": "a key" }, 'input comment-key: "a key" may only use letters'],
    [
      { "allow-pull-request-target": "maybe" },
      'input allow-pull-request-target: expected true or false, got "maybe"',
    ],
    [{ shard: "1/2", merge: "artifacts" }, "inputs shard and merge cannot be combined"],
    // An input the mode would drop: the user believes it took effect.
    [
      { merge: "artifacts", repeat: "5", evals: "evals/" },
      "inputs evals, repeat would be ignored: this step merges shard bundles (input merge) and runs no evals. Remove them",
    ],
    [{ bundle: "workflow-run", test: "cart-*" }, "input test would be ignored: this step publishes"],
    [
      { bundle: "b", baseline: "off" },
      "input baseline would be ignored: this step publishes an existing bundle",
    ],
    [{ bundle: "b", out: "o" }, "input out would be ignored"],
    [{ bundle: "b", "retention-days": "3" }, "input retention-days would be ignored"],
    [{ repeat: "99999999999" }, 'input repeat must be at most 1000 attempts per case (got "99999999999")'],
    [{ concurrency: "100000" }, 'input concurrency must be at most 256 (got "100000")'],
  ])("rejects %j with a message naming the input", (given, message) => {
    expect(() => inputs(given)).toThrow(UsageError);
    expect(() => inputs(given)).toThrow(message);
  });

  it("reports every bad input at once, not the first", () => {
    let error: unknown;
    try {
      inputs({
        comment: "sometimes",
        repeat: "0",
        shard: "5/4",
        "retention-days": "400",
        "artifact-name": "a/b",
        "comment-key": "a key",
        "allow-pull-request-target": "maybe",
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    const lines = (error as Error).message.split("\n");
    expect(lines[0]).toBe("7 inputs are wrong:");
    expect(lines.slice(1).map((l) => l.trim().split(/[: ]/)[1])).toEqual([
      "comment",
      "artifact-name",
      "retention-days",
      "comment-key",
      "repeat",
      "shard",
      "allow-pull-request-target",
    ]);
  });
});

describe("ACTION_NAMING", () => {
  it("names inputs, never a CLI flag, in the core's messages", () => {
    expect(ACTION_NAMING.given("out", "b")).toBe("input out: b");
    expect(ACTION_NAMING.option("baseline")).toBe("input baseline");
    for (const text of [ACTION_NAMING.filters, ACTION_NAMING.roomOnDisk, ACTION_NAMING.option("work-dir")])
      expect(text).not.toMatch(/--[a-z]/);
  });
});
