import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as tar from "tar";
import { describe, expect, it } from "vitest";
import yazl from "yazl";
import { type ArchiveLimits, DEFAULT_ARCHIVE_LIMITS } from "../../src/config/types.js";
import { ArchiveRefused, unpackArchive } from "../../src/workspace/archive.js";
import { sh, tempDir, writeFiles } from "../helpers.js";
import { type TarEntrySpec, tarBytes, tarGzBytes, type ZipEntrySpec, zipBytes } from "./archive-builders.js";

const MB = 1_000_000;

function write(name: string, bytes: Buffer): string {
  const file = path.join(tempDir("evalgate-archive-"), name);
  writeFileSync(file, bytes);
  return file;
}

/** Unpacks into a fresh folder; returns the refusal (or undefined) and whether anything was written. */
async function tryUnpack(file: string, limits: Partial<ArchiveLimits> = {}) {
  const parent = tempDir("evalgate-unpack-");
  const dest = path.join(parent, "tree");
  const error = await unpackArchive(file, dest, { ...DEFAULT_ARCHIVE_LIMITS, ...limits }).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, dest, parent, wrote: existsSync(dest) };
}

async function expectRefused(file: string, entry: string | undefined, reason: RegExp, limits = {}) {
  const r = await tryUnpack(file, limits);
  expect(r.error).toBeInstanceOf(ArchiveRefused);
  const refused = r.error as ArchiveRefused;
  expect(refused.entry).toBe(entry);
  if (entry !== undefined) expect(refused.message).toContain(`entry "${entry}"`);
  expect(refused.message).toMatch(reason);
  // Checked before anything is written: the destination was never created.
  expect(r.wrote).toBe(false);
  expect(readdirSync(r.parent)).toEqual([]);
  return refused;
}

function yazlZip(files: Record<string, { data: string; mode?: number }>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, f] of Object.entries(files))
    zip.addBuffer(Buffer.from(f.data), name, { mode: f.mode ?? 0o100644 });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on("data", (c: Buffer) => chunks.push(c));
    zip.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on("error", reject);
  });
}

describe("archive seeds: what is refused, naming the entry", () => {
  const good: ZipEntrySpec = { name: "ok.txt", data: "fine\n" };

  it.each<[string, ZipEntrySpec]>([
    ["zip-slip (..)", { name: "../evil.txt", data: "pwned" }],
    ["zip-slip deep inside", { name: "src/../../evil.txt", data: "pwned" }],
    ["an absolute path", { name: "/tmp/evalgate-evil.txt", data: "pwned" }],
    ["a symlink", { name: "link", data: "/etc/passwd", mode: 0o120777 }],
    ["a device file", { name: "dev/null", mode: 0o020666 }],
  ])("zip: %s", async (_what, bad) => {
    const file = write("bad.zip", zipBytes([good, bad]));
    const reason = bad.name.includes("..")
      ? /leaves the archive's folder/
      : bad.name.startsWith("/")
        ? /is an absolute path/
        : bad.mode === 0o120777
          ? /is a symbolic link/
          : /is a character device/;
    await expectRefused(file, bad.name, reason);
    expect(existsSync("/tmp/evalgate-evil.txt")).toBe(false);
  });

  it.each<[string, TarEntrySpec, RegExp]>([
    ["zip-slip (..)", { name: "../evil.txt", data: "pwned" }, /leaves the archive's folder/],
    ["an absolute path", { name: "/tmp/evalgate-evil.txt", data: "pwned" }, /is an absolute path/],
    [
      "a symlink",
      { name: "link", type: "2", linkname: "/etc/passwd" },
      /is a symbolic link \(to "\/etc\/passwd"\)/,
    ],
    ["a hard link", { name: "hard", type: "1", linkname: "ok.txt" }, /is a hard link \(to "ok.txt"\)/],
    ["a character device", { name: "tty", type: "3" }, /is a character device/],
    ["a block device", { name: "disk", type: "4" }, /is a block device/],
    ["a fifo", { name: "pipe", type: "6" }, /is a fifo/],
  ])("tar and tar.gz: %s", async (_what, bad, reason) => {
    const entries: TarEntrySpec[] = [{ name: "ok.txt", data: "fine\n" }, bad];
    const plain = write("bad.tar", tarBytes(entries));
    // A real tar: GNU tar reads it and sees the same entry.
    expect(sh(`tar -tf ${plain}`, "/tmp")).toContain(bad.name.replace(/^\//, ""));
    await expectRefused(plain, bad.name, reason);
    await expectRefused(write("bad.tar.gz", tarGzBytes(entries)), bad.name, reason);
  });

  it("zip: a compression bomb whose header lies about its size is stopped by the real inflated stream", async () => {
    // 50 MB of zeros deflates to about 50 KB; the headers claim 1,000 bytes.
    const bomb = zipBytes([good, { name: "bomb.bin", data: Buffer.alloc(50 * MB), declaredSize: 1000 }]);
    expect(bomb.length).toBeLessThan(200_000);
    const file = write("bomb.zip", bomb);
    await expectRefused(file, "bomb.bin", /inflates past the 1000 bytes its header declares/);
  });

  it("zip: an honest entry past max_unpacked_size is refused", async () => {
    const file = write("big.zip", zipBytes([good, { name: "big.bin", data: Buffer.alloc(3 * MB) }]));
    await expectRefused(file, "big.bin", /past max_unpacked_size \(2 MB\)/, { maxUnpackedSize: 2 * MB });
  });

  it("tar.gz: a gzip bomb is stopped by the decompressed size, not by what the file weighs", async () => {
    const bomb = tarGzBytes([
      { name: "ok.txt", data: "fine\n" },
      { name: "zeros.bin", data: Buffer.alloc(30 * MB) },
    ]);
    expect(bomb.length).toBeLessThan(200_000);
    const file = write("bomb.tar.gz", bomb);
    await expectRefused(file, "zeros.bin", /past max_unpacked_size \(10 MB\)/, { maxUnpackedSize: 10 * MB });
  });

  it("an archive file over max_size is refused before it is read", async () => {
    const file = write("large.tar", tarBytes([{ name: "data.bin", data: Buffer.alloc(5000, 7) }]));
    const refused = await expectRefused(file, undefined, /the archive is 6.66 KB, over max_size \(1 KB\)/, {
      maxSize: 1000,
    });
    expect(refused.message).not.toContain("entry");
  });

  it("more entries than max_entries are refused, naming the first entry past the limit", async () => {
    const entries = Array.from({ length: 6 }, (_, i) => ({ name: `f${i}.txt`, data: `${i}\n` }));
    await expectRefused(write("many.zip", zipBytes(entries)), "f5.txt", /number 6, over max_entries \(5\)/, {
      maxEntries: 5,
    });
    await expectRefused(write("many.tar", tarBytes(entries)), "f5.txt", /number 6, over max_entries \(5\)/, {
      maxEntries: 5,
    });
  });

  it("refuses a file that is no archive at all", async () => {
    const file = write("notes.zip", Buffer.from("just text, not a zip\n".repeat(40)));
    await expectRefused(file, undefined, /not a zip, tar or gzipped tar archive/);
  });
});

describe("archive seeds that are good", () => {
  it("unpack zip (made by yazl), tar and tar.gz (made by node-tar) with folders and the executable bit", async () => {
    const src = tempDir();
    writeFiles(src, {
      "README.md": "hello\n",
      "src/app.js": "export const x = 1;\n",
      "bin/run.sh": "#!/bin/sh\necho run\n",
      ".git/config": "[core]\n",
    });
    sh("chmod 755 bin/run.sh", src);
    const out = tempDir();
    await tar.create({ gzip: true, file: path.join(out, "a.tar.gz"), cwd: src }, ["."]);
    await tar.create({ file: path.join(out, "a.tar"), cwd: src }, ["README.md", "src", "bin", ".git"]);
    writeFileSync(
      path.join(out, "a.zip"),
      await yazlZip({
        "README.md": { data: "hello\n" },
        "src/app.js": { data: "export const x = 1;\n" },
        "bin/run.sh": { data: "#!/bin/sh\necho run\n", mode: 0o100755 },
        ".git/config": { data: "[core]\n" },
      }),
    );
    for (const [name, format] of [
      ["a.tar.gz", "tar.gz"],
      ["a.tar", "tar"],
      ["a.zip", "zip"],
    ] as const) {
      const dest = path.join(tempDir(), "tree");
      const stats = await unpackArchive(path.join(out, name), dest, DEFAULT_ARCHIVE_LIMITS);
      expect(stats.format).toBe(format);
      expect(readFileSync(path.join(dest, "README.md"), "utf8")).toBe("hello\n");
      expect(readFileSync(path.join(dest, "src/app.js"), "utf8")).toBe("export const x = 1;\n");
      expect(statSync(path.join(dest, "bin/run.sh")).mode & 0o777).toBe(0o755);
      expect(statSync(path.join(dest, "README.md")).mode & 0o777).toBe(0o644);
      // An archive's .git is left out, as for folder seeds: evalgate owns the workspace's repository.
      expect(existsSync(path.join(dest, ".git"))).toBe(false);
    }
  });

  it("counts limits on the real data: an archive exactly at the limits passes", async () => {
    const entries = [
      { name: "a/", data: "" },
      { name: "a/one.bin", data: Buffer.alloc(600) },
      { name: "a/two.bin", data: Buffer.alloc(400) },
    ];
    const dest = path.join(tempDir(), "tree");
    mkdirSync(path.dirname(dest), { recursive: true });
    await unpackArchive(write("exact.zip", zipBytes(entries)), dest, {
      maxSize: 10_000,
      maxUnpackedSize: 1000,
      maxEntries: 3,
    });
    expect(statSync(path.join(dest, "a/one.bin")).size).toBe(600);
  });
});
