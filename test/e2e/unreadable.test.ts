/**
 * An agent that makes its files and folders unreadable to their owner (`chmod 000`), with evalgate
 * running as an ordinary user, as on a GitHub runner: the capture gives the owner's read permission
 * back, so the diff and the scorers see the agent's work and the attempt is graded, not turned into
 * an infrastructure error (docs/decisions/0076). The run goes through `setpriv` as `nobody`, since
 * root reads any file whatever its mode.
 */
import { spawnSync } from "node:child_process";
import { chownSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, readJsonl, tempDir, writeFiles } from "../helpers.js";

const NOBODY = 65534;
const asNobody = process.getuid?.() === 0 && spawnSync("setpriv", ["--version"]).status === 0;

describe.skipIf(!asNobody)("an agent that locks its own files (evalgate not root)", () => {
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
  spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, dir]);
  chownSync(dir, NOBODY, NOBODY);
  const out = path.join(dir, "bundle");
  const r = spawnSync(
    "setpriv",
    [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      "--clear-groups",
      process.execPath,
      CLI,
      "run",
      ".",
      "--out",
      out,
    ],
    {
      cwd: dir,
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: process.env.PATH, HOME: dir, CI: "1", RUNNER_TEMP: work },
    },
  );

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
