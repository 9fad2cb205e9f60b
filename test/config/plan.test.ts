import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, type ConfigProblem, UsageError } from "../../src/errors.js";
import { tempDir, writeFiles } from "../helpers.js";
import { loadPlan } from "./load-plan.js";

const PROJECT = { "project/a.txt": "hello\n" };

const GOOD = `name: shop
targets:
  - { name: ref, provider: reference }
  - { name: none, provider: noop }
workspace:
  seed: { path: project }
tests:
  - id: one
    instruction: do it
    reference: fix.patch
    scorers:
      - { name: unit, type: command, run: "true", weight: 0.6 }
      - { name: shape, type: diff, max_files: 3, weight: 0.4 }
`;

async function problemsOf(files: Record<string, string>, paths = ["."]): Promise<ConfigProblem[]> {
  const dir = tempDir();
  writeFiles(dir, { ...PROJECT, "fix.patch": "", ...files });
  try {
    await loadPlan({ cwd: dir, paths });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadPlan", () => {
  it("resolves a valid eval file into cases with defaults and absolute paths", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      ...PROJECT,
      "fix.patch": "",
      "evals/shop.eval.yaml": GOOD.replace("path: project", "path: ../project").replace(
        "fix.patch",
        "../fix.patch",
      ),
    });
    const plan = await loadPlan({ cwd: dir, paths: ["evals"] });
    expect(plan.cases.map((c) => `${c.identity.evalPath}|${c.identity.testId}|${c.identity.target}`)).toEqual(
      ["evals/shop.eval.yaml|one|ref", "evals/shop.eval.yaml|one|none"],
    );
    const c = plan.cases[0]!;
    expect(c.test.workspace.seed).toEqual({ kind: "path", path: path.join(dir, "project") });
    expect(c.test.reference).toBe(path.join(dir, "fix.patch"));
    expect(c.test.scorers.map((s) => [s.name, s.weight])).toEqual([
      ["unit", 0.6],
      ["shape", 0.4],
    ]);
    expect(c.repeat).toBe(1);
    expect(c.gate).toEqual({ policy: "all_attempts_successful", onError: "fail", retries: 0 });
    expect(c.timeouts.agentMs).toBe(20 * 60_000);
  });

  it("shares settings through YAML anchors and merge keys (<<: *name)", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      ...PROJECT,
      "x.eval.yaml": `targets: [{ name: none, provider: noop }]
workspace: { seed: { path: project } }
tests:
  - id: a
    instruction: go
    scorers: [&unit { name: unit, type: command, run: "npm test", timeout: 1m }]
  - id: b
    instruction: go
    scorers:
      - <<: *unit
        run: "npm run test:b"
`,
    });
    const plan = await loadPlan({ cwd: dir, paths: ["."] });
    const b = plan.cases.find((c) => c.identity.testId === "b")!;
    expect(b.test.scorers[0]).toMatchObject({
      name: "unit",
      timeoutMs: 60_000,
      options: { run: "npm run test:b" },
    });
  });

  it("reports malformed YAML with its line", async () => {
    const problems = await problemsOf({ "x.eval.yaml": "name: a\ntests:\n  - id: [unclosed\n" });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      file: "x.eval.yaml",
      message: expect.stringContaining("malformed YAML"),
    });
    expect(problems[0]!.line).toBeGreaterThanOrEqual(3);
  });

  it("names an unknown key with its line and a did-you-mean hint", async () => {
    const problems = await problemsOf({
      "x.eval.yaml": GOOD.replace(
        "    instruction: do it",
        "    instruction: do it\n    refrence: fix.patch",
      ),
    });
    expect(problems).toEqual([
      expect.objectContaining({
        file: "x.eval.yaml",
        line: 10,
        key: "tests[0].refrence",
        message: 'unknown key "refrence"',
        hint: 'did you mean "reference"?',
      }),
    ]);
  });

  it("reports a wrong type at the key", async () => {
    const problems = await problemsOf({ "x.eval.yaml": `${GOOD}repeat: three\n` });
    expect(problems).toEqual([
      expect.objectContaining({
        key: "repeat",
        line: 14,
        message: expect.stringContaining('expected a number, got the text "three"'),
      }),
    ]);
  });

  it("reports an unknown scorer type with the supported ones", async () => {
    const problems = await problemsOf({
      "x.eval.yaml": GOOD.replace("type: diff, max_files: 3", "type: dif"),
    });
    expect(problems[0]).toMatchObject({
      key: "tests[0].scorers[1].type",
      hint: expect.stringContaining('did you mean "diff"?'),
    });
  });

  it("reports missing files: instruction file, reference patch, seed folder, include", async () => {
    const problems = await problemsOf({
      "x.eval.yaml": GOOD.replace("instruction: do it", "instruction_file: task.md")
        .replace("reference: fix.patch", "reference: nope.patch")
        .replace("path: project", "path: missing")
        .concat("  - include: cases/*.yaml\n"),
    });
    const messages = problems.map((p) => `${p.key}: ${p.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        "tests[0].instruction_file: instruction file task.md does not exist",
        "tests[0].reference: reference patch nope.patch does not exist",
        "workspace.seed.path: seed folder missing does not exist",
        'tests[1].include: include "cases/*.yaml" matched no files',
      ]),
    );
  });

  it("reports duplicate test ids across the file and its raw cases", async () => {
    const problems = await problemsOf({
      "x.eval.yaml": `${GOOD}  - include: more.yaml\n`,
      "more.yaml":
        "- id: one\n  targets: [none]\n  instruction: again\n  scorers: [{ type: command, run: 'true' }]\n",
    });
    expect(problems).toEqual([
      expect.objectContaining({
        file: "more.yaml",
        line: 1,
        message: expect.stringMatching(/duplicate test id "one" \(first defined at x\.eval\.yaml:8\)/),
      }),
    ]);
  });

  it("reports an include cycle", async () => {
    const suite = (other: string) =>
      `targets: [{ name: n, provider: noop }]\nworkspace: { seed: { empty: true } }\ntests:\n  - { include: ${other}, type: suite }\n`;
    const problems = await problemsOf(
      { "a.eval.yaml": suite("b.eval.yaml"), "b.eval.yaml": suite("a.eval.yaml") },
      ["a.eval.yaml"],
    );
    expect(problems.map((p) => p.message)).toContainEqual(
      expect.stringContaining("include cycle: a.eval.yaml → b.eval.yaml → a.eval.yaml"),
    );
  });

  it("reports weights that do not sum to 1.0, and a partial set of weights", async () => {
    const bad = await problemsOf({ "x.eval.yaml": GOOD.replace("weight: 0.4", "weight: 0.3") });
    expect(bad[0]!.message).toBe('the weights of test "one" sum to 0.9, not 1.0');
    const partial = await problemsOf({ "x.eval.yaml": GOOD.replace(", weight: 0.4", "") });
    expect(partial[0]!.message).toContain("some scorers of this test have a weight");
  });

  it("reports every problem of every file at once", async () => {
    const problems = await problemsOf({
      "a.eval.yaml": GOOD.replace("name: shop", "nmae: shop"),
      "b.eval.yaml": GOOD.replace("repeat", "x").concat("concurrency: 0\n"),
      "c.eval.yaml": "tests: [\n",
    });
    expect(new Set(problems.map((p) => p.file))).toEqual(
      new Set(["a.eval.yaml", "b.eval.yaml", "c.eval.yaml"]),
    );
  });

  it("rejects the runner's secrets in env_passthrough", async () => {
    const problems = await problemsOf({
      "x.eval.yaml": GOOD.replace(
        "{ name: none, provider: noop }",
        "{ name: none, provider: noop, env_passthrough: [GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN, MY_KEY] }",
      ),
    });
    expect(problems.map((p) => p.key)).toEqual([
      "targets[1].env_passthrough[0]",
      "targets[1].env_passthrough[1]",
    ]);
  });

  it("names file, line, key and why for every denied variable, in targets, setup and scorers", async () => {
    const problems = await problemsOf({
      "x.eval.yaml": `name: shop
targets:
  - name: a
    provider: noop
    env_passthrough: [OK_KEY, actions_id_token_request_token, GITHUB_ENV, HOME, GH_TOKEN]
    env: { RUNNER_TEMP: /x, EVALGATE_ATTEMPT: "9", PLAIN: yes }
workspace:
  seed: { path: project }
  setup: { command: "true", env_passthrough: [INPUT_GITHUB_TOKEN, STATE_x] }
tests:
  - id: one
    instruction: do it
    scorers:
      - { type: command, run: "true", env_passthrough: [TMPDIR, RUNNER_OS, SCORER_KEY] }
`,
    });
    const got = problems.map((p) => `${p.file}:${p.line}: ${p.key}`);
    expect(got).toEqual([
      "x.eval.yaml:5: targets[0].env_passthrough[1]",
      "x.eval.yaml:5: targets[0].env_passthrough[2]",
      "x.eval.yaml:5: targets[0].env_passthrough[3]",
      "x.eval.yaml:5: targets[0].env_passthrough[4]",
      "x.eval.yaml:6: targets[0].env.RUNNER_TEMP",
      "x.eval.yaml:6: targets[0].env.EVALGATE_ATTEMPT",
      "x.eval.yaml:9: workspace.setup.env_passthrough[0]",
      "x.eval.yaml:9: workspace.setup.env_passthrough[1]",
      "x.eval.yaml:14: tests[0].scorers[0].env_passthrough[0]",
      "x.eval.yaml:14: tests[0].scorers[0].env_passthrough[1]",
    ]);
    const byKey = Object.fromEntries(problems.map((p) => [p.key, p.message]));
    expect(byKey["targets[0].env_passthrough[1]"]).toMatch(
      /^actions_id_token_request_token is a variable of the CI runner .*never passed/,
    );
    expect(byKey["targets[0].env_passthrough[2]"]).toMatch(/files that steer later workflow steps/);
    expect(byKey["targets[0].env_passthrough[3]"]).toMatch(/HOME is set by evalgate/);
    expect(byKey["targets[0].env_passthrough[4]"]).toMatch(/GH_TOKEN is a GitHub token/);
    expect(byKey["targets[0].env.EVALGATE_ATTEMPT"]).toMatch(
      /set by evalgate for every attempt; env: cannot set it/,
    );
  });

  it("resolves protected globs and hidden verifiers; a test's lists replace the file's", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      ...PROJECT,
      "verifiers/cart.test.js": "",
      "verifiers/suite/a.test.js": "",
      "x.eval.yaml": `targets: [{ name: n, provider: noop }]
workspace:
  seed: { path: project }
  protected: ["test/**"]
  verifiers: [{ from: verifiers/cart.test.js, to: test/cart.test.js }]
tests:
  - { id: a, instruction: x, scorers: [{ type: command, run: "true" }] }
  - id: b
    instruction: x
    workspace: { protected: [], verifiers: [{ from: verifiers/suite, to: ./checks/ }] }
    scorers: [{ type: command, run: "true" }]
`,
    });
    const plan = await loadPlan({ cwd: dir, paths: ["."] });
    const [a, b] = plan.cases.map((c) => c.test.workspace);
    expect(a!.protected).toEqual(["test/**"]);
    expect(a!.verifiers).toEqual([
      { from: path.join(dir, "verifiers/cart.test.js"), to: "test/cart.test.js" },
    ]);
    expect(b!.protected).toEqual([]);
    expect(b!.verifiers).toEqual([{ from: path.join(dir, "verifiers/suite"), to: "checks" }]);
    expect(b!.seed).toEqual(a!.seed);
  });

  it("resolves setup_trees and test_config: protected unless set, a test's value replaces the file's", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      ...PROJECT,
      "x.eval.yaml": `targets: [{ name: n, provider: noop }]
workspace:
  seed: { path: project }
  test_config: writable
tests:
  - { id: a, instruction: x, scorers: [{ type: command, run: "true" }] }
  - id: b
    instruction: x
    workspace: { setup_trees: writable, test_config: protected }
    scorers: [{ type: command, run: "true" }]
`,
    });
    const plan = await loadPlan({ cwd: dir, paths: ["."] });
    const [a, b] = plan.cases.map((c) => c.test.workspace);
    expect([a!.setupTrees ?? "protected", a!.testConfig]).toEqual(["protected", "writable"]);
    expect([b!.setupTrees, b!.testConfig]).toEqual(["writable", "protected"]);
  });

  it("names the key and the values of a bad setup_trees", async () => {
    const problems = await problemsOf({
      "x.eval.yaml": `targets: [{ name: n, provider: noop }]
workspace:
  seed: { path: project }
  setup_trees: open
tests:
  - { id: a, instruction: x, scorers: [{ type: command, run: "true" }] }
`,
    });
    expect(problems.map((p) => `${p.line}: ${p.key}: ${p.message} (${p.hint})`)).toEqual([
      '4: workspace.setup_trees: the text "open" is not allowed here (use one of: protected, writable)',
    ]);
  });

  it("rejects bad protected globs and verifiers that are missing, escape, or sit in the seed", async () => {
    const problems = await problemsOf({
      "project/test/hidden.test.js": "",
      "x.eval.yaml": `targets: [{ name: n, provider: noop }]
workspace:
  seed: { path: project }
  protected: ["test/**", "../outside/**", "/abs", "src/[a"]
  verifiers:
    - { from: verifiers/missing.js, to: test/a.js }
    - { from: project/test/hidden.test.js, to: test/h.js }
    - { from: x.eval.yaml, to: ../escape.js }
    - { from: x.eval.yaml, to: .git/hooks/pre-commit }
    - { from: verifiers/gone.js, to: ../gone.js }
tests:
  - { id: a, instruction: x, scorers: [{ type: command, run: "true" }] }
`,
    });
    expect(problems.map((p) => `${p.line}: ${p.key}: ${p.message}`)).toEqual([
      '4: workspace.protected[1]: protected path "../outside/**" leaves the workspace',
      '4: workspace.protected[2]: protected path "/abs" must be relative to the workspace',
      expect.stringMatching(/^4: workspace\.protected\[3\]: bad glob "src\/\[a"/),
      "6: workspace.verifiers[0].from: verifier verifiers/missing.js does not exist",
      '8: workspace.verifiers[2].to: verifier destination "../escape.js" leaves the workspace',
      '9: workspace.verifiers[3].to: verifier destination ".git/hooks/pre-commit" is inside .git, which evalgate manages',
      '10: workspace.verifiers[4].to: verifier destination "../gone.js" leaves the workspace',
      "10: workspace.verifiers[4].from: verifier verifiers/gone.js does not exist",
      "3: workspace.seed: the seed folder project holds the answer key (verifier project/test/hidden.test.js): every agent would see it",
    ]);
  });

  it("rejects an agent command that does not exist, and unknown placeholders", async () => {
    const problems = await problemsOf({
      "x.eval.yaml": GOOD.replace(
        "{ name: none, provider: noop }",
        '{ name: me, provider: command, command: ["./agent.sh", "{PROMT}"] }',
      ).replace("  - { name: ref, provider: reference }\n", ""),
    });
    expect(problems.map((p) => p.message)).toEqual([
      "unknown placeholder {PROMT}",
      expect.stringMatching(/the agent command of target "me" cannot run: .*agent\.sh does not exist/),
    ]);
    expect(problems[0]!.hint).toBe("did you mean {PROMPT}?");
  });

  it("takes repeat from --repeat, else the test, else the eval file", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      ...PROJECT,
      "fix.patch": "",
      "x.eval.yaml": GOOD.replace(
        "tests:\n",
        "repeat: 2\ntests:\n  - { id: many, instruction: x, reference: fix.patch, repeat: 5, scorers: [{ type: command, run: 'true' }] }\n",
      ),
    });
    const repeats = (plan: Awaited<ReturnType<typeof loadPlan>>) =>
      Object.fromEntries(plan.cases.map((c) => [`${c.test.id}/${c.target.name}`, c.repeat]));
    expect(repeats(await loadPlan({ cwd: dir, paths: ["."] }))).toEqual({
      "many/ref": 5,
      "many/none": 5,
      "one/ref": 2,
      "one/none": 2,
    });
    expect(repeats(await loadPlan({ cwd: dir, paths: ["."], repeat: 3 }))).toEqual({
      "many/ref": 3,
      "many/none": 3,
      "one/ref": 3,
      "one/none": 3,
    });
  });

  it("checks gate policy and threshold together", async () => {
    const a = await problemsOf({ "x.eval.yaml": `${GOOD}gate: { policy: attempt_success_rate_at_least }\n` });
    expect(a[0]!.message).toContain("needs a min_rate");
    // Two tests: the file's gate is checked for each, and reported once.
    const twoTests = GOOD.replace(
      "tests:\n",
      "tests:\n  - { id: two, instruction: x, reference: fix.patch, scorers: [{ type: command, run: 'true' }] }\n",
    );
    const b = await problemsOf({ "x.eval.yaml": `${twoTests}gate: { threshold: 0.5 }\n` });
    expect(b).toHaveLength(1);
    expect(b[0]!.message).toContain("takes no min_rate");
    const c = await problemsOf({
      "x.eval.yaml": `${GOOD}gate: { policy: attempt_success_rate_at_least, threshold: 1.5 }\n`,
    });
    expect(c[0]!.key).toBe("gate.threshold");
  });

  it("reads gate.min_rate and a test's min_score, and their old name threshold with a note", async () => {
    const dir = tempDir();
    const newNames = GOOD.replace("    instruction: do it\n", "    instruction: do it\n    min_score: 0.6\n");
    writeFiles(dir, {
      ...PROJECT,
      "fix.patch": "",
      "new/x.eval.yaml": `${newNames.replace("path: project", "path: ../project").replace("fix.patch", "../fix.patch")}gate: { policy: attempt_success_rate_at_least, min_rate: 0.67 }\n`,
      "old/x.eval.yaml": `${newNames.replace("min_score", "threshold").replace("path: project", "path: ../project").replace("fix.patch", "../fix.patch")}gate: { policy: attempt_success_rate_at_least, threshold: 0.67 }\n`,
    });
    for (const folder of ["new", "old"]) {
      const plan = await loadPlan({ cwd: dir, paths: [folder] });
      expect(plan.cases[0]!.gate).toMatchObject({ policy: "attempt_success_rate_at_least", threshold: 0.67 });
      expect(plan.cases[0]!.test.threshold).toBe(0.6);
      expect(plan.notes.length, folder).toBe(folder === "old" ? 2 : 0);
    }
    const notes = (await loadPlan({ cwd: dir, paths: ["old"] })).notes;
    expect(notes).toEqual([
      "old/x.eval.yaml:15: gate.threshold is the old name of min_rate (the rate a case needs); it still works, rename it to min_rate",
      "old/x.eval.yaml:10: tests[0].threshold is the old name of min_score (the score an attempt needs to pass); it still works, rename it to min_score",
    ]);
    const both = await problemsOf({
      "x.eval.yaml": `${GOOD}gate: { policy: attempt_success_rate_at_least, threshold: 0.5, min_rate: 0.5 }\n`,
    });
    expect(both.map((p) => `${p.key}: ${p.message}`)).toEqual([
      "gate.threshold: threshold and min_rate are the same setting",
    ]);
  });

  it("runs a suite through the wrapper that includes it, keeping the suite's own targets", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      ...PROJECT,
      "fix.patch": "",
      "core/core.eval.yaml": GOOD,
      "core/project/a.txt": "x",
      "core/fix.patch": "",
      "wrap.eval.yaml": "repeat: 3\ntests:\n  - { include: core/core.eval.yaml, type: suite }\n",
    });
    const plan = await loadPlan({ cwd: dir, paths: ["."] });
    expect(plan.cases.map((c) => [c.identity.evalPath, c.identity.target, c.repeat, c.rootEvalPath])).toEqual(
      [
        ["core/core.eval.yaml", "ref", 3, "wrap.eval.yaml"],
        ["core/core.eval.yaml", "none", 3, "wrap.eval.yaml"],
      ],
    );
    expect(plan.notes[0]).toContain("core/core.eval.yaml runs as a suite");
  });

  it("filters by --target, --test and --tag, and rejects an unknown target", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      ...PROJECT,
      "fix.patch": "",
      "x.eval.yaml": GOOD.replace("reference: fix.patch", "reference: fix.patch\n    tags: [smoke]"),
    });
    const byTarget = await loadPlan({ cwd: dir, paths: ["."], targets: ["none"] });
    expect(byTarget.cases.map((c) => c.identity.target)).toEqual(["none"]);
    const byTest = await loadPlan({ cwd: dir, paths: ["."], tests: ["shop/o*"] });
    expect(byTest.cases).toHaveLength(2);
    const byTag = await loadPlan({ cwd: dir, paths: ["."], tags: ["smoke"] });
    expect(byTag.cases).toHaveLength(2);
    await expect(loadPlan({ cwd: dir, paths: ["."], tags: ["nightly"] })).rejects.toBeInstanceOf(UsageError);
    await expect(loadPlan({ cwd: dir, paths: ["."], targets: ["nope"] })).rejects.toThrow(
      /--target nope: no such target \(targets: ref, none\)/,
    );
  });

  it("discovers eval files under folders, skipping node_modules and .git", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      ...PROJECT,
      "fix.patch": "",
      "a/x.eval.yml": GOOD.replace("path: project", "path: ../project").replace("fix.patch", "../fix.patch"),
      "node_modules/pkg/y.eval.yaml": "broken: [",
      ".git/z.eval.yaml": "broken: [",
    });
    const plan = await loadPlan({ cwd: dir, paths: [] });
    expect(plan.roots.map((r) => r.evalPath)).toEqual(["a/x.eval.yml"]);
    await expect(loadPlan({ cwd: dir, paths: ["nowhere"] })).rejects.toThrow(
      /nowhere: no such file, folder or matching glob/,
    );
    await expect(loadPlan({ cwd: dir, paths: ["project/a.txt"] })).rejects.toThrow(
      /project\/a\.txt: not an eval file \(eval files are YAML/,
    );
  });
});
