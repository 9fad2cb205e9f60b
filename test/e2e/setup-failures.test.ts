/**
 * Setup failures name their cause (issue 29, point 4): a lockfile that installs a tarball from
 * outside the seed is refused by `validate`, naming the lockfile, the entry and the fix; a setup
 * that fails on a missing file shows npm's own ENOENT line, not its closing "complete log" lines.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

const EVAL = `name: setup
targets: [{ name: bot, provider: command, command: ["true"] }]
workspace:
  seed: { path: app }
  setup: { command: "npm install --offline --no-audit --no-fund" }
tests:
  - { id: t, instruction: "do it", scorers: [{ type: command, run: "true" }] }
`;

describe("setup failures that name their cause", () => {
  it("a lockfile entry file:../x.tgz outside the seed is a validation error naming file, key and fix", () => {
    // before: validate passed; every attempt then failed in setup with npm's generic "enoent".
    const dir = tempDir();
    writeFiles(dir, {
      "evalgate-0.1.0.tgz": "not really a tarball",
      "app/package.json": JSON.stringify({
        name: "app",
        devDependencies: { evalgate: "file:../evalgate-0.1.0.tgz" },
      }),
      "app/package-lock.json": JSON.stringify({
        name: "app",
        lockfileVersion: 3,
        packages: {
          "": { name: "app", devDependencies: { evalgate: "file:../evalgate-0.1.0.tgz" } },
          "node_modules/evalgate": { version: "0.1.0", resolved: "file:../evalgate-0.1.0.tgz" },
        },
      }),
      "a.eval.yaml": EVAL,
    });
    const r = runCli(["validate"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'a.eval.yaml:4: workspace.seed: app/package-lock.json: packages["node_modules/evalgate"].resolved is file:../evalgate-0.1.0.tgz, which is outside the seed folder app',
    );
    expect(r.stderr).toContain(
      "hint: install that package from the registry or a git URL, or move evalgate-0.1.0.tgz into the seed",
    );
  });

  it("a setup that fails on a missing tarball shows npm's ENOENT line naming the path", () => {
    // before: the message ended with npm's last lines ("A complete log of this run can be found in
    // …/.npm/_logs/…", a file removed with setup's HOME).
    const dir = tempDir();
    writeFiles(dir, {
      "app/package.json": JSON.stringify({
        name: "app",
        devDependencies: { x: "file:./vendor/x-1.0.0.tgz" },
      }),
      "a.eval.yaml": EVAL,
    });
    const r = runCli(["run", "--out", "b"], dir);
    const row = readJsonl<{ runs: { result_path: string; dir: string }[] }>(
      path.join(dir, "b/index.jsonl"),
    )[0]!;
    const message = JSON.parse(readFileSync(path.join(dir, "b", row.runs[0]!.result_path), "utf8")).message;
    expect(message, r.stdout).toMatch(
      /^setup command exited with \d+: npm error .*ENOENT.*vendor\/x-1\.0\.0\.tgz/,
    );
    expect(message).toContain("(the whole output is in the attempt's setup.log)");
    // npm's debug log, named by its last line, is kept in setup.log.
    const log = readFileSync(path.join(dir, "b", row.runs[0]!.dir, "setup.log"), "utf8");
    expect(log).toMatch(/--- \S+\/_logs\/\S+\.log \(kept here/);
  });
});
