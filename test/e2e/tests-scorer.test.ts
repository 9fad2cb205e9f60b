/**
 * The `tests` scorer on real pytest and vitest projects, through the CLI: a real fix passes, an
 * agent that deletes or skips the fail-to-pass test does not, and a run with zero tests is an error.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, readJson, readJsonl, runCli, tempDir } from "../helpers.js";

interface Row {
  test_id: string;
  target: string;
  verdict: string;
  runs: { status: string; failure_kind: string | null; grading_path: string | null }[];
}
interface Grading {
  scorers: {
    state: string;
    passed: boolean | null;
    reason: string;
    details: Record<string, unknown> | null;
  }[];
}

const FIXTURES = path.join(ROOT, "test", "fixtures", "scorers");

/** A python3 that can run pytest: the one on PATH, or Debian's (python3-pytest). */
function pythonWithPytest(): string | undefined {
  for (const candidate of [process.env.EVALGATE_TEST_PYTHON, "python3", "/usr/bin/python3"]) {
    if (!candidate) continue;
    const r = spawnSync(candidate, ["-m", "pytest", "--version"], { encoding: "utf8" });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

function runSuite(dir: string, env: NodeJS.ProcessEnv = {}) {
  const out = path.join(tempDir(), "bundle");
  const result = runCli(["run", path.join(FIXTURES, dir), "--out", out], ROOT, env);
  const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
  const byCase = new Map(rows.map((r) => [`${r.test_id}/${r.target}`, r]));
  const scorer = (key: string) => {
    const run = byCase.get(key)!.runs[0]!;
    return readJson<Grading>(path.join(out, run.grading_path!)).scorers[0]!;
  };
  return { result, byCase, scorer, out };
}

const python = pythonWithPytest();
if (!python) {
  console.warn(
    "SKIPPED the pytest project: no python3 with pytest (python3 -m pytest, /usr/bin/python3 -m pytest); " +
      "install python3-pytest (.ci/run does)",
  );
}

describe.skipIf(!python)("the tests scorer on a pytest project", () => {
  // A skipped describe still runs its body to collect the tests: run the suite only with pytest.
  const suite = python ? runSuite("pytest", { EVALGATE_PYTHON: python }) : undefined;
  const { result, byCase, scorer } = suite ?? ({} as ReturnType<typeof runSuite>);

  it("passes the real fix, with every listed test named in grading.json", () => {
    expect(result.stderr).toBe("");
    expect(byCase.get("empty-average/reference")!.verdict).toBe("pass");
    const s = scorer("empty-average/reference");
    expect(s.reason).toBe("fail_to_pass 1/1 passed, pass_to_pass 2/2 passed (3 tests: 3 passed)");
    expect(s.details!.fail_to_pass).toEqual([
      {
        test: "tests/test_cart.py::test_average_of_empty_cart_is_zero",
        outcome: "passed",
        matched: 1,
        message: null,
      },
    ]);
    expect((s.details!.tests as { name: string }[]).map((t) => t.name)).toEqual([
      "test_total_adds_quantities",
      "test_average_price",
      "test_average_of_empty_cart_is_zero",
    ]);
  });

  it("fails an agent that deletes the failing test", () => {
    const row = byCase.get("empty-average/deletes-test")!;
    expect(row.verdict).toBe("fail");
    expect(row.runs[0]).toMatchObject({ status: "failed", failure_kind: "quality" });
    expect(scorer("empty-average/deletes-test").reason).toBe(
      "fail_to_pass not passing: tests/test_cart.py::test_average_of_empty_cart_is_zero (not in the report)",
    );
  });

  it("fails an agent that makes the failing test skip", () => {
    expect(byCase.get("empty-average/skips-test")!.verdict).toBe("fail");
    expect(scorer("empty-average/skips-test").reason).toBe(
      "fail_to_pass not passing: tests/test_cart.py::test_average_of_empty_cart_is_zero (skipped: flaky)",
    );
  });

  it("is an error, not a pass, when no test ran", () => {
    const row = byCase.get("no-tests-collected/reference")!;
    expect(row.verdict).toBe("error");
    expect(row.runs[0]).toMatchObject({ status: "error", failure_kind: "scorer_error" });
    const s = scorer("no-tests-collected/reference");
    expect(s.state).toBe("error");
    expect(s.reason).toMatch(/^the report has no tests \(junit\.xml; exit 5\): the suite did not really run/);
    expect(result.code).toBe(1);
  });
});

describe("the tests scorer on a vitest project", () => {
  const { result, byCase, scorer, out } = runSuite("vitest");

  it("passes the real fix", () => {
    expect(result.stderr).toBe("");
    expect(byCase.get("empty-average/reference")!.verdict).toBe("pass");
    expect(scorer("empty-average/reference").details!.counts).toEqual({
      tests: 3,
      passed: 3,
      failed: 0,
      errored: 0,
      skipped: 0,
    });
  });

  it("fails an agent that deletes the failing test, and one that skips it", () => {
    expect(byCase.get("empty-average/deletes-test")!.verdict).toBe("fail");
    expect(scorer("empty-average/deletes-test").reason).toBe(
      "fail_to_pass not passing: cart > averages an empty cart to 0 (not in the report)",
    );
    expect(byCase.get("empty-average/skips-test")!.verdict).toBe("fail");
    expect(scorer("empty-average/skips-test").reason).toBe(
      "fail_to_pass not passing: cart > averages an empty cart to 0 (skipped)",
    );
  });

  it("names the fail_to_pass test each gaming agent broke in the PR comment", () => {
    const comment = readFileSync(path.join(out, "comment.md"), "utf8");
    const details = (target: string) => {
      const start = comment.indexOf(`<b>empty-average</b> · ${target}`);
      expect(start).toBeGreaterThan(-1);
      return comment.slice(start, comment.indexOf("</details>", start));
    };
    expect(details("deletes-test")).toContain("    - `cart > averages an empty cart to 0` (missing)");
    expect(details("skips-test")).toContain("    - `cart > averages an empty cart to 0` (skipped)");
  });

  it("is an error when vitest finds no test file", () => {
    expect(byCase.get("no-test-files/reference")!.verdict).toBe("error");
    expect(scorer("no-test-files/reference").reason).toMatch(
      /^the report has no tests \(junit\.xml; exit 0\)/,
    );
  });
});
