/**
 * `evalgate init` in a fresh clone of a small real project: a suite `validate` accepts, a workflow
 * the action validator accepts, and nothing changed by a second run (issue 19 item 1).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { gitRepo, ROOT, runCli, sh, tempDir } from "../helpers.js";

const VALIDATOR = path.join(ROOT, "node_modules", "@action-validator", "cli", "cli.mjs");

/** A tiny npm package with a real test script, cloned as a user would. */
function npmProject(): string {
  const origin = gitRepo({
    "package.json": `${JSON.stringify({ name: "tiny", version: "1.0.0", type: "module", scripts: { test: "node --test" } }, null, 2)}\n`,
    "package-lock.json": `${JSON.stringify({ name: "tiny", version: "1.0.0", lockfileVersion: 3, requires: true, packages: { "": { name: "tiny", version: "1.0.0" } } }, null, 2)}\n`,
    "src/sum.js": "export const sum = (a, b) => a - b;\n",
    "test/sum.test.js":
      'import test from "node:test";\nimport assert from "node:assert";\nimport { sum } from "../src/sum.js";\ntest("sum", () => assert.equal(sum(2, 2), 4));\n',
  });
  const clone = path.join(tempDir("evalgate-init-"), "tiny");
  sh(`git clone -q ${JSON.stringify(origin)} ${JSON.stringify(clone)}`, ROOT);
  return clone;
}

function snapshot(dir: string, files: string[]): Record<string, [string, number]> {
  return Object.fromEntries(
    files.map((f) => [f, [readFileSync(path.join(dir, f), "utf8"), statSync(path.join(dir, f)).mtimeMs]]),
  );
}

const WRITTEN = [
  ".github/workflows/evals.yml",
  ".gitignore",
  "evals/starter.eval.yaml",
  "evals/starter/fix.patch",
];

describe("evalgate init", () => {
  it("writes a suite validate accepts and a workflow the action validator accepts; a second run changes nothing", () => {
    const dir = npmProject();
    const first = runCli(["init"], dir);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    for (const f of WRITTEN) expect(first.stdout).toContain(`wrote ${f}`);
    expect(first.stdout).toContain("1. npx evalgate validate --solvable evals/");
    expect(first.stdout).toContain("2. npx evalgate run evals/");
    expect(first.stdout).toMatch(/3\. git add .*git commit/);
    // Every placeholder is named with the command that fills it (before: OWNER was not mentioned).
    expect(first.stdout).toContain(
      "5. replace OWNER in .github/workflows/evals.yml with the GitHub owner of the evalgate repository you install from: sed -i 's|OWNER/evalgate|YOUR-OWNER/evalgate|' .github/workflows/evals.yml",
    );
    expect(first.stdout).toContain("4. replace OWNER in evals/starter.eval.yaml");

    // The suite runs the repository's own test command, after its setup, on a copy of the repository.
    const suite = parse(readFileSync(path.join(dir, "evals/starter.eval.yaml"), "utf8"));
    expect(suite.tests[0].scorers[0]).toMatchObject({ type: "command", run: "npm test", required: true });
    // The seed leaves the suite out: its reference patch and hidden tests are the answer key.
    // before: node_modules was copied into every start tree (setup installs it there anyway).
    expect(suite.workspace).toEqual({
      seed: { path: "..", exclude: ["evals", "node_modules"] },
      setup: { command: "npm ci" },
    });
    // The gate a team can keep (issue 27; before: repeat 1 and all_attempts_successful, which
    // blocks a first run of an unchanged 0.9 agent on 10 tests 65 % of the time and can never
    // show a drop): bench/verdicts.mjs measures it, docs/gate.md quotes the figures.
    expect(suite.repeat).toEqual({ min: 3, max: 10 });
    expect(suite.gate).toEqual({
      policy: "attempt_success_rate_at_least",
      min_rate: 0.5,
      regressions: "fail",
    });
    expect(suite.targets[0]).toMatchObject({
      provider: "claude-code",
      env_passthrough: ["ANTHROPIC_API_KEY"],
    });
    expect(readFileSync(path.join(dir, ".gitignore"), "utf8")).toBe(".evalgate/\nnode_modules/\n");

    const v = runCli(["validate"], dir);
    expect(v.stderr).toBe("");
    expect(v.stdout).toBe("ok: 1 eval file, 1 test, 1 case\n");
    expect(v.code).toBe(0);

    // The layout init wrote before (the whole repository as the seed, evals/ and its fix.patch in
    // every workspace): validate refuses it, naming the fix.
    const file = path.join(dir, "evals/starter.eval.yaml");
    const written = readFileSync(file, "utf8");
    writeFileSync(file, written.replace(', exclude: ["evals", "node_modules"]', ""));
    const old = runCli(["validate"], dir);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain(
      "evals/starter.eval.yaml:28: workspace.seed: the seed folder . holds the answer key (eval file evals/starter.eval.yaml, reference evals/starter/fix.patch): every agent would see it",
    );
    expect(old.stderr).toContain("exclude: [evals] under seed:");
    writeFileSync(file, written);

    const workflow = path.join(dir, ".github/workflows/evals.yml");
    const av = spawnSync(process.execPath, [VALIDATOR, workflow], { encoding: "utf8", timeout: 60_000 });
    expect(`${av.stdout}${av.stderr}`).toBe("");
    expect(av.status).toBe(0);
    const wf = parse(readFileSync(workflow, "utf8"));
    expect(Object.keys(wf.on)).toEqual(["pull_request", "merge_group", "push"]);
    expect(wf.on.push).toEqual({ branches: ["main"] });
    expect(wf.permissions).toEqual({ contents: "read", "pull-requests": "write", actions: "read" });
    const steps = wf.jobs.evals.steps as {
      uses?: string;
      run?: string;
      with?: Record<string, unknown>;
      env?: Record<string, string>;
    }[];
    expect(steps[0]).toEqual({ uses: "actions/checkout@v4", with: { "persist-credentials": false } });
    expect(steps.some((s) => s.run === "npm install -g @anthropic-ai/claude-code")).toBe(true);
    const gate = steps.find((s) => s.uses?.includes("evalgate"))!;
    expect(gate.with).toMatchObject({ evals: "evals/", baseline: "auto" });
    expect(gate.env).toEqual({ ANTHROPIC_API_KEY: `\${{ secrets.ANTHROPIC_API_KEY }}` });

    // Again: nothing is written, not even touched.
    const before = snapshot(dir, WRITTEN);
    const second = runCli(["init"], dir);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("nothing to do: every file exists");
    expect(snapshot(dir, WRITTEN)).toEqual(before);
    expect(sh("git status --porcelain", dir).split("\n").filter(Boolean).sort()).toEqual([
      "?? .github/",
      "?? .gitignore",
      "?? evals/",
    ]);
  });

  it("points the eval file at the installed package's schema when evalgate is installed locally", () => {
    // before: always the raw.githubusercontent.com URL with its OWNER placeholder.
    const dir = npmProject();
    sh(
      "mkdir -p node_modules/evalgate/schema && echo {} > node_modules/evalgate/schema/eval.schema.json",
      dir,
    );
    const r = runCli(["init"], dir);
    expect(r.code).toBe(0);
    const first = readFileSync(path.join(dir, "evals/starter.eval.yaml"), "utf8").split("\n")[0];
    expect(first).toBe("# yaml-language-server: $schema=../node_modules/evalgate/schema/eval.schema.json");
    // Only the workflow still holds a placeholder.
    expect(r.stdout).toContain("4. replace OWNER in .github/workflows/evals.yml");
    expect(r.stdout).not.toContain("5. ");
  });

  it("never overwrites a file the user has, and says what to add by hand", () => {
    const dir = npmProject();
    writeFileSync(path.join(dir, ".gitignore"), "dist/\n");
    sh("mkdir -p evals && printf 'mine\\n' > evals/starter.eval.yaml", dir);
    const r = runCli(["init"], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("kept  evals/starter.eval.yaml (exists)");
    expect(r.stdout).toContain("kept  .gitignore (exists)");
    expect(r.stdout).toContain("note: add .evalgate/ to .gitignore");
    expect(readFileSync(path.join(dir, ".gitignore"), "utf8")).toBe("dist/\n");
    expect(readFileSync(path.join(dir, "evals/starter.eval.yaml"), "utf8")).toBe("mine\n");
    expect(r.stdout).toContain("wrote .github/workflows/evals.yml");
  });

  it.each([
    ["codex", "CODEX_API_KEY", "npm install -g @openai/codex"],
    ["gemini-cli", "GEMINI_API_KEY", "npm install -g @google/gemini-cli"],
    ["command", undefined, undefined],
  ])("--agent %s --dir gives a suite and workflow that validate", (agent, secret, install) => {
    const dir = npmProject();
    const r = runCli(["init", "--agent", agent, "--dir", "ci/agent-evals"], dir);
    expect(r.code).toBe(0);
    expect(runCli(["validate", "ci/agent-evals"], dir).code).toBe(0);
    const suite = parse(readFileSync(path.join(dir, "ci/agent-evals/starter.eval.yaml"), "utf8"));
    expect(suite.targets[0].provider).toBe(agent);
    expect(suite.workspace.seed).toEqual({ path: "../..", exclude: ["ci/agent-evals", "node_modules"] });
    const workflow = path.join(dir, ".github/workflows/evals.yml");
    const av = spawnSync(process.execPath, [VALIDATOR, workflow], { encoding: "utf8", timeout: 60_000 });
    expect(av.status).toBe(0);
    const text = readFileSync(workflow, "utf8");
    expect(text).toContain("evals: ci/agent-evals/");
    if (secret) expect(text).toContain(`${secret}: \${{ secrets.${secret} }}`);
    if (install) expect(text).toContain(`run: ${install}`);
  });

  it.each([
    [{ "pyproject.toml": "[project]\nname = 'x'\n" }, "pytest"],
    [{ "go.mod": "module x\n" }, "go test ./..."],
    [{ "Cargo.toml": "[package]\nname = 'x'\n" }, "cargo test"],
  ])("tells the test command of %j", (files, command) => {
    const dir = gitRepo(files);
    expect(runCli(["init"], dir).code).toBe(0);
    const suite = parse(readFileSync(path.join(dir, "evals/starter.eval.yaml"), "utf8"));
    expect(suite.tests[0].scorers[0].run).toBe(command);
    expect(runCli(["validate"], dir).code).toBe(0);
  });

  it("without a known test command, says so and still writes a valid suite", () => {
    const dir = gitRepo({ "README.md": "hello\n" });
    const r = runCli(["init"], dir);
    expect(r.stdout).toContain("note: could not tell this repository's test command");
    expect(runCli(["validate"], dir).code).toBe(0);
  });

  it("refuses an unknown agent and a folder outside the repository (exit 2)", () => {
    const dir = npmProject();
    const bad = runCli(["init", "--agent", "copilot"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Allowed choices are claude-code, codex, gemini-cli, command");
    const outside = runCli(["init", "--dir", "../elsewhere"], dir);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain("--dir ../elsewhere: the suite's folder must be inside the repository");
  });
});
