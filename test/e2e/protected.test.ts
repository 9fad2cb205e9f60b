/**
 * Acceptance: an agent that edits a protected test file is `tampered` and its edit does not affect
 * scoring (the scorer runs on the restored file); a hidden verifier is invisible to the agent, used
 * by the scorer, and copied in fresh over anything the agent put at its place.
 */
import { chmodSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitRepo, readJson, readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

interface Row {
  target: string;
  verdict: string;
  runs: { dir: string; status: string; failure_kind: string | null }[];
}
interface Result {
  status: string;
  failure_kind: string | null;
  message: string | null;
  tampered: string[];
}
interface Grading {
  scorers: { name: string; passed: boolean | null; state: string }[];
}

const FIX = `sed -i 's/return items.reduce((a, i) => a + i.price);/return items.reduce((a, i) => a + i.price, 0);/' src/cart.js`;

describe("protected paths and hidden verifiers", () => {
  const dir = tempDir();
  writeFiles(dir, {
    "project/src/cart.js":
      "export function total(items) {\n  return items.reduce((a, i) => a + i.price);\n}\n",
    "project/test/cart.test.js": `import test from "node:test";
import assert from "node:assert";
import { total } from "../src/cart.js";
test("empty cart totals 0", () => assert.strictEqual(total([]), 0));
`,
    "verifiers/hidden.test.js": `import test from "node:test";
import assert from "node:assert";
import { total } from "../src/cart.js";
console.log("hidden verifier ran");
test("two items", () => assert.strictEqual(total([{ price: 2 }, { price: 3 }]), 5));
test("empty", () => assert.strictEqual(total([]), 0));
`,
    // Edits the protected test so it passes without fixing anything.
    "agents/cheater.sh": `#!/bin/sh
printf 'import test from "node:test";\\ntest("empty cart totals 0", () => {});\\n' > test/cart.test.js
`,
    // Fixes the bug, then deletes the visible test: right code, still tampering.
    "agents/fix-and-delete.sh": `#!/bin/sh
${FIX}
rm test/cart.test.js
`,
    // Fixes the bug and looks everywhere in its workspace for the hidden verifier.
    "agents/peeker.sh": `#!/bin/sh
${FIX}
echo "files I can see:"; find . -path ./.git -prune -o -type f -print | sort
if grep -rl "hidden verifier" . --exclude-dir=.git; then echo "FOUND THE VERIFIER"; fi
`,
    // Does not fix the bug, and writes a passing test where the hidden verifier will go.
    "agents/forger.sh": `#!/bin/sh
mkdir -p checks
printf 'import test from "node:test";\\ntest("forged", () => {});\\n' > checks/hidden.test.js
`,
    "p.eval.yaml": `name: guards
targets:
  - { name: cheater, provider: command, command: ["./agents/cheater.sh"] }
  - { name: fix-and-delete, provider: command, command: ["./agents/fix-and-delete.sh"] }
  - { name: peeker, provider: command, command: ["./agents/peeker.sh"] }
  - { name: forger, provider: command, command: ["./agents/forger.sh"] }
workspace:
  seed: { path: project }
  protected: ["test/**"]
  verifiers: [{ from: verifiers/hidden.test.js, to: checks/hidden.test.js }]
tests:
  - id: empty-total
    instruction: total() of an empty cart must be 0
    scorers:
      - { name: visible, type: command, run: "node --test test/cart.test.js" }
      - { name: hidden, type: command, run: "node --test checks/hidden.test.js" }
`,
  });
  for (const a of ["cheater", "fix-and-delete", "peeker", "forger"]) {
    chmodSync(path.join(dir, "agents", `${a}.sh`), 0o755);
  }
  const out = path.join(dir, "bundle");
  const result = runCli(["run", ".", "--out", out], dir);
  const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
  const runOf = (target: string) => rows.find((r) => r.target === target)!.runs[0]!;
  const read = (target: string, file: string) =>
    readFileSync(path.join(out, runOf(target).dir, file), "utf8");
  const resultOf = (target: string) => readJson<Result>(path.join(out, runOf(target).dir, "result.json"));
  const scorersOf = (target: string) =>
    Object.fromEntries(
      readJson<Grading>(path.join(out, runOf(target).dir, "grading.json")).scorers.map((s) => [
        s.name,
        s.passed,
      ]),
    );

  it("marks an agent that edited a protected test tampered, and scores the restored test", () => {
    expect(result.stderr).toBe("");
    const r = resultOf("cheater");
    expect(r.status).toBe("failed");
    expect(r.failure_kind).toBe("tampered");
    expect(r.tampered).toEqual(["test/cart.test.js"]);
    expect(r.message).toContain("test/cart.test.js (restored before scoring)");
    // The restored test ran and failed: the edit did not help.
    expect(scorersOf("cheater")).toEqual({ visible: false, hidden: false });
    expect(read("cheater", "scorers/visible.log")).toContain("empty cart totals 0");
    expect(read("cheater", "scorers/visible.log")).toMatch(/not ok|fail 1/);
    // The diff keeps what the agent did, as evidence.
    expect(read("cheater", "diff.patch")).toContain('+test("empty cart totals 0", () => {});');
  });

  it("fails an agent that fixed the code but deleted a protected test, though every scorer passed", () => {
    const r = resultOf("fix-and-delete");
    expect(r).toMatchObject({ status: "failed", failure_kind: "tampered", tampered: ["test/cart.test.js"] });
    expect(scorersOf("fix-and-delete")).toEqual({ visible: true, hidden: true });
    expect(rows.find((x) => x.target === "fix-and-delete")!.verdict).toBe("fail");
  });

  it("keeps the hidden verifier out of the agent's sight and runs it for the scorer", () => {
    const log = read("peeker", "agent.log");
    expect(log).toContain("./src/cart.js");
    expect(log).toContain("./test/cart.test.js");
    expect(log).not.toContain("hidden");
    expect(log).not.toContain("FOUND THE VERIFIER");
    expect(resultOf("peeker")).toMatchObject({ status: "passed", tampered: [] });
    expect(read("peeker", "scorers/hidden.log")).toContain("hidden verifier ran");
    expect(read("peeker", "diff.patch")).not.toContain("checks/hidden.test.js");
  });

  it("replaces what the agent put where a verifier goes with the real verifier", () => {
    const r = resultOf("forger");
    expect(r).toMatchObject({ status: "failed", failure_kind: "quality", tampered: [] });
    expect(scorersOf("forger")).toEqual({ visible: false, hidden: false });
    expect(read("forger", "scorers/hidden.log")).toContain("hidden verifier ran");
    expect(read("forger", "diff.patch")).toContain("checks/hidden.test.js");
  });
});

/**
 * With a git seed's subdir the agent works in the subfolder, but protected globs and a verifier's
 * `to` are relative to the repository root, like the diff and the scorers.
 */
describe("protected paths and hidden verifiers with a git seed's subdir", () => {
  const work = gitRepo({
    "ci/check.sh": "original ci\n",
    "services/cart/cart.js": "broken\n",
    "services/cart/test/cart.test.sh": "original test\n",
  });
  const remote = path.join(tempDir("evalgate-remote-"), "shop.git");
  sh(`git clone -q --bare ${work} ${remote}`, "/tmp");
  const dir = tempDir();
  writeFiles(dir, {
    "verifiers/hidden.txt": "hidden verifier\n",
    "s.eval.yaml": `targets:
  - name: cheater
    provider: command
    command: "echo fixed > cart.js; echo hacked > test/cart.test.sh; echo hacked > ../../ci/check.sh; ls -R ../.. > ../../seen.txt"
workspace:
  seed: { git: { url: "file://${remote}", subdir: services/cart } }
  protected: ["services/cart/test/**", "ci/**"]
  verifiers: [{ from: verifiers/hidden.txt, to: services/cart/checks/hidden.txt }]
tests:
  - id: cart
    instruction: Fix the cart.
    scorers:
      - { name: fixed, type: file, path: services/cart/cart.js, contains: fixed }
      - { name: test-restored, type: file, path: services/cart/test/cart.test.sh, contains: original test }
      - { name: ci-restored, type: file, path: ci/check.sh, contains: original ci }
      - { name: verifier, type: file, path: services/cart/checks/hidden.txt, contains: hidden verifier }
`,
  });
  const out = path.join(dir, "bundle");
  const result = runCli(["run", ".", "--out", out], dir);
  const run = readJsonl<Row>(path.join(out, "index.jsonl"))[0]!.runs[0]!;
  const read = (file: string) => readFileSync(path.join(out, run.dir, file), "utf8");

  it("restores protected paths in and outside the subfolder, marks the attempt tampered, and scores the restored files", () => {
    expect(result.stderr).toBe("");
    expect(readJson<Result>(path.join(out, run.dir, "result.json"))).toMatchObject({
      status: "failed",
      failure_kind: "tampered",
      tampered: ["ci/check.sh", "services/cart/test/cart.test.sh"],
    });
    const scorers = readJson<Grading>(path.join(out, run.dir, "grading.json")).scorers;
    expect(Object.fromEntries(scorers.map((s) => [s.name, s.passed]))).toEqual({
      fixed: true,
      "test-restored": true,
      "ci-restored": true,
      verifier: true,
    });
    // The diff, relative to the repository root, keeps what the agent did.
    const diff = read("diff.patch");
    expect(diff).toContain("+++ b/services/cart/test/cart.test.sh");
    expect(diff).toContain("+++ b/ci/check.sh");
  });

  it("puts the verifier at its place from the repository root, after the agent finished", () => {
    const diff = read("diff.patch");
    expect(diff).not.toContain("hidden");
    // What the agent saw of the whole repository: no checks/ folder anywhere.
    expect(diff).toMatch(/\+\+\+ b\/seen\.txt/);
    expect(diff).toContain("+cart.test.sh");
    expect(diff).not.toContain("checks");
  });
});
