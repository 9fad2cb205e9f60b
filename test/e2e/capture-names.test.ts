/**
 * What an agent's file names and file sizes do to the capture and everything after it: names with
 * line breaks, tabs, glob characters, quotes, bytes that are not UTF-8, 255 bytes, markup; and
 * sparse files of many GB that `git add` would read byte by byte (docs/decisions/0076).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { readJson, readJsonl, runCliAsync, tempDir, writeFiles } from "../helpers.js";

const LONG = `${"L".repeat(251)}.txt`;
const AGENT = `#!/bin/bash
case "$EVALGATE_TEST_ID" in
  names)
    echo changed > a.txt
    printf 'n\\n' > "$(printf 'new\\nline.txt')"
    printf 't\\nu\\n' > "$(printf 'tab\\there.txt')"
    printf 'd\\n' > ./-dash.txt
    printf 'g\\n' > 'star*q?[b].txt'
    printf 'b\\n' > 'back\\slash.txt'
    printf 'q\\n' > "quo\\"te's.txt"
    printf 'u\\n' > "$(printf 'bad\\xff\\xfe.txt')"
    printf 'l\\n' > ${LONG}
    printf 'h\\n' > '<img src=x onerror=alert(1)>.js'
    printf 'c\\n' > '\`x\`'
    printf 'm\\n' > '@octocat.txt'
    printf 'p\\n' > '| pipe |.txt'
    # Hidden by an ignore rule of the agent's own, with a name that is not UTF-8.
    mkdir hide && printf '*\\n' > hide/.gitignore && printf 'h\\n' > "hide/$(printf 'x\\xff.js')" ;;
  protected)
    printf 'u\\n' > "test/$(printf 'bad\\xff.js')"
    printf 'v\\n' > "test/$(printf 'bad\\xfe.js')"
    printf 'n\\n' > "test/$(printf 'nl\\n.js')" ;;
  big)
    truncate -s 50G big.bin && truncate -s 20G a.txt
    mkdir hide && printf '*\\n' > hide/.gitignore && truncate -s 30G hide/huge ;;
esac
exit 0
`;

interface Row {
  test_id: string;
  runs: { dir: string }[];
}
interface Result {
  status: string;
  failure_kind: string | null;
  message: string | null;
  warnings?: string[];
  tampered?: string[];
  diff: { files: { path: string; additions: number }[] } | null;
}

describe("file names and sizes an agent chooses, through capture, restore, scorers and reports", async () => {
  const dir = tempDir();
  writeFiles(dir, {
    "project/a.txt": "a\n",
    "project/test/t.js": "protected\n",
    "agents/a.sh": AGENT,
    "e.eval.yaml": `name: names
targets:
  - { name: ag, provider: command, command: ["./agents/a.sh"] }
workspace:
  seed: { path: project }
  protected: ["test/**"]
tests:
  - id: names
    instruction: x
    scorers:
      - { name: shape, type: diff, deny: ["**/*.sh"], allow: ["*", "hide/*"] }
  - id: protected
    instruction: x
    scorers:
      - { name: restored, type: command, run: 'test "$(ls test)" = t.js' }
  - id: big
    instruction: x
    scorers:
      - { name: exists, type: file, path: a.txt }
      - { name: no-big-file, type: diff, deny: ["big.bin"] }
`,
  });
  chmodSync(path.join(dir, "agents/a.sh"), 0o755);
  const out = path.join(dir, "bundle");
  const work = path.join(dir, "work");
  const started = Date.now();
  const result = await runCliAsync(["run", ".", "--out", out, "--work-dir", work], dir, {}, 120_000);
  const seconds = (Date.now() - started) / 1000;
  const rows = existsSync(path.join(out, "index.jsonl")) ? readJsonl<Row>(path.join(out, "index.jsonl")) : [];
  const attemptDir = (id: string) => path.join(out, rows.find((r) => r.test_id === id)!.runs[0]!.dir);
  const resultOf = (id: string) => readJson<Result>(path.join(attemptDir(id), "result.json"));

  it("finishes and removes every workspace", () => {
    expect(result.code, result.stderr).toBe(1);
    expect(rows.map((r) => r.test_id).sort()).toEqual(["big", "names", "protected"]);
    expect(existsSync(work) ? readdirSync(work) : []).toEqual([]);
  });

  it("captures every name in a patch that git applies to the baseline, with a per-file listing", () => {
    const check = tempDir("evalgate-apply-");
    cpSync(path.join(dir, "project"), check, { recursive: true });
    const patch = path.join(attemptDir("names"), "diff.patch");
    execFileSync("git", ["init", "-q", "."], { cwd: check });
    execFileSync("git", ["apply", "--check", patch], { cwd: check });
    execFileSync("git", ["apply", patch], { cwd: check });
    const names = readdirSync(check, { encoding: "buffer" }).map((n) => n.toString("latin1"));
    expect(names).toEqual(
      expect.arrayContaining(["new\nline.txt", "tab\there.txt", "bad\xff\xfe.txt", LONG]),
    );
    expect(
      readdirSync(path.join(check, "hide"), { encoding: "buffer" }).map((n) => n.toString("latin1")),
    ).toContain("x\xff.js");
    const files = resultOf("names").diff!.files;
    const byPath = new Map(files.map((f) => [f.path, f.additions]));
    // Every file has its own line counts, a tab in the name included.
    expect(byPath.get("tab\there.txt")).toBe(2);
    expect(byPath.get("new\nline.txt")).toBe(1);
    expect(byPath.get("bad\uFFFD\uFFFD.txt")).toBe(1);
    expect(byPath.get("hide/x\uFFFD.js")).toBe(1);
    expect(files).toHaveLength(15);
  });

  it("matches globs across a line break in a name", () => {
    const r = resultOf("names");
    // `allow: ["*"]` covers every top-level name, "new<newline>line.txt" too: only the shape of the
    // listing decides, and nothing is outside.
    expect(r.status, r.message ?? "").toBe("passed");
    const p = resultOf("protected");
    expect(p.failure_kind).toBe("tampered");
    // Both names that are not UTF-8 read alike, and both files were removed before scoring.
    expect(p.tampered).toEqual(["test/bad\uFFFD.js", "test/nl\n.js"]);
    expect(p.diff!.files.map((f) => f.path).sort()).toEqual([
      "test/bad\uFFFD.js",
      "test/bad\uFFFD.js",
      "test/nl\n.js",
    ]);
    const grading = readJson<{ scorers: { name: string; passed: boolean }[] }>(
      path.join(attemptDir("protected"), "grading.json"),
    );
    expect(grading.scorers.find((x) => x.name === "restored")?.passed).toBe(true);
  });

  it("renders the names as text in the comment, report.html and junit.xml", () => {
    const comment = readFileSync(path.join(out, "comment.md"), "utf8");
    const html = readFileSync(path.join(out, "report.html"), "utf8");
    const junit = readFileSync(path.join(out, "junit.xml"), "utf8");
    for (const doc of [comment, html]) expect(doc).not.toContain("<img src=x");
    expect(comment).not.toMatch(/@octocat/);
    expect(XMLValidator.validate(junit)).toBe(true);
    expect(junit).not.toContain("<img src=x");
  });

  it("never reads a file over limits.diff: a placeholder names its size, quickly", () => {
    const r = resultOf("big");
    expect(r.warnings).toEqual(
      expect.arrayContaining([
        "big.bin (50 GiB) is larger than limits.diff: not read, a placeholder stands for it in diff.patch",
        "a.txt (20 GiB) is larger than limits.diff: not read, a placeholder stands for it in diff.patch",
        "hide/huge (30 GiB) is larger than limits.diff: not read, a placeholder stands for it in diff.patch",
      ]),
    );
    const patch = readFileSync(path.join(attemptDir("big"), "diff.patch"), "utf8");
    expect(patch).toContain(
      "+++ b/big.bin\n@@ -0,0 +1 @@\n+evalgate: this file (50 GiB) is larger than limits.diff",
    );
    expect(patch).toContain("+++ b/hide/huge");
    // The change is still listed and judged: the diff scorer sees big.bin.
    expect(r.status).toBe("failed");
    expect(r.message).toContain("changed denied file big.bin");
    // Hashing 100 GB would take many minutes; the whole run takes seconds.
    expect(seconds).toBeLessThan(90);
  });
});
