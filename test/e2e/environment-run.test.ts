/**
 * Scenario environments in a run (issue 30, phase 2): a case with `environment:` runs its setup, its
 * `command` agent and its command and tests scorers in its image, the workspace mounted at the
 * image's workdir, the hidden verifiers there only after the agent, nothing of the runner's checkout
 * but the eval file's folder (read-only, the answer key masked), and the image's digest in the
 * bundle. `resources:` stops a memory hog and a fork bomb as the agent's failure, named after the
 * limit, in a container and on the host, and the run goes on.
 *
 * Before: `evalgate run` refused every such case ("validates but cannot run yet"); with the refusal
 * gone but nothing wired, each process would have run on the runner, where `exam-tool` (the image's
 * own program) does not exist and the workspace is not at /app.
 *
 * One image per file: the busybox image (test/environment/images.ts) plus `exam-tool`, built by the
 * run itself from the eval's Containerfile (the engine's layer cache makes later builds instant).
 */
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { busyboxImage, testEngine, toolContext } from "../environment/images.js";
import { readJson, readJsonl, runCliAsync, tempDir, writeFiles } from "../helpers.js";

const { engine } = await testEngine();

interface Row {
  test_id: string;
  target: string;
  verdict: string;
  runs: { dir: string }[];
}

/** The folder of a test's first attempt in a bundle. */
function runDir(out: string, testId: string): string {
  const row = readJsonl<Row>(path.join(out, "index.jsonl")).find((r) => r.test_id === testId);
  expect(row).toBeDefined();
  return path.join(out, row!.runs[0]!.dir);
}

/** What the agent does in the image: uses its program, and writes down what it can see. */
const AGENT = `#!/bin/sh
exam-tool agent > tool.txt
pwd > pwd.txt
cat setup.txt > setup-seen.txt
if [ -e verify.sh ]; then echo present; else echo absent; fi > verifier-seen.txt
if [ -e "$CHECKOUT/checkout-only.txt" ]; then echo visible; else echo hidden; fi > checkout-seen.txt
if [ -e "$EVALS/answer/verify.sh" ] && cat "$EVALS/answer/verify.sh" >/dev/null 2>&1 && [ -s "$EVALS/answer/verify.sh" ]; then echo readable; else echo masked; fi > answer-seen.txt
`;

/** The hidden verifier: runs in the image after the agent; a junit report at $1. */
const VERIFY = `#!/bin/sh
exam-tool verify >/dev/null || exit 3
if grep -q "exam-tool ran: agent" tool.txt && [ "$(cat pwd.txt)" = /app ]; then
  t='<testcase name="in-image"/>'
else
  t='<testcase name="in-image"><failure message="not in the image"/></testcase>'
fi
printf '<testsuite>%s</testsuite>\\n' "$t" > "$1"
`;

describe.skipIf(!engine)("a case in an environment (real engine)", () => {
  let dir: string;
  let out: string;
  let run: Awaited<ReturnType<typeof runCliAsync>>;

  beforeAll(async () => {
    const base = await busyboxImage(engine!);
    dir = tempDir("evalgate-envrun-");
    mkdirSync(path.join(dir, "evals", "env"), { recursive: true });
    toolContext(base, path.join(dir, "evals", "env"));
    writeFiles(dir, {
      "checkout-only.txt": "the runner's checkout\n",
      "evals/project/main.txt": "start\n",
      "evals/agent.sh": AGENT,
      "evals/answer/verify.sh": VERIFY,
      "evals/e.eval.yaml": `name: environments
environment: { build: { dockerfile: env/Containerfile } }
targets:
  - name: in-image
    provider: command
    command: ["sh", "{EVAL_DIR}/agent.sh"]
    env: { CHECKOUT: "${dir}", EVALS: "${path.join(dir, "evals")}" }
workspace:
  seed: { path: project }
  setup: { command: "exam-tool setup > setup.txt && pwd >> setup.txt" }
  verifiers: [{ from: answer/verify.sh, to: verify.sh }]
tests:
  - id: runs-in-image
    instruction: use the image
    scorers:
      - { name: tool, type: command, run: "exam-tool score && test -f tool.txt && test -f verify.sh" }
      - { name: suite, type: tests, run: "sh verify.sh {REPORT_FILE}" }
`,
    });
    out = path.join(dir, "out");
    run = await runCliAsync(["run", "evals", "--out", out, "--work-dir", path.join(dir, "work")], dir);
    if (!run.stdout.includes("index.jsonl") && run.code > 1) console.error(run.stdout, run.stderr);
  }, 600_000);

  it("runs setup, the agent and its scorers in the image, the workspace at its workdir", () => {
    expect(run.stderr).not.toMatch(/cannot run yet/);
    const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
    expect(rows.map((r) => [r.test_id, r.verdict])).toEqual([["runs-in-image", "pass"]]);
    const result = readJson<{ status: string; message: string | null }>(
      path.join(runDir(out, "runs-in-image"), "result.json"),
    );
    expect([result.status, result.message]).toEqual(["passed", null]);
    const patch = readFileSync(path.join(runDir(out, "runs-in-image"), "diff.patch"), "utf8");
    // The image's program ran the agent's command and setup, both at /app.
    expect(patch).toMatch(/\+exam-tool ran: agent/);
    expect(patch).toMatch(/\+\/app\n/);
    expect(patch).toMatch(/\+exam-tool ran: setup\n\+\/app/);
  });

  it("shows the agent neither the verifiers, nor the runner's checkout, nor the answer key", () => {
    const patch = readFileSync(path.join(runDir(out, "runs-in-image"), "diff.patch"), "utf8");
    const seen = (file: string) => new RegExp(`${file}\\n[^]*?@@[^\\n]*\\n\\+(\\w+)`).exec(patch)?.[1];
    expect(seen("verifier-seen.txt")).toBe("absent");
    expect(seen("checkout-seen.txt")).toBe("hidden");
    expect(seen("answer-seen.txt")).toBe("masked");
  });

  it("records the image by digest for the case and each attempt", () => {
    const run1 = runDir(out, "runs-in-image");
    const c = path.dirname(run1);
    const summary = readJson<{ environment: Record<string, string> }>(path.join(c, "summary.json"));
    expect(summary.environment).toMatchObject({
      image: expect.stringMatching(/^localhost\/evalgate-env\/env:/),
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      workdir: "/app",
      engine: engine!.kind,
    });
    const attempt = readJson<{ environment: Record<string, string> }>(path.join(run1, "result.json"));
    expect(attempt.environment).toEqual(summary.environment);
  });
});
