/**
 * An agent that makes its files and folders unreadable to their owner (`chmod 000`), with evalgate
 * running as an ordinary user, as on a GitHub runner: the capture gives the owner's read permission
 * back, so the diff and the scorers see the agent's work and the attempt is graded, not turned into
 * an infrastructure error (docs/decisions/0076). The run goes through `setpriv` as `nobody`, since
 * root reads any file whatever its mode.
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { chmodSync, chownSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { unlockWorkspace } from "../../src/workspace/scan.js";
import { CLI, readJsonl, tempDir, writeFiles } from "../helpers.js";

const NOBODY = 65534;
const SETPRIV = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"];
/** Why the run as nobody cannot happen here, or undefined when it can. */
function cannotRunAsNobody(): string | undefined {
  if (process.getuid?.() !== 0) return "the tests do not run as root, so they cannot switch to nobody";
  if (spawnSync("setpriv", ["--version"]).status !== 0) return "setpriv is not installed";
  // A checkout inside a private folder (mktemp -d makes 0700 ones) is out of nobody's reach.
  if (spawnSync("setpriv", [...SETPRIV, process.execPath, CLI, "--version"]).status !== 0) {
    return `nobody cannot run ${CLI} (a folder above it is private)`;
  }
  return undefined;
}
const skipWhy = cannotRunAsNobody();
if (skipWhy) console.log(`skipped: an agent that locks its own files, as nobody: ${skipWhy}`);

describe("unlockWorkspace", () => {
  it("gives the owner back read permission on files and read and search permission on folders, nested", async () => {
    const ws = tempDir();
    writeFiles(ws, { "a/b/c.txt": "c", "f.txt": "f", "open.txt": "o", ".git/x": "g" });
    chmodSync(path.join(ws, "f.txt"), 0o000);
    chmodSync(path.join(ws, "a/b/c.txt"), 0o200);
    chmodSync(path.join(ws, "a/b"), 0o000);
    chmodSync(path.join(ws, "a"), 0o100);
    chmodSync(path.join(ws, ".git/x"), 0o000);
    const changed = await unlockWorkspace(ws);
    expect(changed.sort()).toEqual(["a", "a/b", "a/b/c.txt", "f.txt"]);
    const mode = (p: string) => statSync(path.join(ws, p)).mode & 0o777;
    expect(mode("a")).toBe(0o500);
    expect(mode("a/b")).toBe(0o500);
    expect(mode("a/b/c.txt")).toBe(0o600);
    expect(mode("f.txt")).toBe(0o400);
    // evalgate's capture never reads the workspace's .git: left as the agent made it.
    expect(mode(".git/x")).toBe(0o000);
    expect(await unlockWorkspace(ws)).toEqual([]);
  });
});

describe.skipIf(skipWhy !== undefined)("an agent that locks its own files (evalgate not root)", () => {
  const dir = tempDir();
  writeFiles(dir, {
    "agent.sh": `mkdir locked && echo secret > locked/a.txt
mkdir -p deep/er && echo deeper > deep/er/b.txt && chmod 000 deep/er deep
echo plain > f.txt && chmod 000 f.txt
chmod 000 locked
`,
    "lock.eval.yaml": `targets: [{ name: locker, provider: command, command: ["sh", "{EVAL_DIR}/agent.sh"] }]
workspace: { seed: { empty: true } }
tests:
  - id: lock
    instruction: write the files
    scorers:
      - { name: locked, type: file, path: locked/a.txt, contains: secret }
      - { name: deep, type: file, path: deep/er/b.txt, contains: deeper }
`,
  });
  const work = path.join(dir, "work");
  writeFiles(work, { ".keep": "" });
  const out = path.join(dir, "bundle");
  let r: SpawnSyncReturns<string>;
  beforeAll(() => {
    spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, dir]);
    chownSync(dir, NOBODY, NOBODY);
    r = spawnSync("setpriv", [...SETPRIV, process.execPath, CLI, "run", ".", "--out", out], {
      cwd: dir,
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: process.env.PATH, HOME: dir, CI: "1", RUNNER_TEMP: work },
    });
  }, 120_000);

  it("captures and grades what the agent locked, says so, and cleans up", () => {
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const row = readJsonl<{ verdict: string; result_dir: string; runs: { dir: string }[] }>(
      path.join(out, "index.jsonl"),
    )[0]!;
    expect(row.verdict).toBe("pass");
    const run = path.join(out, row.runs[0]!.dir);
    const patch = readFileSync(path.join(run, "diff.patch"), "utf8");
    for (const line of ["+secret", "+deeper", "+plain"]) expect(patch).toContain(line);
    const result = JSON.parse(readFileSync(path.join(run, "result.json"), "utf8")) as { warnings?: string[] };
    expect(result.warnings?.join("\n")).toMatch(
      /made .*locked.* unreadable to its owner: made readable again/,
    );
    // The attempt's workspace was removed, locked folders and all.
    const attempts = path.join(work, readdirSync(work).find((n) => n !== ".keep") ?? "", "attempts");
    const left = spawnSync("find", [attempts, "-path", "*/ws/*"], { encoding: "utf8" }).stdout;
    expect(left).toBe("");
  });
});
