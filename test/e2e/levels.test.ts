/**
 * Every isolation level holds its promises (docs/threat-model.md), attacker first:
 *
 * - evalgate's own git commands never run git configuration an agent could have written: the agent
 *   plants `core.fsmonitor`, a clean filter and a hook in the capture store, in its workspace's
 *   `.git` and in the eval repository's `.git/config`; neither evalgate's capture, nor its own
 *   `git status` in the repository, nor a scorer's `git status` / `git commit` in the workspace may
 *   run them. Before: at pid-namespace and subreaper the capture ran the store's fsmonitor and
 *   filter and evalgate's `git status` ran the repository's; at every level the scorer's git ran
 *   the workspace's.
 * - the capture ignores the agent's `.gitattributes`: `*.js binary` does not turn its diff into
 *   "Binary files differ" nor zero its line counts (before: it did, at every level).
 * - `kill -9` of evalgate ends every agent at bwrap, pid-namespace and subreaper (before: at
 *   pid-namespace and subreaper the agent and its daemon lived on); at none it does not, and the
 *   threat model says so.
 * - two runs cannot write one `--out` (before: both wrote it).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { CLI, readJsonl, runCliAsync, sh, tempDir, writeFiles } from "../helpers.js";
import { newTag, processesWith } from "../sandbox/daemon.js";

const bwrap = await checkBwrap();
const root = process.getuid?.() === 0;
if (!bwrap.ok) console.warn(`SKIPPED the bwrap level of the level tests: ${bwrap.message}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LEVELS = ["bwrap", "pid-namespace", "subreaper", "none"] as const;
type Level = (typeof LEVELS)[number];
const levelEnv = (level: Level) => (level === "bwrap" ? {} : { EVALGATE_ISOLATION: level });
const available = (level: Level) => (level === "bwrap" ? bwrap.ok : level === "pid-namespace" ? root : true);

/**
 * The agent's plants. Each planted program writes `marker-<where>` into a folder the process that
 * runs it can write (the workspace, kept with --keep-workspaces, or MARKS where the agent can reach
 * it), so what ran is seen whoever ran it.
 */
const PLANTER = `#!/bin/sh
ws="$PWD"
plant() { # plant FILE WHERE MARKDIR
  printf '#!/bin/sh\\necho ran >> "%s/marker-%s"\\n' "$3" "$2" > "$1"; chmod +x "$1"
}
poison() { # poison GITDIR WHERE MARKDIR
  plant "$1/evil-$2.sh" "$2" "$3"
  printf '[core]\\n\\tfsmonitor = %s\\n[filter "x"]\\n\\tclean = %s\\n\\tprocess = %s\\n' "$1/evil-$2.sh" "$1/evil-$2.sh" "$1/evil-$2.sh" >> "$1/config" 2>/dev/null && echo "poisoned $2"
  mkdir -p "$1/hooks" 2>/dev/null && cp "$1/evil-$2.sh" "$1/hooks/pre-commit" 2>/dev/null
}
echo '* filter=x' > .gitattributes
printf 'function f() {}\\n' > a.js
# Where the agent works: its own .git (read by a scorer's git), written at every level.
poison "$ws/.git" workspace "$ws"
# evalgate's capture store, and the eval repository: out of its reach under bubblewrap only.
for store in "$ws"/../../../../baselines/*/capture.git; do poison "$store" store "$MARKS"; done
poison "$REPO/.git" repo "$MARKS"
exit 0
`;

function planterProject(): { dir: string; marks: string } {
  const dir = tempDir("evalgate-levels-");
  const marks = tempDir("evalgate-marks-");
  writeFiles(dir, {
    "project/a.js": "function f() {\n  return 1;\n}\n",
    "project/b.txt": "b\n",
    "agents/agent.sh": PLANTER,
    "s.eval.yaml": `name: levels
targets:
  - { name: agent, provider: command, command: ["./agents/agent.sh"], env_passthrough: [REPO, MARKS] }
workspace: { seed: { path: project } }
tests:
  - id: t
    instruction: x
    scorers:
      - { name: status, type: command, run: "git status --porcelain > /dev/null && git -c user.name=s -c user.email=s@s commit -q --allow-empty -m s" }
      - { name: lines, type: diff, max_lines: 1000 }
`,
  });
  chmodSync(path.join(dir, "agents/agent.sh"), 0o755);
  sh("git init -q -b main . && git add -A && git commit -qm init", dir);
  return { dir, marks };
}

function markers(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => path.basename(f).startsWith("marker-"))
    .map((f) => path.basename(f))
    .sort();
}

describe("evalgate's git never runs what the agent planted, and the capture ignores its .gitattributes", () => {
  for (const level of LEVELS) {
    it.skipIf(!available(level))(`${level}`, async () => {
      const { dir, marks } = planterProject();
      const work = path.join(dir, "work");
      const out = path.join(dir, "bundle");
      const res = await runCliAsync(
        ["run", "s.eval.yaml", "--out", out, "--work-dir", work, "--keep-workspaces"],
        dir,
        { REPO: dir, MARKS: marks, ...levelEnv(level) },
      );
      expect(res.code, res.stderr + res.stdout).toBeLessThan(2);
      const row = readJsonl<{ runs: { dir: string }[] }>(path.join(out, "index.jsonl"))[0]!;
      const attempt = path.join(out, row.runs[0]!.dir);
      const log = readFileSync(path.join(attempt, "agent.log"), "utf8");
      // The plants were made where the level lets the agent write.
      expect(log).toContain("poisoned workspace");
      if (level !== "bwrap") {
        expect(log).toContain("poisoned store");
        expect(log).toContain("poisoned repo");
      } else {
        expect(log).not.toContain("poisoned store");
        expect(log).not.toContain("poisoned repo");
      }
      // ... and none of them ran: not in the capture, not in evalgate's git status of the
      // repository, not in the scorer's git status and commit.
      expect([...markers(work), ...markers(marks), ...markers(dir)]).toEqual([]);
      const grading = JSON.parse(readFileSync(path.join(attempt, "grading.json"), "utf8")) as {
        scorers: { name: string; state: string; passed: boolean | null; reason: string }[];
      };
      expect(grading.scorers.find((s) => s.name === "status")!.passed).toBe(true);
      // The agent's `*.js binary`-like attributes changed nothing of what the diff shows.
      const patch = readFileSync(path.join(attempt, "diff.patch"), "utf8");
      expect(patch).toContain("-  return 1;\n");
      expect(patch).not.toContain("Binary files");
      const result = JSON.parse(readFileSync(path.join(attempt, "result.json"), "utf8")) as {
        diff: { files: { path: string; additions: number; deletions: number; binary: boolean }[] };
      };
      const aJs = result.diff.files.find((f) => f.path === "a.js")!;
      expect(aJs).toMatchObject({ additions: 1, deletions: 3, binary: false });
      // The repository's own config is left as the agent made it (out of evalgate's hands at
      // these levels), but evalgate did not run it.
      if (level !== "bwrap")
        expect(readFileSync(path.join(dir, ".git/config"), "utf8")).toContain("fsmonitor");
    });
  }
});

describe("the capture ignores the agent's .gitattributes", () => {
  it("`*.js binary` neither hides the diff nor zeroes its line counts; a real binary stays binary", async () => {
    const dir = tempDir("evalgate-levels-");
    writeFiles(dir, {
      "project/a.js": "one\ntwo\n",
      "agents/agent.sh": `#!/bin/sh
echo '*.js binary' > .gitattributes
printf 'one\\nthree\\nfour\\n' > a.js
printf '\\000\\001\\002' > blob.bin
`,
      "s.eval.yaml": `targets: [{ name: agent, provider: command, command: ["./agents/agent.sh"] }]
workspace: { seed: { path: project } }
tests:
  - { id: t, instruction: x, scorers: [{ name: small, type: diff, max_lines: 2 }] }
`,
    });
    chmodSync(path.join(dir, "agents/agent.sh"), 0o755);
    const out = path.join(dir, "bundle");
    const res = await runCliAsync(["run", ".", "--out", out], dir);
    expect(res.code, res.stderr).toBe(1);
    const row = readJsonl<{ runs: { dir: string }[] }>(path.join(out, "index.jsonl"))[0]!;
    const attempt = path.join(out, row.runs[0]!.dir);
    const patch = readFileSync(path.join(attempt, "diff.patch"), "utf8");
    expect(patch).toContain("-two\n+three\n+four\n");
    expect(patch).toMatch(
      /diff --git a\/blob.bin b\/blob.bin\nnew file mode 100644\nindex 0+\.\.[0-9a-f]+\nGIT binary patch/,
    );
    const grading = JSON.parse(readFileSync(path.join(attempt, "grading.json"), "utf8")) as {
      scorers: { passed: boolean; reason: string }[];
    };
    // Before: a.js was binary with 0 lines, so max_lines: 2 passed (only .gitattributes' 1 line).
    expect(grading.scorers[0]!.passed).toBe(false);
    expect(grading.scorers[0]!.reason).toMatch(/4 lines/);
  });
});

/** Starts the CLI and returns its child process (the node process is evalgate itself). */
function startCli(args: string[], cwd: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...process.env, CI: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await sleep(100);
  }
  return check();
}

describe("kill -9 of evalgate", () => {
  for (const level of LEVELS) {
    it.skipIf(!available(level))(
      `${level}: ${level === "none" ? "leaves the agent running (the threat model says so)" : "ends the agent and its daemon"}`,
      async () => {
        const tag = newTag();
        const dir = tempDir("evalgate-levels-");
        writeFiles(dir, {
          "project/a.txt": "a\n",
          "agents/agent.sh": `#!/bin/sh
( setsid /bin/sh -c 'sleep 300' ${tag} & )
exec /bin/sh -c 'sleep 300' ${tag}
`,
          "s.eval.yaml": `targets: [{ name: agent, provider: command, command: ["./agents/agent.sh"] }]
workspace: { seed: { path: project } }
tests: [{ id: t, instruction: x, scorers: [{ type: file, path: a.txt }] }]
`,
        });
        chmodSync(path.join(dir, "agents/agent.sh"), 0o755);
        const child = startCli(["run", ".", "--out", "b"], dir, levelEnv(level));
        let output = "";
        child.stdout?.on("data", (c) => {
          output += c;
        });
        child.stderr?.on("data", (c) => {
          output += c;
        });
        try {
          expect(await waitFor(() => processesWith(tag).length >= 2, 60_000), output).toBe(true);
          process.kill(child.pid!, "SIGKILL");
          const gone = await waitFor(() => processesWith(tag).length === 0, 10_000);
          if (level === "none") expect(gone).toBe(false);
          else expect(gone, `left running: ${processesWith(tag).join(", ")}`).toBe(true);
        } finally {
          for (const pid of processesWith(tag)) process.kill(pid, "SIGKILL");
          child.kill("SIGKILL");
        }
      },
    );
  }
});

describe("two runs, one --out", () => {
  it("the second exits 2 naming the first; a stale lock of a dead run is taken over", async () => {
    const tag = newTag();
    const dir = tempDir("evalgate-levels-");
    writeFiles(dir, {
      "project/a.txt": "a\n",
      "agents/agent.sh": `#!/bin/sh\nexec /bin/sh -c 'sleep 4' ${tag}\n`,
      "s.eval.yaml": `targets: [{ name: agent, provider: command, command: ["./agents/agent.sh"] }]
workspace: { seed: { path: project } }
tests: [{ id: t, instruction: x, scorers: [{ type: file, path: a.txt }] }]
`,
    });
    chmodSync(path.join(dir, "agents/agent.sh"), 0o755);
    const first = startCli(["run", ".", "--out", "b"], dir, {});
    const firstDone = new Promise<number>((r) => first.on("close", (code) => r(code ?? -1)));
    try {
      expect(await waitFor(() => processesWith(tag).length > 0, 60_000)).toBe(true);
      const second = await runCliAsync(["run", ".", "--out", "b"], dir);
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr).toContain(`another evalgate run (pid ${first.pid}`);
      expect(second.stderr).toMatch(/started \d{4}-\d\d-\d\dT/);
      expect(await firstDone).toBe(0);
      // The first run's bundle is whole: its seal checks.
      const report = await runCliAsync(["report", "b", "--format", "json"], dir);
      expect(report.code, report.stderr).toBe(0);
    } finally {
      first.kill("SIGKILL");
    }
    // A lock left by a run that died (kill -9) is taken over by the next run.
    const killed = startCli(["run", ".", "--out", "c"], dir, {});
    expect(await waitFor(() => processesWith(tag).length > 0, 60_000)).toBe(true);
    process.kill(killed.pid!, "SIGKILL");
    await waitFor(() => processesWith(tag).length === 0, 10_000);
    for (const pid of processesWith(tag)) process.kill(pid, "SIGKILL");
    sh("rm -rf c/*", dir);
    const after = await runCliAsync(["run", ".", "--out", "c"], dir);
    expect(after.code, after.stderr).toBe(0);
    writeFileSync(path.join(dir, "done"), "");
  }, 180_000);
});
