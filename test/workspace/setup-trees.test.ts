/**
 * What setup built, checked after the agent: a start tree with ignored trees, a copy, the change
 * mark, an agent's edits, the one scan, and the restore (workspace/setup-trees.ts). Each edit below
 * went unnoticed before (git ignores these trees), and the scorers ran on it.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { markCopy } from "../../src/workspace/change-mark.js";
import { scanWorkspace } from "../../src/workspace/scan.js";
import { restoreSetupTrees } from "../../src/workspace/setup-trees.js";
import { gitRepo, tempDir, writeFiles } from "../helpers.js";

/** A start tree whose setup built .venv/, node_modules/ and an ignored log; and a fresh copy of it. */
async function copyOfStart() {
  const start = gitRepo({
    ".gitignore": ".venv/\nnode_modules/\n*.log\n__pycache__/\n",
    "src/app.py": "x = 1\n",
  });
  writeFiles(start, {
    ".venv/lib/site-packages/pkg/__init__.py": "def ok():\n    return True\n",
    ".venv/lib/site-packages/pkg/data.txt": "same size\n",
    ".venv/bin/tool": "#!/bin/sh\n",
    "node_modules/lib/index.js": "module.exports = 1;\n",
    "node_modules/lib/package.json": '{"name":"lib"}\n',
    "setup.log": "installed\n",
    // A folder that holds only ignored files: new source files in it are the agent's own work.
    "gen/__pycache__/m.pyc": "bytecode\n",
  });
  const attempt = tempDir("evalgate-trees-attempt-");
  const ws = path.join(attempt, "ws");
  execFileSync("cp", ["-a", start, ws]);
  const mark = await markCopy(attempt);
  if (!mark) throw new Error("the filesystem's clock did not move");
  const check = async () => {
    const scan = await scanWorkspace(ws, undefined, mark.sinceNs);
    return restoreSetupTrees({ dir: start }, ws, scan.changed);
  };
  return { start, ws, check, at: (rel: string) => path.join(ws, rel) };
}

describe("setup-built trees", () => {
  it("sees nothing when the agent left them alone (and edited its own files)", async () => {
    const t = await copyOfStart();
    writeFileSync(t.at("src/app.py"), "x = 2\n");
    writeFileSync(t.at("src/new.py"), "y = 1\n");
    expect(await t.check()).toEqual({ tampered: [], caches: 0, unverified: false });
  });

  it.each<[string, (at: (rel: string) => string) => void, string[]]>([
    [
      "a file rewritten to the same size, its time set back",
      (at) => {
        writeFileSync(at(".venv/lib/site-packages/pkg/data.txt"), "SAME SIZE\n");
        utimesSync(at(".venv/lib/site-packages/pkg/data.txt"), 0, 0);
      },
      [".venv/lib/site-packages/pkg/data.txt"],
    ],
    [
      "a .pth file added",
      (at) => writeFileSync(at(".venv/lib/site-packages/evil.pth"), "import os\n"),
      [".venv/lib/site-packages/evil.pth"],
    ],
    [
      "a package's file removed",
      (at) => rmSync(at("node_modules/lib/package.json")),
      ["node_modules/lib/package.json"],
    ],
    ["a mode changed", (at) => chmodSync(at(".venv/bin/tool"), 0o777), [".venv/bin/tool"]],
    ["a whole tree removed", (at) => rmSync(at("node_modules"), { recursive: true }), ["node_modules/"]],
    [
      "a tree swapped for a link",
      (at) => {
        rmSync(at(".venv"), { recursive: true });
        symlinkSync("/usr", at(".venv"));
      },
      [".venv/"],
    ],
    [
      "a package renamed away and another put in its place",
      (at) => {
        renameSync(at("node_modules/lib"), at("node_modules/lib-old"));
        mkdirSync(at("node_modules/lib"));
        writeFileSync(at("node_modules/lib/index.js"), "module.exports = 2;\n");
      },
      ["node_modules/lib-old/", "node_modules/lib/index.js", "node_modules/lib/package.json"],
    ],
    [
      "a file replaced by a hard link to another (same inode, changed link count)",
      (at) => {
        rmSync(at(".venv/lib/site-packages/pkg/data.txt"));
        linkSync(at(".venv/lib/site-packages/pkg/__init__.py"), at(".venv/lib/site-packages/pkg/data.txt"));
      },
      // The other name of the inode changed only its link count, not its content.
      [".venv/lib/site-packages/pkg/data.txt"],
    ],
    ["an ignored file at the top", (at) => writeFileSync(at("setup.log"), "forged\n"), ["setup.log"]],
  ])("puts back %s, and reports it", async (_, edit, tampered) => {
    const t = await copyOfStart();
    edit(t.at);
    const got = await t.check();
    expect(got.tampered).toEqual(tampered);
    // Put back: the trees are as the start tree has them, byte for byte.
    const diff = execFileSync("diff", ["-r", "--no-dereference", t.start, t.ws, "-x", ".git", "-x", "src"], {
      encoding: "utf8",
    }).trim();
    expect(diff).toBe("");
    expect(lstatSync(t.at(".venv")).isDirectory()).toBe(true);
    expect(existsSync(t.at("node_modules/lib-old"))).toBe(false);
  });

  it("puts back caches the agent's tools wrote without counting them", async () => {
    const t = await copyOfStart();
    mkdirSync(t.at(".venv/lib/site-packages/pkg/__pycache__"));
    writeFileSync(t.at(".venv/lib/site-packages/pkg/__pycache__/__init__.cpython-311.pyc"), "x");
    mkdirSync(t.at("node_modules/.cache/tool"), { recursive: true });
    writeFileSync(t.at("node_modules/.cache/tool/state"), "x");
    expect(await t.check()).toEqual({ tampered: [], caches: 2, unverified: false });
    expect(existsSync(t.at("node_modules/.cache"))).toBe(false);
  });

  it("leaves a new source file in a folder that held only ignored files (it is in the diff)", async () => {
    const t = await copyOfStart();
    writeFileSync(t.at("gen/model.py"), "z = 1\n");
    expect((await t.check()).tampered).toEqual([]);
    expect(readFileSync(t.at("gen/model.py"), "utf8")).toBe("z = 1\n");
  });

  it("a file touched but unchanged is no change", async () => {
    const t = await copyOfStart();
    const f = t.at("node_modules/lib/index.js");
    writeFileSync(f, readFileSync(f));
    expect((await t.check()).tampered).toEqual([]);
  });

  it("without a list of changes, puts every tree back whole, unchecked", async () => {
    const t = await copyOfStart();
    writeFileSync(t.at(".venv/lib/site-packages/evil.pth"), "import os\n");
    expect(await restoreSetupTrees({ dir: t.start }, t.ws, undefined)).toEqual({
      tampered: [],
      caches: 0,
      unverified: true,
    });
    expect(existsSync(t.at(".venv/lib/site-packages/evil.pth"))).toBe(false);
  });
});
