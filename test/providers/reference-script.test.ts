/** `reference: { script }`: the reference provider runs the script in the workspace instead of applying a patch. */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, tempDir, writeFiles } from "../helpers.js";

const EVAL = `targets: [{ name: noop, provider: noop }]
workspace:
  seed: { path: app }
tests:
  - id: by-sh
    instruction: make ok.txt say yes
    reference: { script: fixes/fix.sh }
    scorers: [{ type: file, path: ok.txt, contains: "yes" }]
  - id: failing
    instruction: make ok.txt say yes
    reference: { script: fixes/broken.sh }
    scorers: [{ type: file, path: ok.txt, contains: "yes" }]
`;

describe("reference scripts", () => {
  it("runs a non-executable script with sh in the workspace; a failing script is the reference's error", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "e.eval.yaml": EVAL,
      "app/README": "app\n",
      // Not executable: run with sh. It must run in the workspace, not beside the eval file.
      "fixes/fix.sh": "test -f README || exit 9\necho yes > ok.txt\n",
      "fixes/broken.sh": "echo 'cannot solve this' >&2\nexit 3\n",
    });
    const r = runCli(["validate", "--solvable", "e.eval.yaml", "--json"], dir);
    expect(r.code, r.stderr).toBe(1);
    const results = JSON.parse(r.stdout).results as {
      test_id: string;
      reference: { passed: number; messages?: string[] };
    }[];
    expect(results.find((t) => t.test_id === "by-sh")).toMatchObject({
      solvable: true,
      reference: { passed: 1 },
    });
    const failing = results.find((t) => t.test_id === "failing")!;
    expect(failing.reference.passed).toBe(0);
    expect(JSON.stringify(failing)).toContain("the reference script exited 3: cannot solve this");
  });

  it("a plain string is still a patch, and { script } takes no other key", () => {
    const dir = tempDir();
    writeFiles(dir, {
      "e.eval.yaml": EVAL.replace(
        "reference: { script: fixes/fix.sh }",
        "reference: { script: fixes/fix.sh, patch: x }",
      ),
      "app/README": "app\n",
      "fixes/fix.sh": "echo yes > ok.txt\n",
      "fixes/broken.sh": "exit 3\n",
    });
    const r = runCli(["validate", path.join(dir, "e.eval.yaml")], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("tests[0].reference");
  });
});
