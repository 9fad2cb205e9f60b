/**
 * One sandbox for everything that runs the agent's code (issue 26, point 2). The agent leaves code
 * in its workspace that a scorer runs (a test imports it): under the default isolation that code
 * cannot reach the network (unless the scorer says `network: true`), read the repository's `.git`
 * or the bundle, or write outside the workspace; setup (third-party install scripts) writes only the
 * start tree and has the network unless `network: false`. Before: scorers and setup ran as the
 * runner's user with the runner's files and network, which the same run at `EVALGATE_ISOLATION=
 * subreaper` still shows (the threat model's "no" for that level).
 *
 * A tests scorer's report: the agent's code writes a passing report at the name the eval file gives
 * (`report: junit.xml`) after the real one was written; read from the workspace it passes, read from
 * `{REPORT_FILE}` (a fresh path outside the workspace) it does not.
 */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { readJsonl, runCliAsync, sh, tempDir, writeFiles } from "../helpers.js";

const bwrap = await checkBwrap();
if (!bwrap.ok)
  console.warn(`SKIPPED the scorer sandbox tests: ${bwrap.message} (.ci/run installs bubblewrap)`);

/** What the agent leaves: a module its test imports, which tries everything it should not. */
const PROBE = `import fs from "node:fs";
import net from "node:net";
const env = process.env;
const tag = process.argv[2];
const attempt = (label, f) => {
  try {
    const r = f();
    console.log(label + ": ok" + (r === undefined ? "" : " " + r));
  } catch (e) {
    console.log(label + ": " + e.code);
  }
};
attempt("workspace", () => fs.writeFileSync("written-by-" + tag, "x"));
attempt("outside", () => fs.writeFileSync(env.OUTSIDE + "/from-" + tag, "x"));
attempt("repository write", () => fs.writeFileSync(env.REPO + "/planted-by-" + tag, "x"));
attempt("repository git", () => fs.readFileSync(env.REPO + "/.git/HEAD", "utf8").trim());
attempt("bundle", () => fs.readdirSync(env.BUNDLE).length);
attempt("start trees", () => fs.readdirSync(env.WORK + "/baselines").length);
await new Promise((done) => {
  const s = net.connect(Number(env.PORT), "127.0.0.1");
  s.setTimeout(5000, () => { console.log("network: timeout"); s.destroy(); done(); });
  s.on("connect", () => { s.end("GET /" + tag + " HTTP/1.0\\r\\n\\r\\n"); console.log("network: connected"); done(); });
  s.on("error", (e) => { console.log("network: " + e.code); done(); });
});
`;

const AGENT = `#!/bin/sh
cat > probe.mjs <<'EOF'
${PROBE}EOF
# The agent's code is wrong (its test fails), and its teardown hook writes a passing report where
# the eval file says the report goes.
echo 'exit 1' > lib.sh
echo '<testsuite><testcase name="works"/></testsuite>' > pass.xml
echo 'cp pass.xml junit.xml' > teardown.sh
`;

/** The eval's own test runner (a hidden verifier): runs the agent's code, writes the report to $1. */
const RUNNER = `#!/bin/sh
if sh ./lib.sh; then t='<testcase name="works"/>'; else t='<testcase name="works"><failure message="lib failed"/></testcase>'; fi
printf '<testsuite>%s</testsuite>\\n' "$t" > "$1"
sh ./teardown.sh
exit 0
`;

const SETUP = `#!/bin/sh
cp {EVAL_DIR}/probe.mjs . 2>/dev/null
node "$1" setup
`;

const PASS = ["OUTSIDE", "REPO", "BUNDLE", "WORK", "PORT"];

function project(): string {
  const dir = tempDir("evalgate-box-");
  const pass = `env_passthrough: [${PASS.join(", ")}]`;
  writeFiles(dir, {
    "project/app.txt": "app\n",
    "agents/agent.sh": AGENT,
    "verifiers/run.sh": RUNNER,
    "setup/probe.mjs": PROBE,
    "setup/setup.sh": SETUP,
    "s.eval.yaml": `targets: [{ name: agent, provider: command, command: ["./agents/agent.sh"] }]
workspace:
  seed: { path: project }
  verifiers: [{ from: verifiers, to: checks }]
tests:
  - id: box
    instruction: x
    workspace:
      seed: { path: project }
      setup: { command: "node {EVAL_DIR}/setup/probe.mjs setup-online", ${pass} }
    scorers:
      - { name: offline, type: command, run: "node probe.mjs scorer-offline", ${pass} }
      - { name: online, type: command, run: "node probe.mjs scorer-online", network: true, ${pass} }
  - id: quiet-setup
    instruction: x
    workspace:
      seed: { path: project }
      setup: { command: "node {EVAL_DIR}/setup/probe.mjs setup-offline", network: false, ${pass} }
    scorers: [{ type: command, run: "true" }]
  - id: report
    instruction: x
    scorers:
      - { name: legacy, type: tests, run: "sh checks/run.sh junit.xml", report: junit.xml }
      - { name: fresh, type: tests, run: "sh checks/run.sh {REPORT_FILE}" }
`,
  });
  chmodSync(path.join(dir, "agents/agent.sh"), 0o755);
  sh("git init -q -b main . && git add -A && git commit -qm init", dir);
  return dir;
}

/** "label: value" lines of a log. */
function fields(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .trim()
      .split("\n")
      .filter((l) => /^[a-z ]+: /.test(l))
      .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]),
  );
}

describe.skipIf(!bwrap.ok)("setup and scorers run the agent's code contained", async () => {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  const port = String((server.address() as AddressInfo).port);

  async function run(level: "bwrap" | "subreaper") {
    const dir = project();
    const outside = tempDir("evalgate-outside-");
    const out = path.join(dir, "bundle");
    const work = path.join(dir, "work");
    const res = await runCliAsync(
      ["run", "s.eval.yaml", "--out", out, "--work-dir", work],
      dir,
      {
        OUTSIDE: outside,
        REPO: dir,
        BUNDLE: out,
        WORK: work,
        PORT: port,
        ...(level === "bwrap" ? {} : { EVALGATE_ISOLATION: level }),
      },
      300_000,
    );
    expect(res.code, res.stderr).toBeLessThan(2);
    const rows = readJsonl<{ test_id: string; runs: { dir: string }[] }>(path.join(out, "index.jsonl"));
    const attempt = (id: string) => path.join(out, rows.find((r) => r.test_id === id)!.runs[0]!.dir);
    const read = (id: string, file: string) => fields(readFileSync(path.join(attempt(id), file), "utf8"));
    const grading = (id: string) =>
      JSON.parse(readFileSync(path.join(attempt(id), "grading.json"), "utf8")) as {
        scorers: { name: string; state: string; passed: boolean | null; reason: string }[];
      };
    return { dir, outside, read, grading };
  }

  it("default: the scorers' and setup's code reaches nothing of the run or the machine, and the network only when the eval says so", async () => {
    const before = hits.length;
    const r = await run("bwrap");
    const offline = r.read("box", "scorers/offline.log");
    const online = r.read("box", "scorers/online.log");
    const setup = r.read("box", "setup.log");
    const quiet = r.read("quiet-setup", "setup.log");
    for (const log of [offline, online]) {
      expect(log.workspace).toBe("ok");
      expect(log.outside).toBe("EROFS");
      expect(log["repository write"]).toBe("EROFS");
      // The repository is shown (the eval file's folder), its .git is not.
      expect(log["repository git"]).toBe("ENOENT");
      expect(log.bundle).toMatch(/^(ENOENT|ok 0)$/);
      // The run's work folder shows the way to the process's own folders, nothing else.
      expect(log["start trees"]).toBe("ENOENT");
    }
    expect(offline.network).toMatch(/^(ECONNREFUSED|ENETUNREACH)$/);
    expect(online.network).toBe("connected");
    expect(setup.network).toBe("connected");
    expect(quiet.network).toMatch(/^(ECONNREFUSED|ENETUNREACH)$/);
    for (const log of [setup, quiet]) {
      expect(log.workspace).toBe("ok");
      expect(log.outside).toBe("EROFS");
      expect(log["repository write"]).toBe("EROFS");
      expect(log["repository git"]).toBe("ENOENT");
    }
    expect(hits.slice(before).sort()).toEqual(["/scorer-online", "/setup-online"]);
    expect(existsSync(path.join(r.outside, "from-scorer-offline"))).toBe(false);
    expect(existsSync(path.join(r.dir, "planted-by-scorer-offline"))).toBe(false);
    expect(existsSync(path.join(r.dir, "planted-by-setup-online"))).toBe(false);
  }, 360_000);

  it("the report: read from {REPORT_FILE}, the agent's planted pass is not seen; from report: junit.xml it is", async () => {
    const r = await run("bwrap");
    const g = r.grading("report");
    const legacy = g.scorers.find((s) => s.name === "legacy")!;
    const fresh = g.scorers.find((s) => s.name === "fresh")!;
    // What report: in the workspace leaves open: the code under test wrote the report read.
    expect(legacy.passed).toBe(true);
    expect(fresh.state).toBe("complete");
    expect(fresh.passed).toBe(false);
    expect(fresh.reason).toContain("lib failed");
  }, 360_000);

  it("subreaper (no bubblewrap): the same code reaches all of it, as the threat model says", async () => {
    const before = hits.length;
    const r = await run("subreaper");
    const offline = r.read("box", "scorers/offline.log");
    const quiet = r.read("quiet-setup", "setup.log");
    expect(offline.outside).toBe("ok");
    expect(offline["repository write"]).toBe("ok");
    expect(offline["repository git"]).toMatch(/^ok ref: refs\/heads\/main$/);
    expect(offline.bundle).toMatch(/^ok [1-9]/);
    expect(offline["start trees"]).toMatch(/^ok [1-9]/);
    expect(offline.network).toBe("connected");
    expect(quiet.network).toBe("connected");
    expect(quiet.outside).toBe("ok");
    expect(hits.slice(before)).toContain("/scorer-offline");
  }, 360_000);
});
