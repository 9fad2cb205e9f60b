/**
 * Test configuration at any depth, checked after the agent (workspace/test-config.ts): a start tree
 * with configuration files, a copy, the change mark, an agent's edits, the scan, the restore.
 * Before, none of these edits was noticed: the scorers' runners read them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { markCopy } from "../../src/workspace/change-mark.js";
import { scanWorkspace } from "../../src/workspace/scan.js";
import { protectionOf, restoreTestConfig } from "../../src/workspace/test-config.js";
import { gitRepo, tempDir } from "../helpers.js";

const PKG = `${JSON.stringify({ name: "app", scripts: { test: "vitest run" }, dependencies: {} }, null, 2)}\n`;

async function copyOfStart() {
  const start = gitRepo({
    ".gitignore": "node_modules/\n",
    "package.json": PKG,
    "packages/a/package.json": PKG,
    "tests/conftest.py": "import pytest\n",
    "tests/test_x.py": "def test_x():\n    assert True\n",
    "vitest.config.ts": "export default {};\n",
    "src/app.js": "export const x = 1;\n",
  });
  const attempt = tempDir("evalgate-config-attempt-");
  const ws = path.join(attempt, "ws");
  execFileSync("cp", ["-a", start, ws]);
  const mark = await markCopy(attempt);
  if (!mark) throw new Error("the filesystem's clock did not move");
  const check = async () => {
    const scan = await scanWorkspace(ws, undefined, mark.sinceNs);
    return restoreTestConfig({ dir: start }, ws, scan.changed);
  };
  return { start, ws, check, at: (rel: string) => path.join(ws, rel) };
}

describe("which files are test configuration", () => {
  it.each<[string, string | undefined]>([
    ["package.json", "part"],
    ["packages/a/package.json", "part"],
    ["node_modules/x/package.json", undefined],
    [".venv/lib/python3.11/site-packages/numpy/conftest.py", undefined],
    ["deep/down/conftest.py", "whole"],
    ["jest.config.mjs", "whole"],
    ["web/vitest.config.ts", "whole"],
    ["vitest.workspace.json", "whole"],
    [".mocharc.yml", "whole"],
    ["ava.config.js", "whole"],
    [".npmrc", "whole"],
    ["pytest.ini", "whole"],
    ["pytest.toml", "whole"],
    ["tox.ini", "whole"],
    ["setup.cfg", "part"],
    ["pyproject.toml", "part"],
    ["src/conftest_helpers.py", undefined],
    ["vite.config.ts", undefined],
  ])("%s: %s", (rel, how) => {
    const got = protectionOf(rel);
    expect(got === undefined ? undefined : got === "whole" ? "whole" : "part").toBe(how);
  });
});

describe("test configuration after the agent", () => {
  it("sees nothing when the agent changed only code and package.json's dependencies", async () => {
    const t = await copyOfStart();
    writeFileSync(t.at("src/app.js"), "export const x = 2;\n");
    writeFileSync(t.at("package.json"), PKG.replace("{}", '{ "left-pad": "1.3.0" }'));
    expect(await t.check()).toEqual({ tampered: [], complete: true });
    expect(readFileSync(t.at("package.json"), "utf8")).toContain("left-pad");
  });

  it.each<[string, (at: (rel: string) => string) => void, string[]]>([
    [
      "a nested package's scripts",
      (at) => writeFileSync(at("packages/a/package.json"), PKG.replace("vitest run", "true")),
      ["packages/a/package.json (scripts)"],
    ],
    [
      "a conftest.py added deep down",
      (at) => {
        mkdirSync(at("src/sub"), { recursive: true });
        writeFileSync(at("src/sub/conftest.py"), "x = 1\n");
      },
      ["src/sub/conftest.py"],
    ],
    ["a conftest.py removed", (at) => rmSync(at("tests/conftest.py")), ["tests/conftest.py"]],
    [
      "the runner's config edited",
      (at) => writeFileSync(at("vitest.config.ts"), "export default { test: { passWithNoTests: true } };\n"),
      ["vitest.config.ts"],
    ],
    ["an .npmrc added", (at) => writeFileSync(at(".npmrc"), "script-shell=/bin/true\n"), [".npmrc"]],
    [
      "a folder swapped for a link to an older conftest.py elsewhere",
      (at) => {
        const elsewhere = tempDir("evalgate-elsewhere-");
        writeFileSync(path.join(elsewhere, "conftest.py"), "forged = True\n");
        writeFileSync(path.join(elsewhere, "test_x.py"), "def test_x():\n    assert True\n");
        renameSync(at("tests"), at("tests-old"));
        symlinkSync(elsewhere, at("tests"));
      },
      ["tests/conftest.py"],
    ],
    [
      "a new package.json with a test script",
      (at) => {
        mkdirSync(at("tools"));
        writeFileSync(at("tools/package.json"), PKG);
      },
      ["tools/package.json (scripts)"],
    ],
  ])("puts back %s, and reports it", async (_, edit, tampered) => {
    const t = await copyOfStart();
    edit(t.at);
    expect(await t.check()).toEqual({ tampered, complete: true });
    for (const rel of ["package.json", "packages/a/package.json", "tests/conftest.py", "vitest.config.ts"]) {
      expect(readFileSync(t.at(rel), "utf8"), rel).toBe(readFileSync(path.join(t.start, rel), "utf8"));
    }
    expect(existsSync(t.at(".npmrc"))).toBe(false);
    expect(existsSync(t.at("src/sub/conftest.py"))).toBe(false);
  });

  it("never reads or writes through a folder the agent swapped for a link", async () => {
    const t = await copyOfStart();
    const outside = tempDir("evalgate-outside-");
    const theirs = PKG.replace("vitest run", "true");
    writeFileSync(path.join(outside, "package.json"), theirs);
    rmSync(t.at("packages/a"), { recursive: true });
    symlinkSync(outside, t.at("packages/a"));
    expect((await t.check()).tampered).toEqual(["packages/a/package.json"]);
    // The file outside is as it was; the workspace has a real folder with the start's file.
    expect(readFileSync(path.join(outside, "package.json"), "utf8")).toBe(theirs);
    expect(readFileSync(t.at("packages/a/package.json"), "utf8")).toBe(PKG);
  });

  it("leaves configuration inside installed packages alone", async () => {
    const t = await copyOfStart();
    mkdirSync(t.at("node_modules/dep"), { recursive: true });
    writeFileSync(t.at("node_modules/dep/package.json"), PKG);
    writeFileSync(t.at("node_modules/dep/jest.config.js"), "module.exports = {};\n");
    expect((await t.check()).tampered).toEqual([]);
  });

  it("without a list of changes, compares the start tree's files and says new ones were not looked for", async () => {
    const t = await copyOfStart();
    writeFileSync(t.at("tests/conftest.py"), "forged = True\n");
    expect(await restoreTestConfig({ dir: t.start }, t.ws, undefined)).toEqual({
      tampered: ["tests/conftest.py"],
      complete: false,
    });
  });
});
