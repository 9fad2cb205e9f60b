/**
 * Bundles as evidence that cannot be changed unnoticed or turned against their readers: the seal,
 * the confined reader (paths, links, FIFOs), merge writing only inside its output, incomplete
 * bundles, and a --work-dir that holds the user's files.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, gitRepo, readJson, readJsonl, runCli, sh, tempDir } from "../helpers.js";

const EVAL = `targets:
  - { name: agent, provider: command, command: ["./agent.sh"] }
workspace: { seed: { path: app } }
tests:
  - id: t1
    instruction: fix it
    scorers: [{ type: command, run: "test -f fixed.txt" }]
  - id: t2
    instruction: fix it too
    scorers: [{ type: command, run: "test -f fixed.txt" }]
`;

function project(): string {
  const dir = gitRepo({
    "x.eval.yaml": EVAL,
    "app/x.txt": "x\n",
    "agent.sh": "#!/bin/sh\necho fixed > fixed.txt\n",
  });
  sh("chmod +x agent.sh && git add -A && git commit -qm agent", dir);
  return dir;
}

interface Summary {
  status: string;
  gate: { verdict: string; reasons: string[] };
  seal: { algorithm: string; files: Record<string, string>; digest: string };
}

/** A copy of a bundle to damage. */
function copyOf(bundle: string): string {
  const c = path.join(tempDir(), "copy");
  cpSync(bundle, c, { recursive: true });
  return c;
}

function mkfifo(file: string): void {
  execFileSync("mkfifo", [file]);
}

describe("the seal", () => {
  const dir = project();
  const bundle = path.join(tempDir(), "b");
  const run = runCli(["run", ".", "--out", bundle], dir);

  it("summary.json lists a sha256 of every other file, and says the run completed", () => {
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const s = readJson<Summary>(path.join(bundle, "summary.json"));
    expect(s.status).toBe("complete");
    expect(s.seal.algorithm).toBe("sha256");
    const files = sh("find . -type f ! -path ./summary.json | sed 's|^./||' | sort", bundle)
      .trim()
      .split("\n");
    expect(Object.keys(s.seal.files).sort()).toEqual(files);
    expect(files).toEqual(expect.arrayContaining(["index.jsonl", "comment.md", "report.html", "junit.xml"]));
    // The case summaries the index lists are sealed too.
    for (const row of readJsonl<{ summary_path: string }>(path.join(bundle, "index.jsonl")))
      expect(s.seal.files[row.summary_path]).toMatch(/^[0-9a-f]{64}$/);
    const sum = sh("sha256sum comment.md", bundle).split(" ")[0];
    expect(s.seal.files["comment.md"]).toBe(sum);
    expect(runCli(["report", bundle], dir).code).toBe(0);
    expect(runCli(["compare", bundle, bundle], dir).code).toBe(0);
  });

  it.each([
    [
      "an edited comment",
      (b: string) => appendFileSync(path.join(b, "comment.md"), "gate passed\n"),
      /changed: comment\.md/,
    ],
    [
      "a verdict rewritten in summary.json",
      (b: string) => {
        const f = path.join(b, "summary.json");
        writeFileSync(f, readFileSync(f, "utf8").replace('"verdict": "pass"', '"verdict": "fail"'));
      },
      /summary\.json changed/,
    ],
    [
      "a file dropped into the bundle",
      (b: string) => writeFileSync(path.join(b, "t1--agent-x.txt"), "planted\n"),
      /added: t1--agent-x\.txt/,
    ],
    ["a removed file", (b: string) => rmSync(path.join(b, "junit.xml")), /missing: junit\.xml/],
  ])("%s is detected by report, compare and run --baseline (exit 2)", (_what, damage, expected) => {
    const b = copyOf(bundle);
    damage(b);
    for (const args of [
      ["report", b],
      ["report", b, "--format", "json"],
      ["compare", bundle, b],
      ["run", ".", "--baseline", b, "--out", path.join(tempDir(), "o")],
    ]) {
      const r = runCli(args, dir);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/was changed after evalgate wrote it, so it is not trusted: /);
      expect(r.stderr).toMatch(expected);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("a bundle cut off mid-write reads as incomplete, not as something else", () => {
    const noSummary = copyOf(bundle);
    rmSync(path.join(noSummary, "summary.json"));
    let r = runCli(["report", noSummary], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /is an incomplete evalgate bundle \(its run was cut off .*\): summary\.json is missing/,
    );
    const cut = copyOf(bundle);
    truncateSync(path.join(cut, "summary.json"), 200);
    r = runCli(["compare", bundle, cut], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /is an incomplete evalgate bundle .*: its summary\.json is cut off or not valid JSON/,
    );
    // A folder that never was a bundle still says so.
    r = runCli(["report", "app"], dir);
    expect(r.stderr).toBe("evalgate: app is not an evalgate bundle: it has no summary.json\n");
  });
});

describe("untrusted bundles are read through one confined reader", () => {
  const dir = project();
  const base = tempDir();
  const bundle = path.join(base, "b");
  runCli(["run", ".", "--out", bundle], dir);
  const shards = [1, 2].map((i) => {
    const out = path.join(base, `s${i}`);
    runCli(["run", ".", "--shard", `${i}/2`, "--out", out], dir);
    return out;
  });
  const unseal = (b: string) => {
    const f = path.join(b, "summary.json");
    const s = JSON.parse(readFileSync(f, "utf8"));
    delete s.seal;
    writeFileSync(f, JSON.stringify(s));
  };

  it("merge refuses a shard whose index.jsonl climbs out with result_dir, and writes nothing outside its output", () => {
    const work = tempDir();
    const s1 = path.join(work, "s1");
    const s2 = path.join(work, "s2");
    cpSync(shards[0]!, s1, { recursive: true });
    cpSync(shards[1]!, s2, { recursive: true });
    // The payload the attack would copy, and where it would land.
    mkdirSync(path.join(s1, "payload"));
    writeFileSync(path.join(s1, "payload", "evil.sh"), "rm -rf ~\n");
    const index = path.join(s2, "index.jsonl");
    const rows = readJsonl<Record<string, unknown>>(index);
    rows[0]!.result_dir = "../s1/payload";
    writeFileSync(index, `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const out = path.join(work, "merged", "out");
    // Sealed, the edit is caught by the seal; unsealed (a forger leaves the seal out), by the path check.
    let r = runCli(["merge", s1, s2, "--out", out], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/changed: index\.jsonl/);
    // Every shard that cannot be trusted is named, in the order given (s1 holds the payload, an added file).
    expect(r.stderr.indexOf("s1 was changed")).toBeGreaterThan(-1);
    expect(r.stderr.indexOf("s1 was changed")).toBeLessThan(r.stderr.indexOf("s2 was changed"));
    unseal(s2);
    r = runCli(["merge", s1, s2, "--out", out], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /index\.jsonl line 1: result_dir "\.\.\/s1\/payload" leaves the bundle; refused/,
    );
    expect(existsSync(path.join(work, "merged"))).toBe(false);
    expect(sh("find . -name evil.sh", work).trim()).toBe("./s1/payload/evil.sh");
  });

  it("merge refuses a result folder that is a link out of the shard", () => {
    const work = tempDir();
    const s1 = path.join(work, "s1");
    cpSync(shards[0]!, s1, { recursive: true });
    unseal(s1);
    const row = readJsonl<{ result_dir: string }>(path.join(s1, "index.jsonl"))[0]!;
    const outside = path.join(work, "outside");
    mkdirSync(outside);
    writeFileSync(path.join(outside, "secret.txt"), "TOP SECRET\n");
    rmSync(path.join(s1, row.result_dir), { recursive: true });
    symlinkSync(outside, path.join(s1, row.result_dir));
    const out = path.join(work, "out");
    const r = runCli(["merge", s1, shards[1]!, "--out", out], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is a symbolic link: a bundle holds only folders and regular files/);
    expect(sh(`grep -rl "TOP SECRET" ${work} || true`, work).trim()).toBe(path.join(outside, "secret.txt"));
  });

  it("a FIFO in a bundle makes report, compare and run --baseline fail at once with a clear message", () => {
    const spots = ["summary.json", "index.jsonl", "comment.md"];
    for (const spot of spots) {
      const b = copyOf(bundle);
      if (spot === "index.jsonl") unseal(b);
      rmSync(path.join(b, spot));
      mkfifo(path.join(b, spot));
      for (const args of [
        ["report", b],
        ["report", b, "--format", "html"],
        ["compare", bundle, b],
        ["run", ".", "--baseline", b, "--out", path.join(tempDir(), "o")],
      ]) {
        // A hang is the bug: the runner's timeout would turn it into a failure here.
        const r = runCli(args, dir, {}, 60_000);
        expect(r.code, `${spot}: ${args.join(" ")}`).toBe(2);
        expect(r.stderr).toMatch(/FIFO/);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
    }
  });

  it("an unsealed bundle with a FIFO or an outward link deep inside still renders, without reading them", () => {
    const b = copyOf(bundle);
    unseal(b);
    const row = readJsonl<{ result_dir: string }>(path.join(b, "index.jsonl"))[0]!;
    const log = path.join(b, row.result_dir, "run-1", "agent.log");
    rmSync(log);
    mkfifo(log);
    const secret = path.join(tempDir(), "secret.txt");
    writeFileSync(secret, "TOP SECRET\n");
    const diff = path.join(b, row.result_dir, "run-1", "diff.patch");
    rmSync(diff);
    symlinkSync(secret, diff);
    const r = runCli(["report", b, "--format", "html"], dir, {}, 60_000);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("TOP SECRET");
    // compare, merge and the baseline compute verdicts from a bundle: there it is refused.
    const c = runCli(["compare", bundle, b], dir, {}, 60_000);
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/run-1\/(agent\.log|diff\.patch) is a (FIFO|symbolic link)/);
  });

  it("summary.json or index.jsonl that is a link out of the bundle is refused", () => {
    const b = copyOf(bundle);
    const outside = path.join(tempDir(), "index.jsonl");
    cpSync(path.join(b, "index.jsonl"), outside);
    rmSync(path.join(b, "index.jsonl"));
    symlinkSync(outside, path.join(b, "index.jsonl"));
    let r = runCli(["report", b], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /index\.jsonl is a symbolic link: a bundle holds only folders and regular files/,
    );
    // Unsealed, the confined read refuses it.
    unseal(b);
    r = runCli(["report", b], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/index\.jsonl: the path leaves the bundle; not read/);
  });

  it("fields of the wrong type are refused by compare, naming the file, line and key", () => {
    const b = copyOf(bundle);
    unseal(b);
    const index = path.join(b, "index.jsonl");
    const rows = readJsonl<Record<string, Record<string, unknown>>>(index);
    rows[1]!.attempts!.passed = "<img src=x>";
    writeFileSync(index, `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const r = runCli(["compare", bundle, b], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/index\.jsonl line 2 is not a row evalgate wrote: attempts\.passed: /);
  });
});

describe("--work-dir", () => {
  it("--work-dir . in a repository with uncommitted work leaves every file of it intact", () => {
    const dir = project();
    writeFileSync(path.join(dir, "notes.txt"), "uncommitted work\n");
    appendFileSync(path.join(dir, "app", "x.txt"), "edited, not committed\n");
    const before = sh("git status --porcelain && find . -path ./.git -prune -o -type f -print | sort", dir);
    const head = sh("git rev-parse HEAD", dir);
    const out = path.join(tempDir(), "b");
    const r = runCli(["run", ".", "--out", out, "--work-dir", "."], dir);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(sh("git status --porcelain && find . -path ./.git -prune -o -type f -print | sort", dir)).toBe(
      before,
    );
    expect(sh("git rev-parse HEAD", dir)).toBe(head);
    expect(readFileSync(path.join(dir, "notes.txt"), "utf8")).toBe("uncommitted work\n");
    expect(readdirSync(dir).filter((n) => n.startsWith("evalgate-"))).toEqual([]);
  });

  it("the work folder is private (0700); a new --work-dir is removed after the run", () => {
    const dir = project();
    const parent = tempDir();
    const kept = runCli(
      ["run", ".", "--out", path.join(parent, "b1"), "--work-dir", parent, "--keep-workspaces"],
      dir,
    );
    const root = readdirSync(parent).find((n) => n.startsWith("evalgate-"))!;
    expect(kept.stdout).toContain(`workspaces kept in ${path.join(parent, root)}`);
    expect(statSync(path.join(parent, root)).mode & 0o777).toBe(0o700);
    const fresh = path.join(parent, "new-work");
    expect(runCli(["run", ".", "--out", path.join(parent, "b2"), "--work-dir", fresh], dir).code).toBe(0);
    expect(existsSync(fresh)).toBe(false);
    const file = path.join(parent, "a-file");
    writeFileSync(file, "x");
    const r = runCli(["run", ".", "--out", path.join(parent, "b3"), "--work-dir", file], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`evalgate: --work-dir ${file} is a file, not a folder\n`);
  });
});

describe("a full disk", () => {
  const probe = spawnSync("unshare", ["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], {
    encoding: "utf8",
  });
  it.skipIf(probe.status !== 0)(
    "is a clear message naming the bundle folder and exit 2, never 'a bug' (a 128 KiB tmpfs in a mount namespace)",
    () => {
      const dir = project();
      // The agent prints more than the disk holds: its log in the bundle fills it.
      writeFileSync(
        path.join(dir, "agent.sh"),
        "#!/bin/sh\nhead -c 400000 /dev/zero | tr '\\0' a\necho ok > fixed.txt\n",
      );
      const full = path.join(tempDir(), "full");
      mkdirSync(full);
      const out = path.join(full, "b");
      const r = spawnSync(
        "unshare",
        [
          "-rm",
          "sh",
          "-c",
          `mount -t tmpfs -o size=128k tmpfs "$0" && exec "$1" "$2" run . --out "$3" --work-dir "$4"`,
          full,
          process.execPath,
          CLI,
          out,
          path.join(tempDir(), "w"),
        ],
        { cwd: dir, encoding: "utf8", env: { ...process.env, CI: "1" }, timeout: 120_000 },
      );
      expect(r.status, r.stderr + r.stdout).toBe(2);
      expect(r.stderr).toMatch(/^evalgate: no space left on the disk/m);
      expect(r.stderr).toContain(`The bundle folder ${out} keeps what was written`);
      // The CLI's own words for the folders to move (the action names its inputs instead).
      expect(r.stderr).toContain("give --out and --work-dir folders on a disk with room");
      expect(r.stderr).not.toMatch(/bug|\n\s+at /);
    },
  );
});
