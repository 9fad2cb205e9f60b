import { existsSync, lstatSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { extractZip, UnsafeArchiveError } from "../../src/github/unzip.js";
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
    const n = await extractZip(
      zipFile([
        { name: "summary.json", data: "{}" },
        { name: "case-1/" },
        { name: "case-1/run-1/diff.patch", data: "+x\n" },
      ]),
      dest,
    );
    expect(n).toBe(2);
    expect(readFileSync(path.join(dest, "case-1", "run-1", "diff.patch"), "utf8")).toBe("+x\n");
  });

  it.each([
    ["a name that climbs out", "../../evil.sh", /invalid relative path|outside/],
    ["an absolute name", "/tmp/evil.sh", /absolute path/],
    ["a backslash name", "..\\evil.sh", /invalid characters|backslash/i],
  ])("refuses %s and writes nothing outside", async (_label, name, message) => {
    const root = tempDir();
    const dest = path.join(root, "out");
    const run = extractZip(zipFile([{ name, data: "boom" }]), dest);
    await expect(run).rejects.toThrow(UnsafeArchiveError);
    await expect(run).rejects.toThrow(message);
    expect(existsSync(path.join(root, "evil.sh"))).toBe(false);
  });

  it("refuses a symbolic link (which a later entry could write through)", async () => {
    const dest = path.join(tempDir(), "out");
    const run = extractZip(
      zipFile([
        { name: "link", data: "/etc", mode: 0o120777 },
        { name: "link/passwd", data: "x" },
      ]),
      dest,
    );
    await expect(run).rejects.toThrow('entry "link" is a link or special file');
    expect(existsSync(path.join(dest, "link")) && lstatSync(path.join(dest, "link")).isSymbolicLink()).toBe(
      false,
    );
  });

  it("stops at the byte cap, whatever the headers claim", async () => {
    const dest = path.join(tempDir(), "out");
    const big = Buffer.alloc(64 * 1024, 1);
    await expect(
      extractZip(
        zipFile([
          { name: "a.bin", data: big },
          { name: "b.bin", data: big },
        ]),
        dest,
        {
          maxEntries: 10,
          maxBytes: 100 * 1024,
        },
      ),
    ).rejects.toThrow("more than 102400 bytes when extracted");
    await expect(
      extractZip(zipFile([{ name: "c.bin", data: big, claimedSize: 10 }]), path.join(tempDir(), "o")),
    ).rejects.toThrow(/too many bytes|size/i);
  });

  it("stops at the entry cap", async () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({ name: `f${i}.txt`, data: "x" }));
    await expect(
      extractZip(zipFile(entries), path.join(tempDir(), "out"), { maxEntries: 3, maxBytes: 1e6 }),
    ).rejects.toThrow("more than 3 entries");
  });

  it("refuses two entries of one name instead of overwriting", async () => {
    await expect(
      extractZip(
        zipFile([
          { name: "summary.json", data: "{}" },
          { name: "summary.json", data: "{}" },
        ]),
        path.join(tempDir(), "out"),
      ),
    ).rejects.toThrow(/EEXIST/);
  });
});
