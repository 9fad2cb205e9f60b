import {
  chmodSync,
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { WorkspaceSpec } from "../../src/config/types.js";
import { ChildProcessRunner } from "../../src/sandbox/process.js";
import { captureDiff, materializeAttempt } from "../../src/workspace/attempt.js";
import { WorkspaceError } from "../../src/workspace/errors.js";
import { StartStore } from "../../src/workspace/start.js";
import { gitRepo, sh, tempDir, writeFiles } from "../helpers.js";

const runner = new ChildProcessRunner();

function spec(seed: WorkspaceSpec["seed"], command?: string): WorkspaceSpec {
  return {
    seed,
    setup: { envPassthrough: [], evalDir: "/tmp", ...(command ? { command: { shell: command } } : {}) },
    protected: [],
    verifiers: [],
  };
}

describe("prepared start and attempt workspaces", () => {
  it("captures additions, deletions, renames, mode changes, untracked and binary files as a patch git apply accepts", async () => {
    const src = tempDir();
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n");
    writeFiles(src, {
      "a.txt": "alpha\n",
      "b.txt": "bravo\n",
      "move/me.txt": `${lines}\n`,
      "run.sh": "echo hi\n",
      "keep.bin": "\u0000\u0001\u0002",
    });
    const store = new StartStore(tempDir(), runner);
    const start = await store.prepare(spec({ kind: "path", path: src }), 60_000);
    const ws = path.join(tempDir(), "ws");
    await materializeAttempt(start, ws);

    writeFileSync(path.join(ws, "a.txt"), "alpha changed\n");
    unlinkSync(path.join(ws, "b.txt"));
    renameSync(path.join(ws, "move/me.txt"), path.join(ws, "moved.txt"));
    chmodSync(path.join(ws, "run.sh"), 0o755);
    writeFileSync(path.join(ws, "new.txt"), "brand new\n");
    writeFileSync(path.join(ws, ":colon.txt"), "looks like a raw record\n");
    writeFileSync(path.join(ws, "image.bin"), Buffer.from([0, 255, 1, 254, 0, 7]));
    writeFileSync(path.join(ws, "keep.bin"), Buffer.from([9, 0, 9]));
    symlinkSync("a.txt", path.join(ws, "link"));
    // An agent that wipes its .git cannot hide its changes: capture uses the start commit's store.
    rmSync(path.join(ws, ".git"), { recursive: true, force: true });

    const diff = await captureDiff(start, ws, path.join(tempDir(), "index"));
    const byPath = Object.fromEntries(diff.files.map((f) => [f.path, f]));
    expect(byPath["a.txt"]).toMatchObject({ status: "modified", additions: 1, deletions: 1 });
    expect(byPath["b.txt"]).toMatchObject({ status: "deleted" });
    expect(byPath["moved.txt"]).toMatchObject({ status: "renamed", oldPath: "move/me.txt" });
    expect(byPath["run.sh"]).toMatchObject({ modeChange: "100644 → 100755" });
    expect(byPath["new.txt"]).toMatchObject({ status: "added", additions: 1 });
    expect(byPath[":colon.txt"]).toMatchObject({ status: "added", additions: 1 });
    expect(byPath["image.bin"]).toMatchObject({ status: "added", binary: true });
    expect(byPath["keep.bin"]).toMatchObject({ status: "modified", binary: true });
    expect(byPath.link).toMatchObject({ status: "added" });

    // The patch applies to a fresh checkout of the start commit and reproduces the workspace.
    const check = path.join(tempDir(), "check");
    sh(`git clone -q ${start.dir} ${check} && git -C ${check} checkout -q ${start.sha}`, "/tmp");
    const patch = path.join(tempDir(), "diff.patch");
    writeFileSync(patch, diff.patch);
    sh(`git apply --check ${patch} && git apply ${patch}`, check);
    expect(readFileSync(path.join(check, "image.bin"))).toEqual(Buffer.from([0, 255, 1, 254, 0, 7]));
    expect(readFileSync(path.join(check, "moved.txt"), "utf8")).toBe(`${lines}\n`);
    expect(sh("git status --porcelain", check)).toContain("run.sh");
  });

  it("gives every attempt a fresh copy; setup runs once, before the start commit, and is not in the diff", async () => {
    const src = tempDir();
    writeFiles(src, { "app.txt": "v1\n", ".gitignore": "deps/\n" });
    const work = tempDir();
    const store = new StartStore(work, runner);
    const ws = spec(
      { kind: "path", path: src },
      "mkdir -p deps && echo lib > deps/lib.txt && echo generated > gen.txt && echo ran >> ../setup-count",
    );
    const [b1, b2] = await Promise.all([store.prepare(ws, 60_000), store.prepare(ws, 60_000)]);
    expect(b1).toBe(b2);
    expect(readFileSync(path.join(work, "baselines", b1.key, "setup-count"), "utf8")).toBe("ran\n");
    const a = path.join(tempDir(), "a");
    const b = path.join(tempDir(), "b");
    await materializeAttempt(b1, a);
    await materializeAttempt(b1, b);
    expect(readFileSync(path.join(a, "deps/lib.txt"), "utf8")).toBe("lib\n");
    writeFileSync(path.join(a, "app.txt"), "changed by attempt a\n");
    expect(readFileSync(path.join(b, "app.txt"), "utf8")).toBe("v1\n");
    const diffB = await captureDiff(b1, b, path.join(tempDir(), "i"));
    expect(diffB.files).toEqual([]);
    const diffA = await captureDiff(b1, a, path.join(tempDir(), "i"));
    expect(diffA.files.map((f) => f.path)).toEqual(["app.txt"]);
    expect(existsSync(path.join(src, ".git"))).toBe(false);
  });

  it("shares no file with the start tree or another attempt: an in-place edit stays in its attempt", async () => {
    const src = tempDir();
    writeFiles(src, {
      "app.txt": "original\n",
      "deps/lib.js": "module.exports = 1;\n",
      ".gitignore": "deps/\n",
    });
    const store = new StartStore(tempDir(), runner);
    const start = await store.prepare(spec({ kind: "path", path: src }), 60_000);
    const a = path.join(tempDir(), "a");
    const b = path.join(tempDir(), "b");
    await Promise.all([materializeAttempt(start, a), materializeAttempt(start, b)]);
    const [pack] = readdirSync(path.join(start.dir, ".git/objects/pack")).filter((f) => f.endsWith(".pack"));
    const packOf = (root: string) => path.join(root, ".git/objects/pack", pack!);
    const basePack = readFileSync(packOf(start.dir));
    // Writes through the same inode (open r+, write at offset 0), as `>>` or an mmap would: a hard
    // link would carry them to every copy. Tracked, ignored and .git files alike.
    for (const rel of ["app.txt", "deps/lib.js", `.git/objects/pack/${pack}`]) {
      chmodSync(path.join(a, rel), 0o644);
      const fd = openSync(path.join(a, rel), "r+");
      writeSync(fd, Buffer.from("XXXX"), 0, 4, 0);
      closeSync(fd);
      expect(statSync(path.join(a, rel)).ino).not.toBe(statSync(path.join(start.dir, rel)).ino);
    }
    for (const root of [start.dir, b]) {
      expect(readFileSync(path.join(root, "app.txt"), "utf8")).toBe("original\n");
      expect(readFileSync(path.join(root, "deps/lib.js"), "utf8")).toBe("module.exports = 1;\n");
    }
    expect(readFileSync(packOf(start.dir)).equals(basePack)).toBe(true);
    expect(readFileSync(packOf(b)).equals(basePack)).toBe(true);
    // The capture of a reads the start commit's intact store, and sees exactly a's edit.
    const diffA = await captureDiff(start, a, path.join(tempDir(), "i"));
    expect(diffA.files.map((f) => f.path)).toEqual(["app.txt"]);
    const diffB = await captureDiff(start, b, path.join(tempDir(), "i"));
    expect(diffB.files).toEqual([]);
  });

  it("reports a failing setup command as a setup failure with its log", async () => {
    const store = new StartStore(tempDir(), runner);
    const err = await store
      .prepare(spec({ kind: "empty" }, "echo installing; exit 3"), 60_000)
      .catch((e) => e);
    expect(err).toBeInstanceOf(WorkspaceError);
    expect(err.failure).toBe("setup");
    expect(err.message).toContain("setup command exited with 3: installing");
    expect(readFileSync(err.setupLog, "utf8")).toContain("installing");
  });

  describe("folder seeds", () => {
    it("copies the folder as it is (links as links, modes, times, odd names), without .git or .evalgate at any depth or special files, hard links as files of their own", async () => {
      const seed = tempDir();
      writeFiles(seed, {
        "run.sh": "#!/bin/sh\n",
        "src/a.txt": "a\n",
        "src/.git/config": "nested repository\n",
        "src/.evalgate/results/x": "old bundle\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        "lib/.git": "gitdir: ../.git/modules/lib\n",
        "lib/b.txt": "b\n",
        "space name/new\nline.txt": "odd\n",
        // Only names that are exactly .git or .evalgate are left out.
        ".github/workflows/ci.yml": "on: push\n",
        "x.git/f": "kept\n",
        ".gitignore": "*.log\n",
      });
      chmodSync(path.join(seed, "run.sh"), 0o755);
      symlinkSync("src/a.txt", path.join(seed, "link"));
      symlinkSync("/etc/hostname", path.join(seed, "outside"));
      sh("ln src/a.txt hard.txt && touch -d 2001-02-03T04:05:06Z src/a.txt && mkfifo src/fifo", seed);
      // Special files are left out: a socket (a dev server's, left behind), a FIFO, a device (as root).
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(path.join(seed, "dev.sock"), resolve));
      if (process.getuid?.() === 0) sh("mknod zero c 1 5", seed);
      const store = new StartStore(tempDir(), runner);
      const b = await store.prepare(spec({ kind: "path", path: seed }), 60_000).finally(() => server.close());
      for (const gone of ["src/fifo", "dev.sock", "zero"]) {
        expect(existsSync(path.join(b.dir, gone)), gone).toBe(false);
      }
      const files = sh("git ls-files -z", b.dir).split("\0").filter(Boolean).sort();
      expect(files).toEqual(
        [
          ".github/workflows/ci.yml",
          ".gitignore",
          "x.git/f",
          "hard.txt",
          "lib/b.txt",
          "link",
          "outside",
          "run.sh",
          "space name/new\nline.txt",
          "src/a.txt",
        ].sort(),
      );
      for (const gone of ["src/.git", "src/.evalgate", "lib/.git"])
        expect(existsSync(path.join(b.dir, gone))).toBe(false);
      expect(statSync(path.join(b.dir, "run.sh")).mode & 0o777).toBe(0o755);
      expect(statSync(path.join(b.dir, "src/a.txt")).mtime.toISOString()).toBe("2001-02-03T04:05:06.000Z");
      expect(sh("readlink link outside", b.dir)).toBe("src/a.txt\n/etc/hostname\n");
      // The copy's hard link is a file of its own: writing one name leaves the other as it was.
      expect(statSync(path.join(b.dir, "hard.txt")).nlink).toBe(1);
      writeFileSync(path.join(b.dir, "hard.txt"), "changed\n");
      expect(readFileSync(path.join(b.dir, "src/a.txt"), "utf8")).toBe("a\n");
      expect(readFileSync(path.join(seed, "src/a.txt"), "utf8")).toBe("a\n");
    });

    it("packs the start commit whole: no loose object in the .git every attempt copies, and git finds nothing wrong", async () => {
      const seed = tempDir();
      const files: Record<string, string> = {};
      for (let i = 0; i < 300; i++) files[`src/m${i % 7}/f${i}.txt`] = `file ${i}\n`.repeat(1 + (i % 5));
      writeFiles(seed, files);
      const store = new StartStore(tempDir(), runner);
      const b = await store.prepare(spec({ kind: "path", path: seed }), 60_000);
      const counts = Object.fromEntries(
        sh("git count-objects -v", b.dir)
          .trim()
          .split("\n")
          .map((l) => l.split(": ")),
      );
      expect(counts.count, sh("git count-objects -v", b.dir)).toBe("0");
      expect(Number(counts["in-pack"])).toBeGreaterThanOrEqual(300);
      sh("git fsck --strict --no-dangling", b.dir);
      expect(sh("git ls-files", b.dir).trim().split("\n")).toHaveLength(300);
      expect(sh("git diff --stat HEAD", b.dir)).toBe("");
    });

    it("reports a seed folder that cannot be copied, naming it and the reason", async () => {
      const seed = path.join(tempDir(), "file-not-folder");
      writeFileSync(seed, "x\n");
      const store = new StartStore(tempDir(), runner);
      const err = await store.prepare(spec({ kind: "path", path: seed }), 60_000).catch((e) => e);
      expect(err).toBeInstanceOf(WorkspaceError);
      expect(err.failure).toBe("seed");
      expect(err.message).toMatch(new RegExp(`^cannot copy ${seed}: tar: .*Not a directory`));
    });
  });

  describe("git seeds", () => {
    const repo = gitRepo({ "README.md": "v1\n" });
    sh(
      "git tag v1 && echo v2 > README.md && git commit -qam v2 && git checkout -q -b feature && echo feat > README.md && git commit -qam feat && git checkout -q main",
      repo,
    );
    const v1 = sh("git rev-parse v1", repo).trim();

    it.each([
      ["a branch", "feature", "feat\n"],
      ["a tag", "v1", "v1\n"],
      ["a full sha", v1, "v1\n"],
      ["a short sha", v1.slice(0, 8), "v1\n"],
      ["no ref (the default branch)", undefined, "v2\n"],
    ])("checks out %s", async (_what, ref, content) => {
      const store = new StartStore(tempDir(), runner);
      for (const url of [repo, `file://${repo}`]) {
        const b = await store.prepare(spec({ kind: "git", url, ...(ref ? { ref } : {}) }), 60_000);
        expect(readFileSync(path.join(b.dir, "README.md"), "utf8")).toBe(content);
      }
    });

    it("fails loudly on a ref that does not exist, never falling back to the default branch", async () => {
      const store = new StartStore(tempDir(), runner);
      const err = await store.prepare(spec({ kind: "git", url: repo, ref: "v9" }), 60_000).catch((e) => e);
      expect(err).toBeInstanceOf(WorkspaceError);
      expect(err.failure).toBe("config");
      expect(err.message).toContain(`ref "v9" was not found in ${repo}`);
    });

    it("reports a repository that cannot be fetched", async () => {
      const store = new StartStore(tempDir(), runner);
      const err = await store
        .prepare(spec({ kind: "git", url: "/nonexistent/repo" }), 60_000)
        .catch((e) => e);
      expect(err.failure).toBe("seed");
      expect(err.message).toContain("cannot fetch /nonexistent/repo");
    });
  });
});
