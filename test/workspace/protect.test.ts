import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { installVerifiers, protectedMatcher, restoreProtected } from "../../src/workspace/protect.js";
import { tempDir, writeFiles } from "../helpers.js";

/** A start tree and a copy of it (as an attempt starts from). */
function trees(files: Record<string, string>): { start: string; ws: string } {
  const root = tempDir();
  const start = path.join(root, "start");
  writeFiles(start, files);
  mkdirSync(path.join(start, ".git"));
  writeFileSync(path.join(start, ".git", "HEAD"), "ref: refs/heads/main\n");
  const ws = path.join(root, "ws");
  execFileSync("cp", ["-a", start, ws]);
  return { start, ws };
}

const FILES = {
  "src/cart.js": "export const total = () => NaN;\n",
  "test/cart.test.js": "assert(total() === 0);\n",
  "test/helpers/util.js": "export const x = 1;\n",
  "test/run.sh": "#!/bin/sh\n",
  "README.md": "hi\n",
};

describe("restoreProtected", () => {
  it("finds nothing when the agent left protected paths alone, and keeps its other changes", async () => {
    const { start, ws } = trees(FILES);
    writeFileSync(path.join(ws, "src/cart.js"), "fixed\n");
    expect(await restoreProtected({ dir: start }, ws, ["test/**"])).toEqual([]);
    expect(readFileSync(path.join(ws, "src/cart.js"), "utf8")).toBe("fixed\n");
  });

  it("puts back edits, deletions, additions, mode changes and a symlink swap, and lists each", async () => {
    const { start, ws } = trees(FILES);
    chmodSync(path.join(start, "test/run.sh"), 0o755);
    chmodSync(path.join(ws, "test/run.sh"), 0o755);
    writeFileSync(path.join(ws, "test/cart.test.js"), "assert(true);\n"); // edit
    rmSync(path.join(ws, "test/helpers/util.js")); // delete
    writeFileSync(path.join(ws, "test/extra.test.js"), "assert(true);\n"); // add
    chmodSync(path.join(ws, "test/run.sh"), 0o644); // mode
    writeFileSync(path.join(ws, "src/cart.js"), "fixed\n"); // not protected
    const outside = tempDir();
    writeFileSync(path.join(outside, "x.js"), "outside\n");
    rmSync(path.join(ws, "test/helpers"), { recursive: true });
    symlinkSync(outside, path.join(ws, "test/helpers")); // a folder swapped for a symlink out
    const tampered = await restoreProtected({ dir: start }, ws, ["test/**"]);
    expect(tampered).toEqual([
      "test/cart.test.js",
      "test/extra.test.js",
      "test/helpers/",
      "test/helpers/util.js",
      "test/run.sh",
    ]);
    expect(readFileSync(path.join(ws, "test/cart.test.js"), "utf8")).toBe(FILES["test/cart.test.js"]);
    expect(readFileSync(path.join(ws, "test/helpers/util.js"), "utf8")).toBe(FILES["test/helpers/util.js"]);
    expect(lstatSync(path.join(ws, "test/helpers")).isDirectory()).toBe(true);
    expect(existsSync(path.join(ws, "test/extra.test.js"))).toBe(false);
    expect(lstatSync(path.join(ws, "test/run.sh")).mode & 0o777).toBe(0o755);
    expect(readFileSync(path.join(ws, "src/cart.js"), "utf8")).toBe("fixed\n");
    // Nothing was written through the symlink.
    expect(readFileSync(path.join(outside, "x.js"), "utf8")).toBe("outside\n");
    expect(existsSync(path.join(outside, "util.js"))).toBe(false);
    // A second look finds the tree as the start tree had it.
    expect(await restoreProtected({ dir: start }, ws, ["test/**"])).toEqual([]);
  });

  it("sees a new file the agent hid from git with a .gitignore line, and a file swapped for a folder", async () => {
    const { start, ws } = trees(FILES);
    writeFileSync(path.join(ws, ".gitignore"), "test/sneaky.test.js\n");
    writeFileSync(path.join(ws, "test/sneaky.test.js"), "assert(true);\n");
    rmSync(path.join(ws, "test/cart.test.js"));
    mkdirSync(path.join(ws, "test/cart.test.js"));
    writeFileSync(path.join(ws, "test/cart.test.js/inner"), "x\n");
    expect(await restoreProtected({ dir: start }, ws, ["test"])).toEqual([
      "test/cart.test.js",
      "test/cart.test.js/inner",
      "test/sneaky.test.js",
    ]);
    expect(readFileSync(path.join(ws, "test/cart.test.js"), "utf8")).toBe(FILES["test/cart.test.js"]);
  });

  it("restores a protected symlink's target and files matched by a pattern anywhere", async () => {
    const { start, ws } = trees({ ...FILES, "pkg/a/a.test.js": "a\n", "pkg/b/b.test.js": "b\n" });
    symlinkSync("cart.test.js", path.join(start, "test/link.test.js"));
    symlinkSync("cart.test.js", path.join(ws, "test/link.test.js"));
    rmSync(path.join(ws, "test/link.test.js"));
    symlinkSync("/etc/passwd", path.join(ws, "test/link.test.js"));
    writeFileSync(path.join(ws, "pkg/b/b.test.js"), "changed\n");
    expect(await restoreProtected({ dir: start }, ws, ["**/*.test.js"])).toEqual([
      "pkg/b/b.test.js",
      "test/link.test.js",
    ]);
    expect(readlinkSync(path.join(ws, "test/link.test.js"))).toBe("cart.test.js");
  });

  it("never looks inside .git", async () => {
    const { start, ws } = trees(FILES);
    writeFileSync(path.join(ws, ".git", "HEAD"), "changed\n");
    expect(await restoreProtected({ dir: start }, ws, ["**"])).toEqual([]);
  });
});

describe("protectedMatcher", () => {
  it("treats a folder name as everything below it", () => {
    const m = protectedMatcher(["test", "spec/**", "*.lock"]);
    expect(["test", "test/a/b.js", "spec/x", "yarn.lock"].every(m)).toBe(true);
    expect(["tests/a.js", "src/test", "a/yarn.lock"].some(m)).toBe(false);
  });
});

describe("installVerifiers", () => {
  it("copies files and folders in, replacing what the agent left there, never through a symlink", async () => {
    const { ws } = trees(FILES);
    const hidden = tempDir();
    writeFiles(hidden, {
      "cart.test.js": "hidden test\n",
      "suite/a.test.js": "a\n",
      "suite/b.test.js": "b\n",
    });
    const outside = tempDir();
    writeFileSync(path.join(ws, "test/verify.test.js"), "agent's own\n");
    symlinkSync(outside, path.join(ws, "checks"));
    await installVerifiers(ws, [
      { from: path.join(hidden, "cart.test.js"), to: "test/verify.test.js" },
      { from: path.join(hidden, "suite"), to: "checks/suite" },
    ]);
    expect(readFileSync(path.join(ws, "test/verify.test.js"), "utf8")).toBe("hidden test\n");
    expect(readFileSync(path.join(ws, "checks/suite/b.test.js"), "utf8")).toBe("b\n");
    expect(lstatSync(path.join(ws, "checks")).isDirectory()).toBe(true);
    expect(existsSync(path.join(outside, "suite"))).toBe(false);
  });
});
