import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { examFingerprint, historyKey } from "../../src/config/fingerprint.js";
import { sh, tempDir, writeFiles } from "../helpers.js";
import { loadPlan } from "./load-plan.js";

/** A suite with a folder seed, a hidden verifier and a reference; `over` edits its eval file. */
function suite(over: (yaml: string) => string = (y) => y): string {
  const dir = tempDir();
  writeFiles(dir, {
    "app/cart.js": "module.exports = () => NaN;\n",
    "hidden/check.sh": "#!/bin/sh\nexit 0\n",
    "fix.patch": "--- a/cart.js\n+++ b/cart.js\n",
    "agent.sh": "#!/bin/sh\n",
    "agent2.sh": "#!/bin/sh\n",
    "e.eval.yaml": over(`name: shop
targets:
  - { name: bot, provider: command, command: ["./agent.sh"], env: { TOKEN: one } }
workspace: { seed: { path: app }, verifiers: [{ from: hidden, to: .hidden }] }
tests:
  - id: total
    instruction: "fix the total"
    reference: fix.patch
    scorers: [{ name: unit, type: command, run: "sh .hidden/check.sh" }]
  - id: other
    instruction: "fix the total"
    reference: fix.patch
    scorers: [{ name: unit, type: command, run: "sh .hidden/check.sh" }]
`),
  });
  sh("chmod +x agent.sh agent2.sh", dir);
  return dir;
}

const keyOf = async (dir: string, id = "total") => {
  const plan = await loadPlan({ cwd: dir, paths: ["e.eval.yaml"] });
  const spec = plan.cases.find((c) => c.test.id === id)!;
  return { key: historyKey(spec), exam: examFingerprint(spec) };
};

describe("history keys: what makes attempts comparable", () => {
  it("are the same for the same exam and agent, in another checkout, whatever the test's id", async () => {
    const a = await keyOf(suite());
    expect(a.key).toMatch(/^sha256:[0-9a-f]{32}$/);
    expect((await keyOf(suite())).key).toBe(a.key);
    // Two tests with the same exam and agent are comparable content; identity keeps them apart.
    expect((await keyOf(suite(), "other")).key).toBe(a.key);
    // An environment value is not the agent (and may be a secret).
    expect((await keyOf(suite((y) => y.replace("TOKEN: one", "TOKEN: two")))).key).toBe(a.key);
  });

  it.each([
    ["the instruction", (y: string) => y.replace('instruction: "fix the total"', 'instruction: "fix it"')],
    [
      "a scorer",
      (y: string) => y.replace('run: "sh .hidden/check.sh" }]', 'run: "sh .hidden/check.sh; true" }]'),
    ],
    ["the model", (y: string) => y.replace("env: { TOKEN: one }", "model: big, env: { TOKEN: one }")],
    ["the command", (y: string) => y.replace('["./agent.sh"]', '["./agent2.sh"]')],
  ])("change with %s", async (_what, edit) => {
    expect((await keyOf(suite(edit))).key).not.toBe((await keyOf(suite())).key);
  });

  it.each([
    ["the seed folder's content", "app/cart.js"],
    ["a hidden verifier's content", "hidden/check.sh"],
    ["the reference patch", "fix.patch"],
  ])("change with %s (the files the exam names count by content)", async (_what, file) => {
    const dir = suite();
    const before = await keyOf(dir);
    const changed = suite();
    writeFileSync(path.join(changed, file), "changed\n");
    expect((await keyOf(changed)).exam).not.toBe(before.exam);
  });
});
