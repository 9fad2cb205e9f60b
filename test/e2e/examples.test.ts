/**
 * The examples for the common shapes (issue 29, point 8), each run with the real CLI as a team
 * would: `validate --solvable` proves the reference fixes the case and a no-op does not, and `run`
 * gives each target the verdict the example's README promises.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, readJsonl, runCli, sh, tempDir } from "../helpers.js";

interface Row {
  test_id: string;
  target: string;
  verdict: string;
}

/** Each case's verdict per target, as `test/target → verdict`. */
const verdicts = (bundle: string) =>
  Object.fromEntries(
    readJsonl<Row>(path.join(bundle, "index.jsonl")).map((r) => [`${r.test_id}/${r.target}`, r.verdict]),
  );

/** Runs the solvability check and the suite in `dir`, returning the run's bundle. */
function validateAndRun(dir: string, evalPath: string): string {
  const check = runCli(["validate", "--solvable", evalPath], dir);
  expect(check.code, check.stdout + check.stderr).toBe(0);
  expect(check.stdout).toMatch(/✓ (all \d+ tests are|the test is) solvable/);
  const out = path.join(tempDir(), "bundle");
  const run = runCli(["run", evalPath, "--out", out], dir);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  return out;
}

describe("examples/git-branch: a bug kept on a branch of the repository itself", () => {
  it("seeds from bug/empty-cart-total, which main does not have, and grades with the hidden verifier", () => {
    // A repository like a team's: the library, fixed on main; the bug committed on a branch cut
    // before the evals existed; the example (eval file, reference, verifier) committed on main.
    const repo = tempDir("evalgate-branch-repo-");
    cpSync(path.join(ROOT, "examples/quickstart/project"), repo, { recursive: true });
    const fix = path.join(ROOT, "examples/git-branch/fixes/empty-cart-total.patch");
    sh(`git init -q -b main . && git apply '${fix}' && git add -A && git commit -qm library`, repo);
    sh(
      `git checkout -q -b bug/empty-cart-total && git apply -R '${fix}' && git commit -qam 'bug' && git checkout -q main`,
      repo,
    );
    cpSync(path.join(ROOT, "examples/git-branch"), path.join(repo, "examples/git-branch"), {
      recursive: true,
    });
    cpSync(path.join(ROOT, "examples/agents"), path.join(repo, "examples/agents"), { recursive: true });
    sh("git add -A && git commit -qm evals", repo);
    // Only main's library is fixed: the case would be trivially passing if the seed were main.
    expect(sh("git show bug/empty-cart-total:src/cart.js", repo)).toContain(
      "reduce((sum, line) => sum + line);",
    );
    expect(sh("git ls-tree -r --name-only bug/empty-cart-total", repo)).not.toContain("examples/");

    const out = validateAndRun(repo, "examples/git-branch");
    expect(verdicts(out)).toEqual({
      "empty-cart-total/reference": "pass",
      "empty-cart-total/scripted-agent": "pass",
    });
  });

  it("stops before any agent runs when the branch is missing (a shallow CI checkout)", () => {
    // before: nothing; this is the failure the README's fetch-depth: 0 avoids.
    const repo = tempDir("evalgate-branch-repo-");
    cpSync(path.join(ROOT, "examples/quickstart/project"), repo, { recursive: true });
    cpSync(path.join(ROOT, "examples/git-branch"), path.join(repo, "examples/git-branch"), {
      recursive: true,
    });
    cpSync(path.join(ROOT, "examples/agents"), path.join(repo, "examples/agents"), { recursive: true });
    sh("git init -q -b main . && git add -A && git commit -qm all", repo);
    const run = runCli(["run", "examples/git-branch", "--out", path.join(tempDir(), "b")], repo);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("bug/empty-cart-total");
    rmSync(repo, { recursive: true, force: true });
  });
});

describe("examples/monorepo: a package inside a monorepo", () => {
  it("fixes packages/cart, runs each package's tests in its folder and keeps the diff in the package", () => {
    const out = validateAndRun(ROOT, "examples/monorepo");
    expect(verdicts(out)).toEqual({
      "receipt-line-total/reference": "pass",
      "receipt-line-total/scripted-agent": "pass",
    });
  });

  it("fails an agent whose fix also edits the other package (the scope scorer)", () => {
    // before (without the diff scorer's allow list): this attempt passed, both packages' tests pass.
    const dir = path.join(tempDir(), "monorepo");
    cpSync(path.join(ROOT, "examples/monorepo"), dir, { recursive: true });
    writeFileSync(
      path.join(dir, "agent.sh"),
      [
        "#!/bin/sh",
        "set -eu",
        "sed -i 's/formatPrice(item.price)}/formatPrice(item.price * item.quantity)}/' packages/cart/src/receipt.js",
        "printf '// touched by the agent\\n' >> packages/prices/src/index.js",
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
    const out = path.join(tempDir(), "bundle");
    const run = runCli(["run", ".", "--target", "scripted-agent", "--out", out], dir);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(verdicts(out)).toEqual({ "receipt-line-total/scripted-agent": "fail" });
    const attempt = readdirSync(out).find((d) => d.startsWith("receipt-line-total--scripted-agent"))!;
    const grading = JSON.parse(readFileSync(path.join(out, attempt, "run-1/grading.json"), "utf8")) as {
      scorers: { name: string; passed: boolean }[];
    };
    expect(Object.fromEntries(grading.scorers.map((x) => [x.name, x.passed]))).toEqual({
      cart: true,
      prices: true,
      scope: false,
    });
  });
});

// pytest from the machine (Debian's python3-pytest), reused by the venv's --system-site-packages.
const pytest = spawnSync("python3", ["-m", "pytest", "--version"], { encoding: "utf8" });
const noPytest = pytest.status !== 0 && !process.env.EVALGATE_REQUIRE_PYTEST;

describe("examples/python-venv: a virtualenv made by setup, graded by pytest's JUnit report", () => {
  it.skipIf(noPytest)(
    "creates .venv before the start commit and passes the reference and the agent (skipped without python3 -m pytest; EVALGATE_REQUIRE_PYTEST makes it required)",
    () => {
      const out = validateAndRun(ROOT, "examples/python-venv");
      expect(verdicts(out)).toEqual({ "slug-case/reference": "pass", "slug-case/scripted-agent": "pass" });
      // The venv is the start tree's, made by setup: the graded diff holds only the agent's fix.
      const agentDir = readdirSync(out).find((d) => d.startsWith("slug-case--scripted-agent"))!;
      const diff = readFileSync(path.join(out, agentDir, "run-1/diff.patch"), "utf8");
      expect(diff.match(/^diff --git .*$/gm)).toEqual([
        "diff --git a/slugify/__init__.py b/slugify/__init__.py",
      ]);
    },
  );
});
