/**
 * What a sandboxed agent can plant for evalgate's own steps, which run after it and outside the
 * sandbox as the runner's user: links out of its attempt folder (to a file of the runner, to a
 * folder outside, to /proc/self/environ, which is evalgate's own environment when evalgate opens
 * it), a workspace swapped for a link, a FIFO where a scorer reads. None of it may make evalgate
 * write, delete or run anything outside the attempt, copy an outside file into the bundle, or hang.
 */
import { chmodSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { filesContaining, readJson, readJsonl, runCliAsync, tempDir, writeFiles } from "../helpers.js";

const check = await checkBwrap();
if (!check.ok) {
  console.warn(`SKIPPED the sandbox escape tests: ${check.message} (.ci/run installs bubblewrap)`);
}

interface Row {
  test_id: string;
  runs: { dir: string; status: string; failure_kind: string | null }[];
}
interface Result {
  status: string;
  warnings?: string[];
  failure_kind: string | null;
  message: string | null;
  tampered?: string[];
}
interface Grading {
  scorers: { name: string; state: string; passed: boolean | null; reason: string }[];
}

// One agent, one trick per test id. The agent runs in its workspace (`ws` of its attempt folder).
const PLANT = `#!/bin/sh
case "$EVALGATE_TEST_ID" in
  swap-ws)
    # The whole workspace becomes a link to a folder outside the attempt.
    cd .. && mv ws ws-agent && ln -s "$OUTSIDE/tree" ws ;;
  attempt-files)
    # Links where evalgate writes its own files in the attempt folder, and where it deletes.
    echo changed > a.txt
    ln -s "$OUTSIDE/victim.txt" ../capture.index
    mkdir -p .h && echo steer > .h/planted
    ln -s "$PWD/.h" ../scorer-home && ln -s "$PWD/.h" ../scorer-tmp
    ln -s "$OUTSIDE/keep" ../home/link
    mkdir ../home/locked && ln -s "$OUTSIDE/keep" ../home/locked/link && chmod 000 ../home/locked ;;
  read-links)
    # Links a scorer would read through: evalgate's environment, a folder outside.
    echo changed > a.txt
    ln -s /proc/self/environ env.txt
    ln -s "$OUTSIDE/src" leak ;;
  report-links)
    # A report folder and a scorer's cwd made links to folders outside.
    echo changed > a.txt
    ln -s "$OUTSIDE/reports" reports
    ln -s "$OUTSIDE/app" app ;;
  hide)
    # New files hidden from git by ignore rules of the agent's own (the rules hide themselves too).
    echo changed > a.txt
    mkdir sub && printf '*\n' > sub/.gitignore && echo cheat > sub/hidden.js
    mkdir sub/build && echo built > sub/build/out.js
    mkdir build && echo built > build/out.js ;;
  fifo)
    # In place of a tracked file (git refuses to add it), and new (git skips it, it stays).
    rm src/main.js && mkfifo src/main.js && mkfifo src/new.js ;;
esac
exit 0
`;

describe.skipIf(!check.ok)("an agent planting links and special files for evalgate's own steps", async () => {
  const dir = tempDir();
  const outside = tempDir("evalgate-outside-");
  writeFiles(outside, {
    "tree/a.txt": "outside a\n",
    "tree/test/keep.test.js": "outside test file\n",
    "tree/secret.txt": "OUTSIDE-SECRET tree\n",
    "victim.txt": "victim\n",
    "keep/file.txt": "keep me\n",
    "src/leak.js": 'console.log("OUTSIDE-SECRET src");\n',
    "reports/r.xml": '<testsuite name="OUTSIDE-SECRET"><testcase name="x"/></testsuite>\n',
    "app/junit.xml": '<testsuite name="OUTSIDE-SECRET"><testcase name="x"/></testsuite>\n',
  });
  writeFiles(dir, {
    "project/a.txt": "a\n",
    "project/.gitignore": "build/\n",
    "project/src/main.js": 'console.log("hi");\n',
    "project/test/t.test.js": "protected\n",
    "verifiers/v.js": "verifier\n",
    "agents/plant.sh": PLANT,
    "e.eval.yaml": `name: escape
targets:
  - { name: planter, provider: command, command: ["./agents/plant.sh"], sandbox: bwrap, env_passthrough: [OUTSIDE] }
concurrency: 2
workspace:
  seed: { path: project }
  protected: ["test/**"]
  verifiers: [{ from: verifiers/v.js, to: checks/v.js }]
tests:
  - id: swap-ws
    instruction: x
    scorers: [{ type: file, path: a.txt }]
  - id: attempt-files
    instruction: x
    scorers:
      - { name: own-home, type: command, run: 'test ! -e "$HOME/planted" && test ! -e "$TMPDIR/planted"' }
  - id: read-links
    instruction: x
    scorers:
      - { name: environ, type: file, path: env.txt, contains: "PATH=" }
      - { name: leak, type: ast-grep, lang: javascript, path: "leak/**/*.js", pattern: console.log($A), expect: absent }
  - id: report-links
    instruction: x
    scorers:
      - { name: glob, type: tests, run: "true", report: "reports/*.xml" }
      - { name: cwd, type: tests, run: "touch ran-here", cwd: app, report: junit.xml }
  - id: hide
    instruction: x
    scorers: [{ name: shape, type: diff, allow: [a.txt] }]
  - id: fifo
    instruction: x
    scorers:
      - { name: fifo, type: ast-grep, lang: javascript, path: src/new.js, pattern: console.log($A), timeout: 5s }
`,
  });
  chmodSync(path.join(dir, "agents/plant.sh"), 0o755);
  const out = path.join(dir, "bundle");
  const work = path.join(dir, "work");
  const result = await runCliAsync(
    ["run", ".", "--out", out, "--work-dir", work],
    dir,
    { OUTSIDE: outside },
    90_000,
  );
  const rows = existsSync(path.join(out, "index.jsonl")) ? readJsonl<Row>(path.join(out, "index.jsonl")) : [];
  const attemptDir = (id: string) => path.join(out, rows.find((r) => r.test_id === id)!.runs[0]!.dir);
  const resultOf = (id: string) => readJson<Result>(path.join(attemptDir(id), "result.json"));
  const scorerOf = (id: string, name: string) =>
    readJson<Grading>(path.join(attemptDir(id), "grading.json")).scorers.find((s) => s.name === name)!;

  it("finishes, and nothing outside the attempt was written, deleted or run in", () => {
    expect(result.code, result.stderr).toBeLessThan(2);
    expect(rows.map((r) => r.test_id).sort()).toEqual([
      "attempt-files",
      "fifo",
      "hide",
      "read-links",
      "report-links",
      "swap-ws",
    ]);
    expect(readFileSync(path.join(outside, "victim.txt"), "utf8")).toBe("victim\n");
    expect(readFileSync(path.join(outside, "keep/file.txt"), "utf8")).toBe("keep me\n");
    expect(readFileSync(path.join(outside, "tree/test/keep.test.js"), "utf8")).toBe("outside test file\n");
    expect(existsSync(path.join(outside, "tree/checks"))).toBe(false);
    expect(existsSync(path.join(outside, "reports/r.xml"))).toBe(true);
    expect(existsSync(path.join(outside, "app/junit.xml"))).toBe(true);
    expect(existsSync(path.join(outside, "app/ran-here"))).toBe(false);
    // The attempt folders are gone, and only they.
    expect(readdirSync(outside).sort()).toEqual(["app", "keep", "reports", "src", "tree", "victim.txt"]);
  });

  it("copies nothing from outside the workspace into the bundle", () => {
    expect(filesContaining(out, "OUTSIDE-SECRET")).toEqual([]);
    // evalgate's own environment (HOME, PATH of the runner) is not in the bundle either.
    expect(filesContaining(out, `PATH=${process.env.PATH}`)).toEqual([]);
  });

  it("fails an agent that swapped its workspace for a link as tampering", () => {
    const r = resultOf("swap-ws");
    expect(r.status).toBe("failed");
    expect(r.failure_kind).toBe("tampered");
    expect(r.message).toContain("replaced its workspace folder");
  });

  it("gives scorers a HOME and TMPDIR of evalgate's own, whatever the agent left at their place", () => {
    expect(resultOf("attempt-files").status).toBe("passed");
  });

  it("never reads through a link out of the workspace", () => {
    const environ = scorerOf("read-links", "environ");
    expect(environ.passed).toBe(false);
    expect(environ.reason).toBe("env.txt is a link to a place outside the workspace");
    const leak = scorerOf("read-links", "leak");
    expect(leak.reason).not.toContain("leak.js");
  });

  it("fails a tests scorer whose report folder or cwd is a link out of the workspace, without touching it", () => {
    for (const name of ["glob", "cwd"]) {
      const s = scorerOf("report-links", name);
      expect(s.state, s.reason).toBe("complete");
      expect(s.passed).toBe(false);
      expect(s.reason).toMatch(/is a link to a place outside the workspace/);
    }
  });

  it("does not hang on a FIFO, and removes one git cannot record", () => {
    const s = scorerOf("fifo", "fifo");
    expect(s.state).toBe("complete");
    expect(s.passed).toBe(false);
    expect(s.reason).toBe("src/new.js is not a regular file");
    const r = resultOf("fifo");
    expect(r.warnings).toContain(
      "src/main.js was a special file (a FIFO or socket), which git cannot record: removed before scoring",
    );
    expect(readFileSync(path.join(attemptDir("fifo"), "diff.patch"), "utf8")).toContain(
      "deleted file mode 100644",
    );
  });

  it("captures new files the agent hid from git with ignore rules of its own, not the baseline's ignored ones", () => {
    const patch = readFileSync(path.join(attemptDir("hide"), "diff.patch"), "utf8");
    expect(patch).toContain("+++ b/sub/hidden.js");
    expect(patch).toContain("+++ b/sub/.gitignore");
    expect(patch).not.toContain("build/out.js");
    const s = scorerOf("hide", "shape");
    expect(s.passed).toBe(false);
    expect(s.reason).toContain("sub/hidden.js");
  });
});
