/**
 * Regrading that disagrees with itself on the agent's code is a verifier flake only when the same
 * scorer also disagrees with itself on the reference or the start tree (issue 26, point 5b): the
 * case's verifier is calibrated once, as many gradings as the attempt's, in a fresh copy.
 *
 * Attack first (an unlucky team's, really: a race in the agent's fix). Before this change, with
 * `repeat: 3` and the default policy, an attempt whose code fails its first grading only was rerun
 * automatically, became `verifier_flake`, was not counted, and the case passed 2 of 2.
 */
import { chmodSync, existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJson, readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

interface Row {
  test_id: string;
  verdict: string;
  runs: { dir: string; status: string; failure_kind: string | null }[];
}
interface Result {
  status: string;
  failure_kind: string | null;
  message: string | null;
  verify: {
    runs: number;
    passed: number;
    automatic: boolean;
    calibration?: { on: string; runs: number; passed: number; changed: string[]; dir: string };
  } | null;
}

const FIXED = "export function total(items) {\n  return items.reduce((a, i) => a + i.price, 0);\n}\n";
/** Right, except the first time it ever runs in its folder: a warm-up race. */
const RACY = `import { existsSync, writeFileSync } from "node:fs";
export function total(items) {
  const warm = new URL("../.warm", import.meta.url);
  if (!existsSync(warm)) {
    writeFileSync(warm, "");
    return Number.NaN;
  }
  return items.reduce((a, i) => a + i.price, 0);
}
`;
/** A check that passes, fails, passes... in one folder: the verifier itself is flaky. */
const FLAKY_CHECK = "if [ -e .turn ]; then rm .turn; exit 1; fi; touch .turn";

describe("verifier calibration", () => {
  const dir = tempDir("evalgate-calibration-");
  writeFiles(dir, {
    "project/src/cart.js":
      "export function total(items) {\n  return items.reduce((a, i) => a + i.price);\n}\n",
    "project/test/cart.test.js": `import test from "node:test";
import assert from "node:assert";
import { total } from "../src/cart.js";
test("empty cart totals 0", () => assert.strictEqual(total([]), 0));
`,
    "fixes/cart.patch": `diff --git a/src/cart.js b/src/cart.js
--- a/src/cart.js
+++ b/src/cart.js
@@ -1,3 +1,3 @@
 export function total(items) {
-  return items.reduce((a, i) => a + i.price);
+  return items.reduce((a, i) => a + i.price, 0);
 }
`,
    "fixed.js": FIXED,
    "racy.js": RACY,
    // Fixes the bug; on the third attempt of flaky-code its fix has a race.
    "agents/fixer.sh": `#!/bin/sh
if [ "$EVALGATE_TEST_ID" = flaky-code ] && [ "$EVALGATE_ATTEMPT" = 3 ]; then cp "${dir}/racy.js" src/cart.js
else cp "${dir}/fixed.js" src/cart.js; fi
if [ "$EVALGATE_TEST_ID" = tampered-flaky-verifier ]; then echo "// mine" >> test/cart.test.js; fi
`,
    "c.eval.yaml": JSON.stringify({
      name: "calibration",
      targets: [{ name: "fixer", provider: "command", command: ["./agents/fixer.sh"] }],
      concurrency: 1,
      workspace: { seed: { path: "project" } },
      gate: { min_case_pass_rate: 0 },
      tests: [
        {
          id: "flaky-code",
          instruction: "total() of an empty cart must be 0",
          reference: "fixes/cart.patch",
          repeat: 3,
          scorers: [{ name: "unit", type: "command", run: "node --test test/cart.test.js" }],
        },
        {
          id: "flaky-verifier",
          instruction: "total() of an empty cart must be 0",
          reference: "fixes/cart.patch",
          verify_repeats: 2,
          scorers: [
            { name: "unit", type: "command", run: "node --test test/cart.test.js" },
            { name: "flaky", type: "command", run: FLAKY_CHECK },
          ],
        },
        {
          id: "tampered-flaky-verifier",
          instruction: "total() of an empty cart must be 0",
          reference: "fixes/cart.patch",
          verify_repeats: 2,
          workspace: { protected: ["test/**"] },
          scorers: [
            { name: "unit", type: "command", run: "node --test test/cart.test.js" },
            { name: "flaky", type: "command", run: FLAKY_CHECK },
          ],
        },
        {
          id: "flaky-verifier-no-reference",
          instruction: "total() of an empty cart must be 0",
          verify_repeats: 2,
          scorers: [
            { name: "unit", type: "command", run: "node --test test/cart.test.js" },
            { name: "flaky", type: "command", run: FLAKY_CHECK },
          ],
        },
      ],
    }),
  });
  chmodSync(path.join(dir, "agents/fixer.sh"), 0o755);
  const out = path.join(dir, "out");
  const cli = runCli(["run", "c.eval.yaml", "--out", out], dir, {}, 300_000);
  const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
  const row = (test: string) => rows.find((r) => r.test_id === test)!;
  const result = (test: string, i = 0) =>
    readJson<Result>(path.join(out, row(test).runs[i]!.dir, "result.json"));

  it("fails an attempt whose code passed 2 of 3 gradings while the verifier is stable on the reference", () => {
    expect(cli.stderr).toBe("");
    const r = result("flaky-code", 2);
    expect(r).toMatchObject({ status: "failed", failure_kind: "quality" });
    expect(r.message).toMatch(
      /^the agent's code passed 2 of 3 gradings \(unit changed\) \(automatic rerun: .*\) while the verifier is stable on the reference \(3 of 3 gradings passed, every scorer the same each time\)/,
    );
    expect(r.verify).toMatchObject({
      runs: 3,
      passed: 2,
      automatic: true,
      calibration: { on: "reference", runs: 3, passed: 3, changed: [], dir: "run-3" },
    });
    // The calibration's gradings are kept with the attempt that asked for them.
    const cal = path.join(out, row("flaky-code").runs[2]!.dir, "calibration");
    for (const i of [1, 2, 3]) expect(existsSync(path.join(cal, `grading-${i}/scorers/unit.log`))).toBe(true);
    // Counted: the case fails 2 of 3 (before: 2 of 2, a pass).
    expect(row("flaky-code").verdict).toBe("fail");
    expect(row("flaky-code").runs.map((x) => x.status)).toEqual(["passed", "passed", "failed"]);
  });

  it("keeps a verifier flaky on the reference a verifier flake (control)", () => {
    const r = result("flaky-verifier");
    expect(r).toMatchObject({ status: "error", failure_kind: "verifier_flake" });
    expect(r.message).toContain(
      "passed 2 of 3 runs (flaky changed) (verify_repeats), and on the reference too (flaky changed; passed 2 of 3)",
    );
    expect(r.verify?.calibration).toMatchObject({ on: "reference", changed: ["flaky"] });
  });

  it("never lets a flaky verifier turn tampering into an uncounted flake", () => {
    // before: the flake replaced the status, and the tampered attempt was not counted.
    expect(result("tampered-flaky-verifier")).toMatchObject({ status: "failed", failure_kind: "tampered" });
  });

  it("calibrates on the start tree when the test has no reference (control)", () => {
    const r = result("flaky-verifier-no-reference");
    expect(r).toMatchObject({ status: "error", failure_kind: "verifier_flake" });
    expect(r.message).toContain("and on the start tree too (flaky changed; passed 0 of 3)");
    expect(r.verify?.calibration).toMatchObject({ on: "start", runs: 3, passed: 0, changed: ["flaky"] });
  });
});
