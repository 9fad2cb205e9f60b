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
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeCgroups } from "../../src/environment/cgroup.js";
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

  it("says in the run's isolation that the agent ran in a container, by engine and digest", () => {
    // before: summary.json's isolation named only the runner's level (bubblewrap's facts) for the
    // target, as if its agent had run on the runner.
    const run1 = runDir(out, "runs-in-image");
    const env = readJson<{ environment: Record<string, string> }>(path.join(run1, "result.json")).environment;
    const summary = readJson<{ isolation: Record<string, unknown> }>(path.join(out, "summary.json"));
    expect(summary.isolation).toEqual({
      level: null,
      reason: "every agent runs in its case's container (isolation.containers)",
      targets: [],
      containers: [
        { target: "in-image", engine: engine!.kind, image: env!.image, digest: env!.digest, cases: 1 },
      ],
    });
  });
});

describe.skipIf(!engine)("resources stop an attempt, not the run (real engine)", () => {
  const cgroups = probeCgroups();
  let out: string;
  let run: Awaited<ReturnType<typeof runCliAsync>>;

  beforeAll(async () => {
    const base = await busyboxImage(engine!);
    const dir = tempDir("evalgate-envres-");
    mkdirSync(path.join(dir, "env"), { recursive: true });
    toolContext(base, path.join(dir, "env"));
    const env = "environment: { build: { dockerfile: env/Containerfile } }";
    writeFiles(dir, {
      "project/main.txt": "start\n",
      "agent.sh": `case "$EVALGATE_TEST_ID" in
  hog|host-hog) x=a; while true; do x="$x$x"; done ;;
  bomb) sleep 60 & held=$!; bomb() { bomb | bomb & }; bomb; wait $held ;;
  fine) exam-tool fine > fine.txt ;;
esac
`,
      "r.eval.yaml": `name: resources
targets:
  - { name: agent, provider: command, command: ["sh", "{EVAL_DIR}/agent.sh"] }
workspace: { seed: { path: project } }
timeouts: { agent: 20s }
tests:
  - id: hog
    instruction: hog memory in the image
    ${env}
    resources: { memory: 32MiB }
    scorers: [{ name: ran, type: command, run: "true" }]
  - id: bomb
    instruction: fork without end in the image
    ${env}
    resources: { pids: 20 }
    timeout: 5s
    scorers: [{ name: ran, type: command, run: "true" }]
  - id: host-hog
    instruction: hog memory on the host
    resources: { memory: 32MiB }
    scorers: [{ name: ran, type: command, run: "true" }]
  - id: fine
    instruction: stay within the limits
    ${env}
    resources: { memory: 256MiB, pids: 100, cpus: 0.5 }
    scorers: [{ name: ran, type: command, run: "grep -q 'ran: fine' fine.txt" }]
`,
    });
    out = path.join(dir, "out");
    run = await runCliAsync(["run", ".", "--out", out, "--work-dir", path.join(dir, "work")], dir);
    if (!run.stdout.includes("index.jsonl") && run.code > 1) console.error(run.stdout, run.stderr);
  }, 600_000);

  const result = (id: string) =>
    readJson<{
      status: string;
      failure_stage: string | null;
      failure_kind: string | null;
      message: string | null;
      agent: { limit: { kind: string; detail: string } | null };
      resources: { resource: string; by: string | null }[] | null;
    }>(path.join(runDir(out, id), "result.json"));

  it("records a memory hog in the image as the agent's failure at its memory limit", () => {
    // before: the run refused the case; a container without --memory let the hog take the machine.
    const r = result("hog");
    expect([r.status, r.failure_stage, r.failure_kind]).toEqual(["failed", "agent", "memory_limit"]);
    expect(r.agent.limit?.detail).toMatch(/memory limit of 32 MiB/);
    expect(r.resources).toEqual([{ resource: "memory", by: "engine", note: null }]);
  });

  it("records a fork bomb in the image as the agent's failure at its pids limit", () => {
    // The bomb holds the container until its timeout. Before, it ended with a lone `sleep 30` that
    // could not fork: the container was gone before a sample, and on cgroup v1 (refusals counted only
    // in the container's own group) the limit went unnamed, as the CI run of stop 32 saw. The holding
    // sleep starts before the bomb and the shell waits for it with its builtin, so it forks nothing
    // the bomb could starve (a `while :; do sleep 1; done` after it was refused its fork under load).
    const r = result("bomb");
    expect([r.status, r.failure_stage, r.failure_kind]).toEqual(["failed", "agent", "pids_limit"]);
    expect(r.agent.limit?.detail).toMatch(/limit of 20 processes/);
  });

  it.skipIf(typeof cgroups === "string")("stops a memory hog on the host at its cgroup's limit", () => {
    // before: the run refused resources; without them the hog ran until the machine's OOM killer.
    const r = result("host-hog");
    expect([r.status, r.failure_kind]).toEqual(["failed", "memory_limit"]);
    expect(r.resources).toEqual([{ resource: "memory", by: "cgroup", note: null }]);
  });

  it("goes on with the run: a case within its limits passes, the bundle is complete", () => {
    expect(result("fine").status).toBe("passed");
    const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
    expect(rows).toHaveLength(4);
    const summary = readJson<{ resources: Record<string, unknown> }>(
      path.join(path.dirname(runDir(out, "fine")), "summary.json"),
    );
    expect(summary.resources).toMatchObject({ memory_bytes: 256 * 2 ** 20, pids: 100, cpus: 0.5 });
  });

  it("names a target whose cases ran both ways under the runner's level and in its containers", () => {
    const iso = readJson<{
      isolation: { targets: { name: string }[]; containers: { target: string; cases: number }[] };
    }>(path.join(out, "summary.json")).isolation;
    expect(iso.targets.map((t) => t.name)).toEqual(["agent"]);
    expect(iso.containers).toMatchObject([{ target: "agent", engine: engine!.kind, cases: 3 }]);
  });
});

describe.skipIf(!engine)("a target's network allow-list in the image (real engine)", () => {
  const servers: http.Server[] = [];
  const serve = async (text: string) => {
    const s = http.createServer((_, res) => res.end(`${text}\n`));
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    servers.push(s);
    return (s.address() as AddressInfo).port;
  };
  let out: string;
  let other: number;

  beforeAll(async () => {
    const base = await busyboxImage(engine!);
    const dir = tempDir("evalgate-envnet-");
    mkdirSync(path.join(dir, "env"), { recursive: true });
    toolContext(base, path.join(dir, "env"));
    const allowed = await serve("allowed host");
    other = await serve("other host");
    writeFiles(dir, {
      "project/main.txt": "start\n",
      "agent.sh": `wget -q -O- http://127.0.0.1:${allowed}/ > allowed.txt || echo failed > allowed.txt
wget -q -O- http://127.0.0.1:${other}/ > other.txt || echo refused > other.txt
`,
      "n.eval.yaml": `name: network
environment: { build: { dockerfile: env/Containerfile } }
targets:
  - name: listed
    provider: command
    command: ["sh", "{EVAL_DIR}/agent.sh"]
    sandbox: { type: auto, network: { allow: ["127.0.0.1:${allowed}"] } }
workspace: { seed: { path: project } }
tests:
  - id: reach
    instruction: reach what is listed
    scorers:
      - { name: allowed, type: command, run: "grep -q 'allowed host' allowed.txt" }
      - { name: other, type: command, run: "grep -q refused other.txt" }
`,
    });
    out = path.join(dir, "out");
    const run = await runCliAsync(["run", ".", "--out", out, "--work-dir", path.join(dir, "work")], dir);
    if (!run.stdout.includes("index.jsonl") && run.code > 1) console.error(run.stdout, run.stderr);
  }, 600_000);

  afterAll(() => {
    for (const s of servers) s.close();
  });

  it("lets the agent reach the listed host only, and logs what it refused", () => {
    // before: the run refused the case; a container on the engine's default network reached both.
    const r = readJson<{ status: string; message: string | null }>(
      path.join(runDir(out, "reach"), "result.json"),
    );
    expect([r.status, r.message]).toEqual(["passed", null]);
    const log = readFileSync(path.join(runDir(out, "reach"), "agent.log"), "utf8");
    expect(log).toContain(`refused (not on the network allow-list): 127.0.0.1:${other}`);
  });
});

describe.skipIf(!engine)("an agent CLI preset in an environment (real engine)", () => {
  it("is no longer refused before the run: the case goes on to its image", async () => {
    // before: `evalgate run` stopped with exit 2, 'test "preset-in-image" runs in an environment,
    // but target "claude" (provider claude-code) cannot run in an environment yet'. The presets
    // running in images end to end: test/e2e/presets-in-images.test.ts.
    const dir = tempDir("evalgate-envno-");
    writeFiles(dir, {
      "project/main.txt": "start\n",
      "p.eval.yaml": `name: preset
environment: { image: "127.0.0.1:9/evalgate-test/none:1" }
targets: [{ name: claude, provider: claude-code }]
workspace: { seed: { path: project } }
tests:
  - id: preset-in-image
    instruction: anything
    scorers: [{ name: ran, type: command, run: "true" }]
`,
    });
    const out = path.join(dir, "out");
    const r = await runCliAsync(["run", ".", "--out", out, "--work-dir", path.join(dir, "work")], dir);
    expect(r.stderr).not.toMatch(/cannot run in an environment/);
    const result = readJson<{ status: string; failure_kind: string | null; message: string | null }>(
      path.join(runDir(out, "preset-in-image"), "result.json"),
    );
    expect([result.status, result.failure_kind]).toEqual(["error", "setup_error"]);
    expect(result.message).toMatch(/the environment is not ready: cannot pull 127\.0\.0\.1:9/);
  });
});

describe.skipIf(!engine)("an image that cannot be made ready (real engine)", () => {
  it("is the setup error of its case's attempts, and the run's other cases go on", async () => {
    // before: the run refused the case outright; with the refusal gone and no check, its processes
    // would have run on the runner as if the environment were not there.
    const dir = tempDir("evalgate-envbad-");
    writeFiles(dir, {
      "project/main.txt": "start\n",
      "b.eval.yaml": `name: bad-image
targets: [{ name: agent, provider: command, command: ["sh", "-c", "echo done > done.txt"] }]
workspace: { seed: { path: project } }
tests:
  - id: missing-image
    instruction: anything
    environment: { image: "127.0.0.1:9/evalgate-test/none:1" }
    scorers: [{ name: ran, type: command, run: "test -f done.txt" }]
  - id: on-the-host
    instruction: anything
    scorers: [{ name: ran, type: command, run: "test -f done.txt" }]
`,
    });
    const out = path.join(dir, "out");
    await runCliAsync(["run", ".", "--out", out, "--work-dir", path.join(dir, "work")], dir);
    const read = (id: string) =>
      readJson<{ status: string; failure_kind: string | null; message: string | null }>(
        path.join(runDir(out, id), "result.json"),
      );
    const bad = read("missing-image");
    expect([bad.status, bad.failure_kind]).toEqual(["error", "setup_error"]);
    expect(bad.message).toMatch(
      /the environment is not ready: cannot pull 127\.0\.0\.1:9\/evalgate-test\/none:1/,
    );
    expect(read("on-the-host").status).toBe("passed");
  });
});
