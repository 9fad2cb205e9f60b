/**
 * `evalgate run --exam-from REF` and `validate --exam-from REF` (docs/exam.md): the exam read from
 * a commit, the targets from the working tree, as the action reads a pull request's base. Before
 * this change there was no such flag (commander: unknown option, exit 2) and a working tree that
 * weakened a scorer passed its own run.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitRepo, readJson, readJsonl, runCliAsync, sh, tempDir, writeFiles } from "../helpers.js";

const EVAL = `name: demo
targets:
  - { name: agent, provider: command, command: ["sh", "{EVAL_DIR}/agent.sh"] }
workspace: { seed: { empty: true } }
tests:
  - id: hello
    instruction: write hello.txt
    scorers: [{ name: check, type: command, run: "grep -q hello hello.txt" }]
  - id: bye
    instruction: write bye.txt
    scorers: [{ name: check, type: command, run: "grep -q bye bye.txt" }]
`;

/** A committed suite the agent passed; the working tree breaks the agent and weakens hello's scorer. */
function weakenedTree(): { dir: string; base: string } {
  const dir = gitRepo({
    "evals/demo.eval.yaml": EVAL,
    "evals/agent.sh": "echo hello > hello.txt\necho bye > bye.txt\n",
    ".gitignore": ".evalgate/\n",
  });
  const base = sh("git rev-parse HEAD", dir).trim();
  writeFiles(dir, {
    "evals/agent.sh": "echo bye > bye.txt\n",
    "evals/demo.eval.yaml": `${EVAL.replace('run: "grep -q hello hello.txt"', 'run: "true"')}  - id: fresh
    instruction: something new
    scorers: [{ name: check, type: command, run: "false" }]
`,
  });
  return { dir, base };
}

describe("--exam-from", () => {
  it("a working tree that weakens a scorer: the case passes by its own scorer, fails by the commit's", async () => {
    const { dir, base } = weakenedTree();
    const mine = path.join(tempDir(), "own");
    await runCliAsync(["run", "evals", "--out", mine], dir);
    const hello = (file: string) =>
      readJsonl<{ test_id: string; verdict: string }>(file).find((x) => x.test_id === "hello")?.verdict;
    expect(hello(path.join(mine, "index.jsonl"))).toBe("pass");
    const out = path.join(tempDir(), "exam");
    const r = await runCliAsync(["run", "evals", "--exam-from", "HEAD", "--out", out], dir);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(
      `the exam (tests, scorers, verifiers, gate) is read from HEAD (${base.slice(0, 7)})`,
    );
    const rows = readJsonl<{ test_id: string; verdict: string; exam: { status: string } | null }>(
      path.join(out, "index.jsonl"),
    );
    expect(rows.map((x) => `${x.test_id} ${x.verdict} ${x.exam?.status ?? ""}`.trim()).sort()).toEqual([
      "bye pass",
      "fresh fail proposed",
      "hello fail changed",
    ]);
    const summary = readJson<{ gate: { reasons: string[] }; counts: { cases: number } }>(
      path.join(out, "summary.json"),
    );
    // Judged by the commit's scorer; the proposed case is neither counted nor a reason.
    expect(summary.gate.reasons).toEqual([expect.stringMatching(/^demo\/hello on agent: /)]);
    expect(summary.counts.cases).toBe(2);
  });

  it("validate --exam-from lists what the working tree changes, proposes or removes", async () => {
    const { dir } = weakenedTree();
    const r = await runCliAsync(["validate", "evals", "--exam-from", "HEAD"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("  demo/hello: changed: scorer check");
    expect(r.stdout).toContain("  demo/fresh: proposed");
  });

  it("shards read the same exam, and their merge leaves the proposed case out of the gate", async () => {
    const { dir } = weakenedTree();
    // The agent is good again: only the proposed case fails.
    writeFiles(dir, { "evals/agent.sh": "echo hello > hello.txt\necho bye > bye.txt\n" });
    const tmp = tempDir();
    const shards = [1, 2].map((i) => path.join(tmp, `s${i}`));
    for (const [i, out] of shards.entries()) {
      const s = await runCliAsync(
        ["run", "evals", "--exam-from", "HEAD", "--shard", `${i + 1}/2`, "--out", out],
        dir,
      );
      expect(s.code, s.stderr).toBe(0);
    }
    const merged = path.join(tmp, "merged");
    const m = await runCliAsync(["merge", ...shards, "--out", merged], dir);
    expect(m.code, m.stdout + m.stderr).toBe(0);
    const summary = readJson<{ exam: { proposed: number; changed: number }; counts: { cases: number } }>(
      path.join(merged, "summary.json"),
    );
    expect(summary.exam).toMatchObject({ proposed: 1, changed: 1 });
    expect(summary.counts.cases).toBe(2);
  });

  it("a ref the repository cannot resolve or fetch stops the run with the fix", async () => {
    const { dir } = weakenedTree();
    const r = await runCliAsync(["run", "evals", "--exam-from", "no-such-branch"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "the exam cannot be read from no-such-branch: the commit is not in the checkout and could not be fetched from origin. Name a commit or ref the repository has, or fetch it first (git fetch origin <ref>).",
    );
  });
});
