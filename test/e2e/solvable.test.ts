/** `evalgate validate --solvable`: reference must pass and noop must fail, for every test. */
import { cpSync, existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, runCli, tempDir, writeFiles } from "../helpers.js";

interface Report {
  schema: string;
  attempts: number;
  tests: number;
  solvable: number;
  results: {
    test_id: string;
    solvable: boolean;
    reference: { attempts: number; passed: number } | null;
    noop: { attempts: number; passed: number };
    problems: { kind: string; detail: string }[];
  }[];
  bundle: string | null;
}

const kindsOf = (r: Report) =>
  Object.fromEntries(r.results.map((t) => [t.test_id, t.problems.map((p) => p.kind)]));

describe("validate --solvable", () => {
  it("flags the example whose reference does not fix it and the one that passes without a change", () => {
    const cwd = tempDir();
    const r = runCli(
      ["validate", "--solvable", path.join(ROOT, "examples/unsolvable"), "--attempts", "2", "--json"],
      cwd,
    );
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    expect(report).toMatchObject({ schema: "evalgate.solvability/v1", attempts: 2, tests: 3, solvable: 1 });
    expect(kindsOf(report)).toEqual({
      "wrong-reference": ["unsolvable"],
      "always-passes": ["trivially_passing"],
      "empty-cart-total": [],
    });
    const wrong = report.results.find((t) => t.test_id === "wrong-reference")!;
    expect(wrong.reference).toMatchObject({ attempts: 2, passed: 0 });
    expect(wrong.problems[0]!.detail).toContain("total of an empty cart is 0");
    expect(report.results.find((t) => t.test_id === "always-passes")!.noop).toMatchObject({
      attempts: 2,
      passed: 2,
    });
    // Nothing was written into the user's folder.
    expect(report.bundle).toBeNull();
    expect(existsSync(path.join(cwd, ".evalgate"))).toBe(false);
  });

  it("prints a readable report and keeps the bundle only with --out", () => {
    const cwd = tempDir();
    const r = runCli(
      ["validate", "--solvable", path.join(ROOT, "examples/unsolvable"), "--out", "check"],
      cwd,
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "✗ unsolvable  unsolvable/wrong-reference (reference passed 0/1, noop passed 0/1)",
    );
    expect(r.stdout).toContain(
      "✗ trivially passing  unsolvable/always-passes (reference passed 1/1, noop passed 1/1)",
    );
    expect(r.stdout).toContain("✓ solvable  unsolvable/empty-cart-total");
    expect(r.stdout).toContain(
      "✗ 2 of 3 tests are not solvable as written (1 attempt each of reference and noop)",
    );
    expect(existsSync(path.join(cwd, "check/summary.json"))).toBe(true);
    expect(existsSync(path.join(cwd, "check/index.jsonl"))).toBe(true);
  });

  it("passes on the quickstart", () => {
    const r = runCli(["validate", "--solvable", "examples/quickstart"], ROOT);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("✓ all 3 tests are solvable");
  });

  it("finds a flaky verifier and a test without a reference", () => {
    const dir = tempDir();
    cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(dir, "project"), { recursive: true });
    cpSync(path.join(ROOT, "examples/quickstart/fixes"), path.join(dir, "fixes"), { recursive: true });
    writeFiles(dir, {
      // Passes the first time it runs, fails afterwards: a verifier with hidden state.
      "verify-once.sh": `#!/bin/sh\nset -e\nnode --test test/total.test.js >/dev/null\nif [ -e "$1/ran" ]; then exit 1; fi\ntouch "$1/ran"\n`,
      "checks.eval.yaml": [
        // An agent that is not installed here: the check does not run it.
        'targets: [{ name: agent, provider: command, command: ["./not-installed-agent"] }]',
        "concurrency: 1",
        "workspace: { seed: { path: project } }",
        "tests:",
        "  - id: stateful",
        "    instruction: Fix the empty cart.",
        "    reference: fixes/empty-cart-total.patch",
        '    scorers: [{ type: command, run: "sh {EVAL_DIR}/verify-once.sh {EVAL_DIR}" }]',
        "  - id: no-reference",
        "    instruction: Fix the empty cart.",
        '    scorers: [{ type: command, run: "node --test test/total.test.js" }]',
        "",
      ].join("\n"),
    });
    // The verifier keeps its state in the eval folder, which a contained scorer cannot write: this
    // run grades uncontained (a stateful verifier is what the check is for, not the sandbox).
    const r = runCli(["validate", "--solvable", "--attempts", "2", "--json"], dir, {
      EVALGATE_ISOLATION: "none",
    });
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    expect(kindsOf(report)).toEqual({ stateful: ["flaky_verifier"], "no-reference": ["unsolvable"] });
    const stateful = report.results.find((t) => t.test_id === "stateful")!;
    expect(stateful.reference).toMatchObject({ attempts: 2, passed: 1 });
    expect(report.results.find((t) => t.test_id === "no-reference")!.problems[0]!.detail).toContain(
      "no reference patch",
    );
  });

  it("exits 2 on a configuration error and on --attempts without --solvable", () => {
    const dir = tempDir();
    writeFiles(dir, { "bad.eval.yaml": "tests:\n  - id: x\n    instrucion: typo\n" });
    const bad = runCli(["validate", "--solvable"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("instrucion");
    const usage = runCli(["validate", "--attempts", "3", "examples/quickstart"], ROOT);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--attempts only applies with --solvable");
  });
});
