/**
 * sandbox: bwrap, for real: the agent writes its workspace and HOME, and nothing else of the
 * machine; it cannot read the repository (so hidden verifiers stay hidden) or another attempt's
 * folder; it cannot reach a server on 127.0.0.1 unless its target sets network: true. When
 * bubblewrap is missing or cannot create namespaces, the run stops before anything runs, saying so.
 */

import { chmodSync, existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import * as tar from "tar";
import { afterAll, describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { gitRepo, readJsonl, runCli, runCliAsync, sh, tempDir, writeFiles } from "../helpers.js";

const check = await checkBwrap();
if (!check.ok) {
  console.warn(`SKIPPED the bubblewrap sandbox tests: ${check.message} (.ci/run installs bubblewrap)`);
}

const PROBE = `#!/usr/bin/env node
import fs from "node:fs";
import net from "node:net";
const env = process.env;
const attempt = (label, f) => {
  try {
    const r = f();
    console.log(label + ": ok" + (r === undefined ? "" : " " + r));
  } catch (e) {
    console.log(label + ": " + e.code);
  }
};
attempt("workspace", () => fs.writeFileSync("done-" + env.EVALGATE_ATTEMPT + ".txt", "x\\n"));
attempt("home", () => fs.writeFileSync(env.HOME + "/h.txt", "x"));
attempt("own program", () => fs.appendFileSync(process.argv[1], "// changed\\n"));
attempt("system", () => fs.writeFileSync("/usr/evalgate-leak.txt", "x"));
attempt("outside", () => fs.writeFileSync(env.OUTSIDE + "/leak-" + env.EVALGATE_ATTEMPT + ".txt", "x"));
attempt("repository", () => fs.readFileSync(env.REPO + "/verifiers/secret.test.js", "utf8"));
attempt("runner home", () => fs.readFileSync(env.REAL_HOME + "/.npmrc", "utf8"));
attempt("other attempts", () => fs.readdirSync("../..").join(","));
const s = net.connect(Number(env.PORT), "127.0.0.1");
s.setTimeout(5000, () => { console.log("network: timeout"); s.destroy(); });
s.on("connect", () => { s.end("GET /from-agent HTTP/1.0\\r\\n\\r\\n"); console.log("network: connected"); });
s.on("error", (e) => console.log("network: " + e.code));
`;

describe.skipIf(!check.ok)("sandbox: bwrap", async () => {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;

  const dir = tempDir();
  const outside = tempDir();
  // A runner's home holds credentials; the agent has a HOME of its own and cannot read this one.
  const realHome = tempDir();
  writeFiles(realHome, { ".npmrc": "//registry.npmjs.org/:_authToken=npm_secret\n" });
  writeFiles(dir, {
    "project/a.txt": "a\n",
    "agents/probe.mjs": PROBE,
    "verifiers/secret.test.js": "hidden\n",
    "s.eval.yaml": `name: boxed
targets:
  - name: offline
    provider: command
    command: ["./agents/probe.mjs"]
    sandbox: bwrap
    env_passthrough: [OUTSIDE, REPO, PORT, REAL_HOME]
  - name: online
    provider: command
    command: ["./agents/probe.mjs"]
    sandbox: { type: bwrap, network: true }
    env_passthrough: [OUTSIDE, REPO, PORT, REAL_HOME]
repeat: 2
concurrency: 2
workspace:
  seed: { path: project }
  verifiers: [{ from: verifiers/secret.test.js, to: checks/secret.test.js }]
tests:
  - { id: t, instruction: x, scorers: [{ type: file, path: checks/secret.test.js, contains: hidden }] }
`,
  });
  chmodSync(path.join(dir, "agents/probe.mjs"), 0o755);
  const out = path.join(dir, "bundle");
  const result = await runCliAsync(["run", ".", "--out", out], dir, {
    OUTSIDE: outside,
    REPO: dir,
    PORT: String(port),
    REAL_HOME: realHome,
  });
  if (result.code > 1) console.error(result.stderr);
  const rows = readJsonl<{ target: string; runs: { dir: string; status: string }[] }>(
    path.join(out, "index.jsonl"),
  );
  const logOf = (target: string, n: number) => {
    const text = readFileSync(
      path.join(out, rows.find((r) => r.target === target)!.runs[n]!.dir, "agent.log"),
      "utf8",
    );
    return Object.fromEntries(
      text
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]),
    );
  };

  it("lets the agent write its workspace and HOME only", () => {
    expect(result.stderr).toBe("");
    for (const target of ["offline", "online"]) {
      for (const n of [0, 1]) {
        const log = logOf(target, n);
        expect(log.workspace).toBe("ok");
        expect(log.home).toBe("ok");
        // Refused by the read-only mount; while the other attempt is exec'ing the same script the
        // kernel may refuse it first as a busy text file. Either way nothing was written.
        expect(["EROFS", "ETXTBSY"]).toContain(log["own program"]);
        expect(log.system).toBe("EROFS");
        expect(log["runner home"]).toBe("ENOENT");
      }
    }
    // Whatever the agent wrote elsewhere stayed inside the sandbox.
    expect(existsSync(path.join(outside, "leak-1.txt"))).toBe(false);
    expect(existsSync(path.join(outside, "leak-2.txt"))).toBe(false);
    expect(existsSync("/usr/evalgate-leak.txt")).toBe(false);
    expect(readFileSync(path.join(dir, "agents/probe.mjs"), "utf8")).toBe(PROBE);
    expect(rows.flatMap((r) => r.runs.map((x) => x.status))).toEqual([
      "passed",
      "passed",
      "passed",
      "passed",
    ]);
  });

  it("hides the repository (and its verifiers) and the other attempts", () => {
    for (const n of [0, 1]) {
      const log = logOf("offline", n);
      expect(log.repository).toBe("ENOENT");
      // The attempt's own folder is all there is of the attempts.
      expect(log["other attempts"]).toBe(`ok run-${n + 1}`);
    }
  });

  it("cuts the network off unless the target sets network: true", () => {
    expect(logOf("offline", 0).network).toMatch(/^(ECONNREFUSED|ENETUNREACH)$/);
    expect(logOf("online", 0).network).toBe("connected");
    expect(hits.filter((h) => h === "/from-agent").length).toBe(2);
  });
});

describe("sandbox: bwrap without a usable bubblewrap", () => {
  const dir = tempDir();
  writeFiles(dir, {
    "project/a": "",
    "agent.sh": "#!/bin/sh\ntouch ran\n",
    "s.eval.yaml": `targets: [{ name: boxed, provider: command, command: ["./agent.sh"], sandbox: bwrap }]
workspace: { seed: { path: project } }
tests:
  - { id: t, instruction: x, scorers: [{ type: file, path: ran }] }
`,
    // What bubblewrap prints where the kernel refuses unprivileged user namespaces.
    "fake-bwrap": `#!/bin/sh
echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2
exit 1
`,
  });
  chmodSync(path.join(dir, "agent.sh"), 0o755);
  chmodSync(path.join(dir, "fake-bwrap"), 0o755);

  it("stops before anything runs when bubblewrap is not installed", () => {
    const r = runCli(["run", ".", "--out", "b1"], dir, { PATH: "/nonexistent", EVALGATE_BWRAP: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "evalgate: target boxed uses sandbox: bwrap, but bubblewrap (bwrap) is not installed on this runner: install it (Debian/Ubuntu: apt-get install bubblewrap)",
    );
    expect(existsSync(path.join(dir, "b1"))).toBe(false);
  });

  it("stops before anything runs when bubblewrap cannot create namespaces, saying why", () => {
    const r = runCli(["run", ".", "--out", "b2"], dir, { EVALGATE_BWRAP: path.join(dir, "fake-bwrap") });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "target boxed uses sandbox: bwrap, but bubblewrap cannot create namespaces on this runner",
    );
    expect(r.stderr).toContain("No permissions to creating new namespace");
    expect(r.stderr).toContain("kernel.apparmor_restrict_unprivileged_userns=0");
    expect(existsSync(path.join(dir, "b2"))).toBe(false);
  });

  it("refuses sandbox on a target that runs no agent program, and a read_only folder that is missing", () => {
    const bad = tempDir();
    writeFiles(bad, {
      "project/a": "",
      "s.eval.yaml": `targets:
  - { name: ref, provider: noop, sandbox: bwrap }
  - { name: c, provider: command, command: ["true"], sandbox: { type: bwrap, read_only: [tools] } }
workspace: { seed: { path: project } }
tests:
  - { id: t, instruction: x, scorers: [{ type: command, run: "true" }] }
`,
    });
    const r = runCli(["validate", "."], bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('s.eval.yaml:2: targets[0].sandbox: provider "noop" runs no agent program');
    expect(r.stderr).toContain("s.eval.yaml:3: targets[1].sandbox.read_only[0]: folder tools does not exist");
  });
});

/**
 * sandbox: bwrap with a git seed's subdir and with an archive seed: the agent starts in the
 * subfolder but may write the whole workspace (the repository root), so a write outside the
 * subfolder is captured and graded as without the sandbox; nothing outside the attempt is writable.
 */
describe.skipIf(!check.ok)("sandbox: bwrap with git and archive seeds", async () => {
  const work = gitRepo({ "README.md": "root\n", "services/cart/cart.js": "broken\n" });
  const remote = path.join(tempDir("evalgate-remote-"), "shop.git");
  sh(`git clone -q --bare ${work} ${remote}`, "/tmp");
  const dir = tempDir();
  const outside = tempDir();
  const src = tempDir();
  writeFiles(src, { "app.txt": "broken\n", "lib/util.sh": "echo util\n" });
  sh("mkdir -p fixtures", dir);
  await tar.create({ gzip: true, file: path.join(dir, "fixtures/app.tar.gz"), cwd: src }, ["."]);
  const agent = `pwd > where.txt; echo fixed > cart.js; echo root > ../../ROOT.md; echo fixed > app.txt 2>/dev/null; echo x > "$OUTSIDE/leak.txt" 2>/dev/null; true`;
  writeFiles(dir, {
    "b.eval.yaml": `targets:
  - { name: boxed, provider: command, command: '${agent}', sandbox: bwrap, env_passthrough: [OUTSIDE] }
tests:
  - id: monorepo
    instruction: Fix the cart.
    workspace: { seed: { git: { url: "file://${remote}", subdir: services/cart } } }
    scorers:
      - { name: cart, type: file, path: services/cart/cart.js, contains: fixed }
      - { name: root, type: file, path: ROOT.md, contains: root }
  - id: archive
    instruction: Fix app.txt.
    workspace: { seed: { archive: fixtures/app.tar.gz } }
    scorers:
      - { name: app, type: file, path: app.txt, contains: fixed }
      - { name: lib, type: file, path: lib/util.sh }
`,
  });
  const out = path.join(dir, "bundle");
  const result = await runCliAsync(["run", ".", "--out", out], dir, { OUTSIDE: outside });
  const rows = readJsonl<{ test_id: string; runs: { dir: string; status: string }[] }>(
    path.join(out, "index.jsonl"),
  );
  const diffOf = (id: string) =>
    readFileSync(path.join(out, rows.find((r) => r.test_id === id)!.runs[0]!.dir, "diff.patch"), "utf8");

  it("runs the agent in the subfolder and captures its writes at the repository root", () => {
    expect(result.stderr).toBe("");
    expect(rows.map((r) => r.runs[0]!.status)).toEqual(["passed", "passed"]);
    const diff = diffOf("monorepo");
    expect(diff).toMatch(/\+\+\+ b\/services\/cart\/where\.txt\n@@ .* @@\n\+\S*\/ws\/services\/cart\n/);
    expect(diff).toContain("+++ b/services/cart/cart.js");
    expect(diff).toContain("+++ b/ROOT.md");
  });

  it("runs on an archive seed, with the workspace writable and the rest of the machine not", () => {
    const diff = diffOf("archive");
    expect(diff).toContain("-broken\n+fixed\n");
    expect(existsSync(path.join(outside, "leak.txt"))).toBe(false);
  });
});

/**
 * An agent kept beside its eval file has that folder mounted as its own program's, and with it the
 * answer key: verifiers, reference patches, and the bundle that holds other attempts' diffs.
 */
describe.skipIf(!check.ok)("sandbox: bwrap with the agent beside its eval file", () => {
  it("masks the verifiers, the reference patches and the bundle, and shows the rest", async () => {
    const dir = tempDir();
    const agent = `#!/bin/sh
echo "verifier:[$(cat "$1/verifiers/secret.test.js" 2>&1)]"
echo "verifiers:[$(ls -A "$1/verifiers" 2>&1)]"
echo "reference:[$(cat "$1/fixes/other.patch" 2>&1)]"
echo "bundle:[$(ls -A "$1/bundle" 2>&1)]"
echo "notes:[$(cat "$1/notes.txt" 2>&1)]"
echo fixed > a.txt
`;
    writeFiles(dir, {
      "agent.sh": agent,
      "notes.txt": "readable\n",
      "project/a.txt": "broken\n",
      "verifiers/secret.test.js": "the hidden test\n",
      "fixes/fix.patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-broken\n+fixed\n",
      "fixes/other.patch": "the other test's answer\n",
      "x.eval.yaml": `targets:
  - { name: reference, provider: reference }
  - { name: boxed, provider: command, command: ["{EVAL_DIR}/agent.sh", "{EVAL_DIR}"], sandbox: bwrap }
concurrency: 1
workspace:
  seed: { path: project }
  verifiers: [{ from: verifiers, to: tests }]
tests:
  - { id: one, instruction: Fix a.txt., reference: fixes/fix.patch, scorers: [{ type: file, path: a.txt, contains: fixed }] }
  - { id: two, instruction: Fix a.txt., reference: fixes/other.patch, targets: [boxed], scorers: [{ type: file, path: a.txt, contains: fixed }] }
`,
    });
    chmodSync(path.join(dir, "agent.sh"), 0o755);
    const out = path.join(dir, "bundle");
    const result = await runCliAsync(["run", ".", "--out", out], dir);
    expect(result.stderr).toBe("");
    const rows = readJsonl<{ test_id: string; target: string; runs: { dir: string; status: string }[] }>(
      path.join(out, "index.jsonl"),
    );
    const boxed = rows.find((r) => r.test_id === "one" && r.target === "boxed")!;
    expect(boxed.runs[0]!.status).toBe("passed");
    const log = readFileSync(path.join(out, boxed.runs[0]!.dir, "agent.log"), "utf8");
    // The run reads the same files fine; the agent sees an empty folder or an unreadable file.
    expect(log).not.toContain("the hidden test");
    expect(log).toContain("verifiers:[]");
    expect(log).not.toContain("the other test's answer");
    expect(log).toMatch(/reference:\[cat: .*Permission denied\]/);
    // The reference target ran first (concurrency 1), so the bundle already held its evidence.
    expect(log).toContain("bundle:[]");
    expect(log).toContain("notes:[readable]");
  });
});

/**
 * Without a sandbox an agent runs as evalgate's user and can read evalgate's own environment in
 * /proc (docs/isolation.md: The agent's environment). Under bwrap it is in a PID namespace of its own: walking
 * up its parents, it finds no process of the runner.
 */
describe.skipIf(!check.ok)("sandbox: bwrap hides evalgate's own process", () => {
  const RUNNER_TOKEN = "ghs_runnerTokenInEvalgatesEnv_0123";
  const dir = tempDir();
  writeFiles(dir, {
    "project/a.txt": "a\n",
    "walk.sh": `#!/bin/sh
p=$$; n=0
while [ "$p" -gt 0 ] 2>/dev/null; do
  n=$((n+1))
  tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -q '^GITHUB_TOKEN=' && echo "token in the environment of process $p"
  p=$(awk '/^PPid:/{print $2}' /proc/$p/status)
done
echo "walked $n processes"
`,
    "w.eval.yaml": `targets: [{ name: boxed, provider: command, command: ["sh", "{EVAL_DIR}/walk.sh"], sandbox: { type: bwrap, read_only: ["."] } }]
workspace: { seed: { path: project } }
tests:
  - { id: t, instruction: x, scorers: [{ type: command, run: "true" }] }
`,
  });
  const out = path.join(dir, "bundle");
  const result = runCli(["run", ".", "--out", out], dir, { GITHUB_TOKEN: RUNNER_TOKEN });

  it("lets the agent see only its own processes, none with the runner's variables", () => {
    expect(result.stderr).toBe("");
    const row = readJsonl<{ runs: { dir: string }[] }>(path.join(out, "index.jsonl"))[0]!;
    const log = readFileSync(path.join(out, row.runs[0]!.dir, "agent.log"), "utf8");
    expect(log).toMatch(/^walked [1-3] processes$/m);
    expect(log).not.toContain("token in the environment");
  });
});
