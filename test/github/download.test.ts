/**
 * A downloaded bundle artifact may come from another workflow run (the base branch's, a fork's), so
 * it is extracted as untrusted input, with the archive seeds' checks (test/workspace/archive.test.ts
 * covers those rule by rule). These tests show the action's path through them.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DownloadError, extractArtifact } from "../../src/github/download.js";
import { tempDir } from "../helpers.js";
import { makeZip, type ZipEntry } from "./zip.js";

function zipFile(entries: ZipEntry[]): string {
  const file = path.join(tempDir("evalgate-zip-"), "a.zip");
  writeFileSync(file, makeZip(entries));
  return file;
}

describe("extracting a bundle artifact", () => {
  it("extracts files and folders", async () => {
    const dest = path.join(tempDir(), "out");
    await extractArtifact(
      zipFile([
        { name: "summary.json", data: "{}" },
        { name: "case-1/" },
        { name: "case-1/run-1/diff.patch", data: "+x\n" },
      ]),
      dest,
      "evalgate-bundle",
    );
    expect(readFileSync(path.join(dest, "case-1", "run-1", "diff.patch"), "utf8")).toBe("+x\n");
  });

  it.each([
    ["a name that climbs out", "../../evil.sh", /leaves the archive's folder/],
    ["an absolute name", "/tmp/evil.sh", /absolute path/],
    ["a backslash name", "..\\evil.sh", /not allowed in a file name|leaves the archive's folder/],
  ])("refuses %s, naming the artifact, and writes nothing", async (_label, name, message) => {
    const root = tempDir();
    const dest = path.join(root, "out");
    const run = extractArtifact(
      zipFile([
        { name: "summary.json", data: "{}" },
        { name, data: "boom" },
      ]),
      dest,
      "evalgate-bundle",
    );
    await expect(run).rejects.toThrow(DownloadError);
    await expect(run).rejects.toThrow(/^artifact evalgate-bundle was refused: /);
    await expect(run).rejects.toThrow(message);
    expect(existsSync(path.join(root, "evil.sh"))).toBe(false);
    // The whole zip is checked before anything is written: not even the good entry is there.
    expect(existsSync(dest) ? readdirSync(dest) : []).toEqual([]);
  });

  it("refuses a symbolic link (which a later entry could write through)", async () => {
    const dest = path.join(tempDir(), "out");
    const run = extractArtifact(
      zipFile([
        { name: "link", data: "/etc", mode: 0o120777 },
        { name: "link/passwd", data: "x" },
      ]),
      dest,
      "evalgate-bundle",
    );
    await expect(run).rejects.toThrow('entry "link" is a symbolic link');
    expect(existsSync(path.join(dest, "link")) && lstatSync(path.join(dest, "link")).isSymbolicLink()).toBe(
      false,
    );
  });

  it("stops at the byte cap, whatever the headers claim", async () => {
    const big = Buffer.alloc(64 * 1024, 1);
    const limits = { maxSize: 1e6, maxUnpackedSize: 100 * 1024, maxEntries: 10 };
    await expect(
      extractArtifact(
        zipFile([
          { name: "a.bin", data: big },
          { name: "b.bin", data: big },
        ]),
        path.join(tempDir(), "out"),
        "evalgate-bundle",
        limits,
      ),
    ).rejects.toThrow(/entry "b.bin" takes the unpacked data past max_unpacked_size/);
    await expect(
      extractArtifact(
        zipFile([{ name: "c.bin", data: big, claimedSize: 10 }]),
        path.join(tempDir(), "o"),
        "evalgate-bundle",
      ),
    ).rejects.toThrow(/size mismatch for stored file: 65536 != 10|entry "c.bin" inflates past the 10 bytes/);
  });

  it("stops at the entry cap", async () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({ name: `f${i}.txt`, data: "x" }));
    await expect(
      extractArtifact(zipFile(entries), path.join(tempDir(), "out"), "evalgate-bundle", {
        maxSize: 1e6,
        maxUnpackedSize: 1e6,
        maxEntries: 3,
      }),
    ).rejects.toThrow(/entry "f3.txt" is entry number 4, over max_entries \(3\)/);
  });
});
