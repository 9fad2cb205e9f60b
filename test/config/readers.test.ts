/**
 * Reading eval files, includes and instruction files that are not what they seem: a link to
 * /dev/zero, a FIFO, a folder, a file over the cap, a link to `/` or a loop in the evals folder.
 * Every case ends in a problem naming the file (exit 2) within a moment, never a read of gigabytes,
 * a hang, or a walk of the whole disk (issue 28, point 5; decision 0203).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { discoverEvalFiles } from "../../src/config/discover.js";
import { MAX_EVAL_FILE_BYTES, readTextFile, TextFileRefused } from "../../src/config/text-file.js";
import { ConfigError } from "../../src/errors.js";
import { CLI, tempDir, writeFiles } from "../helpers.js";
import { loadPlan } from "./load-plan.js";

const EVAL = (test: string) => `name: demo
targets: [{ name: a, provider: noop }]
workspace: { seed: { empty: true } }
tests:
${test}`;
const TEST = "  - { id: t, instruction: x, scorers: [{ type: file, path: a.txt }] }\n";

async function problemsOf(cwd: string, paths: string[]): Promise<string> {
  try {
    await loadPlan({ cwd, paths });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the plan loaded");
}

describe("readTextFile", () => {
  it("refuses a device, a FIFO and a folder at once, naming what the path is", async () => {
    const dir = tempDir();
    symlinkSync("/dev/zero", path.join(dir, "zero"));
    spawnSync("mkfifo", [path.join(dir, "fifo")]);
    mkdirSync(path.join(dir, "folder"));
    const refused = async (name: string) => {
      const error = await readTextFile(path.join(dir, name), 1024).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TextFileRefused);
      return (error as Error).message;
    };
    expect(await refused("zero")).toBe("is a link to /dev/zero, a device: evalgate reads only regular files");
    expect(await refused("fifo")).toBe("is a FIFO (named pipe): evalgate reads only regular files");
    expect(await refused("folder")).toMatch(/^is a folder/);
    expect(await refused("missing")).toBe("does not exist");
  });

  it("reads a file up to the cap, and refuses one over it without reading it", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "ok"), "x".repeat(1024));
    writeFileSync(path.join(dir, "big"), "x".repeat(1025));
    expect(await readTextFile(path.join(dir, "ok"), 1024)).toHaveLength(1024);
    await expect(readTextFile(path.join(dir, "big"), 1024)).rejects.toThrow(/over the 1 KiB/);
  });
});

describe("eval files, includes and instruction files that are not regular files", () => {
  it("an eval file that is a link to /dev/zero is a problem of that file, not 1 GB read and a RangeError", async () => {
    // before: the whole of /dev/zero was read into memory until a raw RangeError (exit 3)
    const dir = tempDir();
    symlinkSync("/dev/zero", path.join(dir, "zero.eval.yaml"));
    const t = Date.now();
    expect(await problemsOf(dir, ["zero.eval.yaml"])).toContain(
      "zero.eval.yaml: the file is a link to /dev/zero, a device: evalgate reads only regular files",
    );
    expect(Date.now() - t).toBeLessThan(5_000);
  });

  it("an instruction_file that is a link to /dev/zero says so (not 'does not exist' after reading 1 GB)", async () => {
    // before: "instruction file zero.md does not exist", after reading ~1 GB
    const dir = tempDir();
    writeFiles(dir, {
      "demo.eval.yaml": EVAL(
        "  - { id: t, instruction_file: zero.md, scorers: [{ type: file, path: a.txt }] }\n",
      ),
    });
    symlinkSync("/dev/zero", path.join(dir, "zero.md"));
    expect(await problemsOf(dir, ["demo.eval.yaml"])).toContain(
      "instruction file zero.md is a link to /dev/zero, a device: evalgate reads only regular files",
    );
  });

  it("an eval file over the size cap is refused with the cap and what to do", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "big.eval.yaml"), `# ${"x".repeat(MAX_EVAL_FILE_BYTES)}\n`);
    const message = await problemsOf(dir, ["big.eval.yaml"]);
    expect(message).toContain(
      "big.eval.yaml: the file is 64 MiB, over the 64 MiB a file of this kind may have",
    );
    expect(message).toContain("include: cases/*.yaml");
  });
});

describe("discovery and include globs with links", () => {
  it("a link to / and a link to its own folder in the evals folder: found at once, only the real files", async () => {
    // before: discovery followed the link to / and walked the whole filesystem (1.2 GB RSS at 60 s)
    const repo = tempDir();
    writeFiles(repo, { "evals/demo.eval.yaml": EVAL(TEST) });
    symlinkSync("/", path.join(repo, "evals", "root"));
    symlinkSync(".", path.join(repo, "evals", "loop"));
    const t = Date.now();
    expect(await discoverEvalFiles(["evals"], repo, repo)).toEqual([
      path.join(repo, "evals", "demo.eval.yaml"),
    ]);
    expect(Date.now() - t).toBeLessThan(5_000);
    // The same through a glob and through an include.
    expect(await discoverEvalFiles(["evals/**/*.eval.yaml"], repo, repo)).toHaveLength(1);
    writeFiles(repo, {
      "wrap.eval.yaml": EVAL(`  - include: evals/**/*.cases.yaml\n`),
      "evals/more.cases.yaml": TEST,
    });
    const plan = await loadPlan({ cwd: repo, paths: ["wrap.eval.yaml"] });
    expect(plan.cases.map((c) => c.identity.testId)).toEqual(["t"]);
  });

  it("a linked eval file is found when it points inside the repository, not when it points outside", async () => {
    const repo = tempDir();
    const outside = tempDir();
    writeFiles(repo, { "shared/common.eval.yaml": EVAL(TEST), "evals/.keep": "" });
    writeFiles(outside, { "foreign.eval.yaml": EVAL(TEST) });
    symlinkSync("../shared/common.eval.yaml", path.join(repo, "evals", "common.eval.yaml"));
    symlinkSync(path.join(outside, "foreign.eval.yaml"), path.join(repo, "evals", "foreign.eval.yaml"));
    expect(await discoverEvalFiles(["evals"], repo, repo)).toEqual([
      path.join(repo, "evals", "common.eval.yaml"),
    ]);
  });
});

describe("a large eval file", () => {
  it("tens of thousands of tests load without a stack overflow, even on a small stack", () => {
    // before: "internal error: Maximum call stack size exceeded … This is a bug" (exit 3): the plan
    // appended each file's tests with push(...tests), one argument per test. At Node's default stack
    // that broke near 130,000 tests; a 100 KB stack breaks it at 20,000.
    const dir = tempDir();
    const tests = Array.from(
      { length: 20_000 },
      (_, i) => `  - { id: t${i}, instruction: x, scorers: [{ type: file, path: a.txt }] }\n`,
    ).join("");
    writeFileSync(path.join(dir, "big.eval.yaml"), EVAL(tests));
    const r = spawnSync(process.execPath, ["--stack-size=100", CLI, "validate", "big.eval.yaml"], {
      cwd: dir,
      encoding: "utf8",
      timeout: 300_000,
    });
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("ok: 1 eval file, 20000 tests, 20000 cases");
    expect(r.status).toBe(0);
  }, 300_000);
});
