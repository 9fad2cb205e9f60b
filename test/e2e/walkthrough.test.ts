/**
 * The README's "Evaluate your agent in your repository", walked as written on an npm package with a
 * real history (a bug, the commit that fixed it with a test, and later work), with evalgate
 * installed from the packed tarball. Every shell command of the section runs as printed, with two
 * substitutions only: the install line installs the tarball (evalgate is not on npm under that name
 * here), and the example's commit ids are this repository's. The outputs the README shows must be
 * what the commands print, and the workflow edit must give a workflow the action validator accepts.
 * The agent run itself needs a model's key and is left out; `validate --solvable` runs the case.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { blocks, read, section, showsOutput } from "../doc-blocks.js";
import { ROOT, sh, tempDir, writeFiles } from "../helpers.js";

const WALK = section(read("README.md"), "## Evaluate your agent in your repository");
const ALL = blocks("README.md", WALK);
const SHELL = ALL.filter((b) => b.lang === "sh").map((b) => b.text);
const only = (lang: string, kind: string) => {
  const found = ALL.filter((b) => b.lang === lang && b.kind === kind);
  expect(found, `${lang} ${kind}`).toHaveLength(1);
  return found[0]!.text;
};

const ENV = {
  ...process.env,
  CI: "1",
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@t",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@t",
};

/** Runs a README command (or several lines of them) in `cwd` as a reader's shell would. */
function shell(script: string, cwd: string) {
  const r = spawnSync("/bin/sh", ["-ec", script], { cwd, env: ENV, encoding: "utf8", timeout: 300_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/**
 * `shop`, as the README describes it: an npm package whose `total([])` threw until a commit fixed
 * it and added test/empty.test.js. Cloned from a bare origin, so `git push` has somewhere to go.
 */
function shop(): { repo: string; origin: string; fix: string; start: string } {
  const dir = tempDir("evalgate-walk-");
  const work = path.join(dir, "work");
  writeFiles(work, {
    "package.json": `${JSON.stringify({ name: "shop", version: "1.0.0", type: "module", scripts: { test: "node --test" } }, null, 2)}\n`,
    "package-lock.json": `${JSON.stringify({ name: "shop", version: "1.0.0", lockfileVersion: 3, requires: true, packages: { "": { name: "shop", version: "1.0.0" } } }, null, 2)}\n`,
    ".gitignore": "node_modules/\n",
    "src/cart.js":
      "export function total(items) {\n  return items.map((item) => item.price * item.qty).reduce((a, b) => a + b);\n}\n",
    "test/cart.test.js":
      'import assert from "node:assert";\nimport test from "node:test";\nimport { total } from "../src/cart.js";\ntest("adds prices", () => assert.equal(total([{ price: 2, qty: 3 }, { price: 1, qty: 1 }]), 7));\n',
  });
  sh("git init -q -b main && git add -A && git commit -qm 'A cart'", work);
  const start = sh("git rev-parse HEAD", work).trim();
  writeFiles(work, {
    "src/cart.js":
      "export function total(items) {\n  return items.map((item) => item.price * item.qty).reduce((a, b) => a + b, 0);\n}\n",
    "test/empty.test.js":
      'import assert from "node:assert";\nimport test from "node:test";\nimport { total } from "../src/cart.js";\ntest("an empty cart costs 0", () => assert.equal(total([]), 0));\n',
  });
  sh("git add -A && git commit -qm 'Fix the total of an empty cart'", work);
  const fix = sh("git rev-parse --short HEAD", work).trim();
  writeFiles(work, { "README.md": "# shop\n" });
  sh("git add -A && git commit -qm 'Say what shop is'", work);
  const origin = path.join(dir, "origin.git");
  sh(`git clone -q --bare work ${JSON.stringify(origin)}`, dir);
  const repo = path.join(dir, "shop");
  sh(`git clone -q ${JSON.stringify(origin)} shop`, dir);
  return { repo, origin, fix, start };
}

describe("the README's walkthrough, on an npm package with evalgate's tarball", () => {
  let tarball: string;
  beforeAll(() => {
    const dest = tempDir("evalgate-walk-pack-");
    // --ignore-scripts: lib/ is built by the test run already (prepare would rebuild it).
    const r = spawnSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dest], {
      cwd: ROOT,
      env: ENV,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    tarball = path.join(dest, (JSON.parse(r.stdout) as { filename: string }[])[0]!.filename);
  }, 120_000);

  it("goes from npm install to a case validate --solvable accepts, and a workflow the validator accepts", () => {
    expect(SHELL, "the section's shell blocks, in order").toHaveLength(6);
    const [install, init, ignore, capture, solvable, commit] = SHELL as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const { repo, origin, fix, start } = shop();

    // 1. Install: the tarball stands in for the package.
    expect(install).toMatch(/^npm install --save-dev \S+ /);
    const installed = shell(
      install.replace(/^(npm install --save-dev) \S+.*$/m, `$1 --prefer-offline ${JSON.stringify(tarball)}`),
      repo,
    );
    expect(installed.out).not.toMatch(/npm (error|ERR!)/);
    expect(installed.code).toBe(0);

    // 2. init prints what the README shows; then .evalgate/ goes into .gitignore.
    const wrote = shell(init, repo);
    expect(wrote.code, wrote.out).toBe(0);
    expect(showsOutput(only("text", "init"), wrote.out).missing, wrote.out).toBeUndefined();
    expect(shell(ignore, repo).code).toBe(0);
    expect(readFileSync(path.join(repo, ".gitignore"), "utf8")).toBe("node_modules/\n.evalgate/\n");

    // 3. One real case: the commands as printed, with this history's fix commit.
    expect(capture).toMatch(/^FIX=\w+ /m);
    const captured = shell(capture.replace(/^FIX=\w+/m, `FIX=${fix}`), repo);
    expect(captured.code, captured.out).toBe(0);
    expect(captured.out.trim()).toBe(start); // what the reader pastes as ref
    expect(readFileSync(path.join(repo, "evals/starter/fix.patch"), "utf8")).toContain(
      "+  return items.map((item) => item.price * item.qty).reduce((a, b) => a + b, 0);",
    );
    const example = only("yaml", "eval");
    const ref = (parse(example) as { workspace: { seed: { git: { ref: string } } } }).workspace.seed.git.ref;
    writeFileSync(path.join(repo, "evals/starter.eval.yaml"), example.replace(ref, start));

    // 4. validate --solvable: the reference passes, the unchanged start fails.
    const checked = shell(solvable, repo);
    expect(showsOutput(only("text", "solvable"), checked.out).missing, checked.out).toBeUndefined();
    expect(checked.code, checked.out).toBe(0);

    // 5. The workflow edit, then the commit and push as printed.
    const workflow = path.join(repo, ".github/workflows/evals.yml");
    const [anchor, ...added] = only("yaml", "workflow-edit").trimEnd().split("\n");
    const lines = readFileSync(workflow, "utf8").split("\n");
    expect(lines).toContain(anchor);
    lines.splice(lines.indexOf(anchor!) + 1, 0, ...added);
    writeFileSync(workflow, lines.join("\n"));
    const validator = spawnSync(
      process.execPath,
      [path.join(ROOT, "node_modules/@action-validator/cli/cli.mjs"), workflow],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(`${validator.stdout}${validator.stderr}`).toBe("");
    const pushed = shell(commit, repo);
    expect(pushed.code, pushed.out).toBe(0);
    expect(sh("git status --porcelain", repo)).toBe("");

    // What the action's checkout sees: with fetch-depth: 0 the case runs from a fresh clone; with
    // a checkout's default single commit, the seed's ref is not there and the run says so.
    const evalgate = path.join(repo, "node_modules/evalgate/bin/evalgate.js");
    const ci = path.join(tempDir("evalgate-walk-ci-"), "full");
    sh(`git clone -q ${JSON.stringify(origin)} ${JSON.stringify(ci)}`, ROOT);
    const inCi = shell(`node ${JSON.stringify(evalgate)} validate --solvable evals/`, ci);
    expect(inCi.out).toContain("✓ solvable  starter/empty-cart-total");
    expect(inCi.code, inCi.out).toBe(0);
    const shallow = path.join(path.dirname(ci), "shallow");
    sh(`git clone -q --depth 1 file://${origin} ${JSON.stringify(shallow)}`, ROOT);
    const inShallow = shell(`node ${JSON.stringify(evalgate)} validate --solvable evals/`, shallow);
    expect(inShallow.out).toContain(`ref "${start}" was not found`);
    expect(inShallow.out).toContain("is a shallow clone, with only its latest commits");
    expect(inShallow.out).toContain("fetch-depth: 0");
    expect(inShallow.code).not.toBe(0);
  }, 600_000);
});
