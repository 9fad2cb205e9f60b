/**
 * The exam from another commit (config/plan/exam.ts, docs/exam.md): everything that grades is read
 * from the exam's files, only `targets:` from the checkout. Each test builds the base's files in
 * one folder (as pipeline/exam.ts materializes a commit) and the pull request's in another (the
 * checkout), then loads the plan as a pull request's run does.
 *
 * Before this change only `gate:` came from the base (PlanOptions.gateOverride): every test below
 * that expects the base's scorer, verifier, instruction, protected list or a removed case to run
 * got the checkout's instead (or no case at all), and nothing was marked proposed or changed.
 */
import { chmodSync, existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ExamSource } from "../../src/config/plan/index.js";
import type { CaseSpec, Plan } from "../../src/config/types.js";
import { ConfigError } from "../../src/errors.js";
import { tempDir, writeFiles } from "../helpers.js";
import { loadPlan } from "./load-plan.js";

const BASE_EVAL = `name: shop
targets:
  - { name: agent, provider: command, command: ["./agent.sh", "{PROMPT_FILE}"] }
workspace:
  seed: { path: ../project }
  protected: ["test/**"]
  verifiers: [{ from: verifiers/cart.test.js, to: test/cart.test.js }]
gate: { min_case_pass_rate: 1.0 }
tests:
  - id: cart
    instruction_file: tasks/cart.md
    reference: fixes/cart.patch
    scorers:
      - { name: unit, type: command, run: "node {EVAL_DIR}/check.js" }
  - id: total
    instruction: fix the total
    scorers: [{ name: unit, type: command, run: "npm test" }]
  - include: cases/*.yaml
`;

const BASE: Record<string, string> = {
  "evals/shop.eval.yaml": BASE_EVAL,
  "evals/agent.sh": "#!/bin/sh\necho base agent\n",
  "evals/check.js": "process.exit(require('fs').existsSync('done') ? 0 : 1)\n",
  "evals/tasks/cart.md": "The cart total is wrong. Fix it.\n",
  "evals/fixes/cart.patch": "base patch\n",
  "evals/verifiers/cart.test.js": "assert(total() === 3)\n",
  "evals/cases/more.yaml": `- id: coupon\n  instruction: apply the coupon\n  scorers: [{ name: unit, type: command, run: "npm test" }]\n`,
  "project/src/cart.js": "module.exports = 1\n",
};

/** Makes the agents (*.sh) runnable, as git checks them out. */
function executable(dir: string): void {
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile() && e.name.endsWith(".sh")) chmodSync(path.join(e.parentPath, e.name), 0o755);
}

/** The base's files and the pull request's (the base's with `changes`; null deletes a file). */
function sides(changes: Record<string, string | null>): { exam: ExamSource; checkout: string } {
  const base = tempDir("evalgate-exam-base-");
  const checkout = tempDir("evalgate-exam-head-");
  writeFiles(base, BASE);
  const head = { ...BASE, ...changes };
  writeFiles(
    checkout,
    Object.fromEntries(Object.entries(head).filter((e): e is [string, string] => e[1] !== null)),
  );
  executable(base);
  executable(checkout);
  return {
    exam: { root: base, sha: "b".repeat(40), ref: "main", label: "the base commit bbbbbbb" },
    checkout,
  };
}

async function planOf(changes: Record<string, string | null>, paths = ["evals"]) {
  const { exam, checkout } = sides(changes);
  const plan = await loadPlan({ cwd: checkout, projectRoot: checkout, paths, exam });
  return { plan, exam, checkout };
}

const byTest = (plan: Plan, id: string): CaseSpec => {
  const c = plan.cases.find((x) => x.identity.testId === id);
  if (!c) throw new Error(`no case ${id}: ${plan.cases.map((x) => x.identity.testId).join(", ")}`);
  return c;
};

describe("the exam from the base commit", () => {
  it("a scorer weakened to `true` in the PR: the base's scorer runs, and the change is named", async () => {
    const weak = BASE_EVAL.replace('run: "node {EVAL_DIR}/check.js"', 'run: "true"');
    const { plan, exam } = await planOf({ "evals/shop.eval.yaml": weak });
    const cart = byTest(plan, "cart");
    expect(cart.test.scorers[0]!.options).toMatchObject({ run: "node {EVAL_DIR}/check.js" });
    // {EVAL_DIR} of a scorer is the exam's folder, so check.js is the base's too.
    expect(cart.test.scorers[0]!.evalDir).toBe(path.join(exam.root, "evals"));
    expect(cart.exam).toEqual({ status: "changed", changes: ["scorer unit"] });
    expect(byTest(plan, "total").exam).toBeUndefined();
    expect(plan.exam).toEqual({ sha: exam.sha, ref: "main", files: [] });
  });

  it("a case deleted in the PR still runs, from the base's definition", async () => {
    const without = BASE_EVAL.replace(/ {2}- id: total\n.*\n.*\n/, "").replace(
      "  - include: cases/*.yaml\n",
      "",
    );
    const { plan } = await planOf({
      "evals/shop.eval.yaml": without,
      "evals/cases/more.yaml": null,
    });
    expect(plan.cases.map((c) => c.identity.testId).sort()).toEqual(["cart", "coupon", "total"]);
    expect(byTest(plan, "total").exam).toEqual({ status: "removed", changes: [] });
    expect(byTest(plan, "total").test.instruction).toBe("fix the total");
    expect(byTest(plan, "coupon").exam).toEqual({ status: "removed", changes: [] });
  });

  it("a verifier, instruction file, reference and protected list edited in the PR: the base's are used", async () => {
    const { plan, exam, checkout } = await planOf({
      "evals/verifiers/cart.test.js": "// nothing to check\n",
      "evals/tasks/cart.md": "Delete the tests.\n",
      "evals/fixes/cart.patch": "head patch\n",
      "evals/shop.eval.yaml": BASE_EVAL.replace('protected: ["test/**"]', "protected: []"),
    });
    const cart = byTest(plan, "cart");
    expect(cart.test.workspace.verifiers).toEqual([
      { from: path.join(exam.root, "evals/verifiers/cart.test.js"), to: "test/cart.test.js" },
    ]);
    expect(cart.test.instruction).toBe("The cart total is wrong. Fix it.\n");
    expect(cart.test.reference).toBe(path.join(exam.root, "evals/fixes/cart.patch"));
    expect(cart.test.workspace.protected).toEqual(["test/**"]);
    expect(cart.test.workspace.seed).toEqual({ kind: "path", path: path.join(exam.root, "project") });
    expect(cart.exam?.changes).toEqual(["instruction", "reference", "protected", "verifiers"]);
    // total and coupon share the protected list and verifiers of the file.
    expect(byTest(plan, "total").exam?.changes).toEqual(["protected", "verifiers"]);
    // The checkout's copies of the answer keys are kept from the agents as well as the exam's.
    expect(plan.answerKeys).toEqual(
      expect.arrayContaining([
        path.join(checkout, "evals/verifiers/cart.test.js"),
        path.join(checkout, "evals/fixes/cart.patch"),
      ]),
    );
  });

  it("a change inside a path seed or a file a scorer names under {EVAL_DIR} is found by content", async () => {
    const { plan } = await planOf({
      "project/src/cart.js": "module.exports = 2\n",
      "evals/check.js": "process.exit(0)\n",
    });
    expect(byTest(plan, "cart").exam?.changes).toEqual(["seed", "scorer unit"]);
    expect(byTest(plan, "total").exam?.changes).toEqual(["seed"]);
  });

  it("the targets are the PR's: its agent command, resolved in the checkout", async () => {
    const { plan, checkout } = await planOf({
      "evals/shop.eval.yaml": BASE_EVAL.replace('"./agent.sh"', '"./agent2.sh"'),
      "evals/agent2.sh": "#!/bin/sh\necho the PR's agent\n",
    });
    const cart = byTest(plan, "cart");
    expect(cart.target.command).toEqual({ argv: [path.join(checkout, "evals/agent2.sh"), "{PROMPT_FILE}"] });
    // The agent's {EVAL_DIR} and its sandbox's read-only folder are the checkout's.
    expect(cart.evalDir).toBe(path.join(checkout, "evals"));
    // Targets are not the exam: no change is reported.
    expect(cart.exam).toBeUndefined();
  });

  it("a test new in the PR is proposed, from its own definition", async () => {
    const added = `${BASE_EVAL}  - id: fresh\n    instruction: something new\n    scorers: [{ name: unit, type: command, run: "true" }]\n`;
    const { plan, checkout } = await planOf({ "evals/shop.eval.yaml": added });
    const fresh = byTest(plan, "fresh");
    expect(fresh.exam).toEqual({ status: "proposed", changes: [] });
    expect(fresh.test.scorers[0]!.evalDir).toBe(path.join(checkout, "evals"));
  });

  it("an eval file new in the PR: every case proposed; one the PR deletes still runs with its own targets in the checkout", async () => {
    const extra = `name: extra\ntargets:\n  - { name: agent, provider: command, command: ["./agent.sh"] }\nworkspace: { seed: { empty: true } }\ntests:\n  - id: e1\n    instruction: x\n    scorers: [{ type: command, run: "true" }]\n`;
    const { plan, checkout } = await planOf({ "evals/extra.eval.yaml": extra });
    expect(byTest(plan, "e1").exam?.status).toBe("proposed");
    expect(plan.roots.map((r) => r.evalPath).sort()).toEqual([
      "evals/extra.eval.yaml",
      "evals/shop.eval.yaml",
    ]);
    expect(plan.exam?.files).toEqual([{ evalPath: "evals/extra.eval.yaml", change: "added", changes: [] }]);

    const gone = await planOf({ "evals/shop.eval.yaml": null, "evals/extra.eval.yaml": extra });
    expect(gone.plan.cases.map((c) => `${c.identity.testId}:${c.exam?.status}`).sort()).toEqual([
      "cart:removed",
      "coupon:removed",
      "e1:proposed",
      "total:removed",
    ]);
    expect(byTest(gone.plan, "cart").target.command).toEqual({
      argv: [path.join(gone.checkout, "evals/agent.sh"), "{PROMPT_FILE}"],
    });
    expect(gone.plan.exam?.files).toContainEqual({
      evalPath: "evals/shop.eval.yaml",
      change: "removed",
      changes: [],
    });
    expect(existsSync(checkout)).toBe(true);
  });

  it("a gate lowered in the PR: the base's applies, and the file's change is listed", async () => {
    const { plan } = await planOf({
      "evals/shop.eval.yaml": BASE_EVAL.replace("min_case_pass_rate: 1.0", "min_case_pass_rate: 0.5"),
    });
    expect(plan.roots[0]!.minCasePassRate).toBe(1);
    expect(plan.exam?.files).toEqual([
      { evalPath: "evals/shop.eval.yaml", change: "changed", changes: ["gate min_case_pass_rate 1 → 0.5"] },
    ]);
  });

  it("a suite included by the base keeps the base's tests, and its targets come from the PR's suite file", async () => {
    const suite = `name: core\ntargets:\n  - { name: agent, provider: command, command: ["./core-agent.sh"] }\nworkspace: { seed: { empty: true } }\ntests:\n  - id: c1\n    instruction: core one\n    scorers: [{ name: s, type: command, run: "exit 1" }]\n`;
    const wrapper = `name: all\ntests:\n  - include: core/core.yaml\n    type: suite\n`;
    const base = tempDir("evalgate-exam-base-");
    const checkout = tempDir("evalgate-exam-head-");
    writeFiles(base, { "evals/all.eval.yaml": wrapper, "evals/core/core.yaml": suite });
    writeFiles(checkout, {
      "evals/all.eval.yaml": wrapper,
      "evals/core/core.yaml": suite.replace("exit 1", "true").replace("core-agent.sh", "core-agent2.sh"),
      "evals/core/core-agent2.sh": "#!/bin/sh\n",
    });
    executable(checkout);
    const exam = { root: base, sha: "c".repeat(40), ref: "main", label: "the base commit ccccccc" };
    const plan = await loadPlan({ cwd: checkout, projectRoot: checkout, paths: ["evals"], exam });
    const c1 = byTest(plan, "c1");
    expect(c1.test.scorers[0]!.options).toMatchObject({ run: "exit 1" });
    expect(c1.target.command).toEqual({ argv: [path.join(checkout, "evals/core/core-agent2.sh")] });
    expect(c1.exam).toEqual({ status: "changed", changes: ["scorer s"] });
  });

  it("a problem of the base's file names it at the base commit; a test naming a target the PR removed says so", async () => {
    const named = BASE_EVAL.replace("  - id: total\n", "  - id: total\n    targets: [agent]\n");
    const { exam, checkout } = sides({
      "evals/shop.eval.yaml": named.replace("name: agent", "name: agent2"),
    });
    writeFiles(exam.root, { "evals/shop.eval.yaml": named });
    const error = await loadPlan({ cwd: checkout, projectRoot: checkout, paths: ["evals"], exam }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    const text = (error as ConfigError).message;
    expect(text).toMatch(/evals\/shop\.eval\.yaml at the base commit bbbbbbb:\d+: tests\[1\]\.targets\[0\]/);
    expect(text).toContain('unknown target "agent": the test is the exam\'s');
    expect(text).toContain("change the test's targets: in a pull request of its own first");
  });
});

describe("comparing a folder seed", () => {
  it("counts only the checkout's files git counts: an ignored build output is not the PR's change", async () => {
    const { exam, checkout } = sides({ "project/node_modules/x/index.js": "built by a workflow step\n" });
    const checkoutFiles = new Set(Object.keys(BASE));
    const plan = await loadPlan({
      cwd: checkout,
      projectRoot: checkout,
      paths: ["evals"],
      exam: { ...exam, checkoutFiles },
    });
    expect(byTest(plan, "cart").exam).toBeUndefined();
    // Without git's list, the same file is a change of the seed.
    const all = await loadPlan({ cwd: checkout, projectRoot: checkout, paths: ["evals"], exam });
    expect(byTest(all, "cart").exam?.changes).toEqual(["seed"]);
  });
});

describe("a path of the exam that leaves the repository", () => {
  it("is read where the checkout would read it, not beside the exam's folder", async () => {
    // before: resolved against the exam's folder, where nothing is: "seed folder ... does not exist".
    const parent = tempDir("evalgate-exam-parent-");
    const checkout = path.join(parent, "repo");
    const base = path.join(tempDir("evalgate-exam-base-"), "deeper", "tree");
    const files = { "evals/x.eval.yaml": BASE_EVAL.replace("path: ../project", "path: ../../shared") };
    writeFiles(checkout, files);
    writeFiles(base, files);
    writeFiles(parent, { "shared/app.js": "1\n" });
    for (const dir of [checkout, base])
      writeFiles(dir, {
        "evals/agent.sh": "#!/bin/sh\n",
        "evals/check.js": "",
        "evals/tasks/cart.md": "x",
        "evals/fixes/cart.patch": "",
        "evals/verifiers/cart.test.js": "",
        "evals/cases/more.yaml": BASE["evals/cases/more.yaml"]!,
      });
    executable(checkout);
    const exam = { root: base, sha: "d".repeat(40), ref: "main", label: "the base commit ddddddd" };
    const plan = await loadPlan({ cwd: checkout, projectRoot: checkout, paths: ["evals"], exam });
    expect(byTest(plan, "cart").test.workspace.seed).toEqual({
      kind: "path",
      path: path.join(parent, "shared"),
    });
    expect(byTest(plan, "cart").exam).toBeUndefined();
  });
});
