/**
 * Opening the exam's commit (pipeline/exam.ts) with real git: from the checkout's objects, by a
 * shallow fetch from origin, or from a tarball (GitHub's API, for a checkout that can fetch
 * nothing); never from the checkout's work tree, and never silently from nowhere.
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, readlinkSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { openExam } from "../../src/pipeline/exam.js";
import { gitRepo, sh, tempDir, writeFiles } from "../helpers.js";

const head = (dir: string) => sh("git rev-parse HEAD", dir).trim();

/** A repository whose first commit is the base; the work tree then changes the exam. */
function repo(): { dir: string; base: string } {
  const dir = gitRepo({
    "evals/demo.eval.yaml": "base eval\n",
    "evals/verify.sh": "#!/bin/sh\nexit 1\n",
    "evals/kept.txt": "export-ignored, but part of the commit\n",
    ".gitattributes": "evals/kept.txt export-ignore\n",
    ".gitignore": "ignored/\n",
  });
  sh("chmod +x evals/verify.sh && ln -s verify.sh evals/link.sh && git add -A && git commit -qm base", dir);
  const base = head(dir);
  writeFiles(dir, { "evals/demo.eval.yaml": "the PR's eval\n", "ignored/x": "built\n", "new.txt": "n\n" });
  sh("git commit -qam 'the PR'", dir);
  return { dir, base };
}

const FIX = "check out with fetch-depth: 0";

describe("openExam", () => {
  it("writes the base commit's files outside the checkout, as committed (modes, links, export-ignore)", async () => {
    const { dir, base } = repo();
    const exam = await openExam(dir, { ref: base, name: "the base commit", fix: FIX });
    try {
      expect(exam.via).toBe("checkout");
      expect(exam.sha).toBe(base);
      expect(exam.label).toBe(`the base commit ${base.slice(0, 7)}`);
      expect(path.relative(dir, exam.root).startsWith("..")).toBe(true);
      expect(readFileSync(path.join(exam.root, "evals/demo.eval.yaml"), "utf8")).toBe("base eval\n");
      expect(statSync(path.join(exam.root, "evals/verify.sh")).mode & 0o111).not.toBe(0);
      expect(readlinkSync(path.join(exam.root, "evals/link.sh"))).toBe("verify.sh");
      expect(existsSync(path.join(exam.root, "evals/kept.txt"))).toBe(true);
      expect(existsSync(path.join(exam.root, "new.txt"))).toBe(false);
      // The checkout's files git counts: tracked and new, not ignored.
      expect(exam.checkoutFiles?.has("new.txt")).toBe(true);
      expect(exam.checkoutFiles?.has("evals/demo.eval.yaml")).toBe(true);
      expect(exam.checkoutFiles?.has("ignored/x")).toBe(false);
    } finally {
      await exam.close();
    }
    expect(existsSync(exam.root)).toBe(false);
  });

  it("a ref name resolves in the checkout; the label names it", async () => {
    const { dir, base } = repo();
    sh(`git tag v1 ${base}`, dir);
    const exam = await openExam(dir, { ref: "v1", fix: FIX });
    await exam.close();
    expect(exam.sha).toBe(base);
    expect(exam.label).toBe(`v1 (${base.slice(0, 7)})`);
  });

  it("a shallow checkout without the base commit fetches it from origin", async () => {
    const { dir, base } = repo();
    const shallow = tempDir("evalgate-shallow-");
    sh(`git clone -q --depth 1 file://${dir} ${shallow}`, tempDir());
    expect(() => sh(`git cat-file -e ${base}^{commit}`, shallow)).toThrow();
    const exam = await openExam(shallow, { ref: base, fix: FIX });
    try {
      expect(exam.via).toBe("fetch");
      expect(readFileSync(path.join(exam.root, "evals/demo.eval.yaml"), "utf8")).toBe("base eval\n");
    } finally {
      await exam.close();
    }
  });

  it("a checkout that can fetch nothing reads the commit from the tarball it is given", async () => {
    const { dir, base } = repo();
    const shallow = tempDir("evalgate-shallow-");
    sh(`git clone -q --depth 1 file://${dir} ${shallow}`, tempDir());
    sh("git remote set-url origin https://127.0.0.1:9/nowhere.git", shallow);
    const asked: string[] = [];
    const tarball = async (sha: string) => {
      asked.push(sha);
      // What GitHub serves: git archive of the commit under one top folder.
      return execFileSync("git", ["archive", "--format=tar.gz", `--prefix=o-r-${sha.slice(0, 7)}/`, sha], {
        cwd: dir,
      });
    };
    const exam = await openExam(shallow, { ref: base, tarball, fix: FIX });
    try {
      expect(asked).toEqual([base]);
      expect(exam.via).toBe("tarball");
      expect(readFileSync(path.join(exam.root, "evals/demo.eval.yaml"), "utf8")).toBe("base eval\n");
      expect(lstatSync(path.join(exam.root, "evals/link.sh")).isSymbolicLink()).toBe(true);
    } finally {
      await exam.close();
    }
  });

  it("without the commit, a fetch or a tarball, it stops with the fix: never the checkout's own exam", async () => {
    const { dir } = repo();
    const missing = "0123456789abcdef0123456789abcdef01234567";
    const error = await openExam(dir, { ref: missing, name: "the base commit", fix: FIX }).catch((e) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(
      `the exam cannot be read from the base commit ${missing}: the commit is not in the checkout and could not be fetched from origin. ${FIX}`,
    );
    await expect(openExam(dir, { ref: "--upload-pack=x", fix: FIX })).rejects.toThrow(
      /is not a commit or a ref/,
    );
  });
});
