/**
 * A Harbor solution written out of its reference script: run with /bin/sh, the lines give back the
 * folder byte for byte (a file without a final newline, an empty one, a sub-folder, the executable
 * bit, a line like a here-document's end); what they cannot carry is said, never half-written.
 * Before: the importer copied solution/ beside reference.sh, where agents could read it.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { solutionWriter } from "../../src/import/harbor-solution.js";
import { tempDir, writeFiles } from "../helpers.js";

describe("solutionWriter", () => {
  it("writes the folder back byte for byte, with its executable bits", async () => {
    const src = tempDir();
    const files = {
      "solve.sh": "#!/bin/bash\ncat > x <<'EOF'\nit's $HOME `here`\nEOF\n",
      "no-newline.txt": "last line without one",
      "blank-lines.txt": "a\n\n\n",
      "empty.txt": "",
      "sub dir/data.py": "print('ü')\n",
    };
    writeFiles(src, files);
    chmodSync(path.join(src, "solve.sh"), 0o755);
    const w = await solutionWriter(src);
    if (!("lines" in w)) throw new Error(w.why);
    const out = tempDir();
    execFileSync("/bin/sh", ["-ec", `sol=${JSON.stringify(out)}\n${w.lines}\n`]);
    for (const [rel, text] of Object.entries(files))
      expect(readFileSync(path.join(out, rel), "utf8"), rel).toBe(text);
    expect(statSync(path.join(out, "solve.sh")).mode & 0o111).not.toBe(0);
    expect(statSync(path.join(out, "empty.txt")).mode & 0o111).toBe(0);
  });

  it("says why it cannot write a binary file or a link", async () => {
    const bin = tempDir();
    mkdirSync(path.join(bin, "lib"));
    writeFileSync(path.join(bin, "lib", "blob"), Buffer.from([0x7f, 0x45, 0, 1]));
    expect(await solutionWriter(bin)).toEqual({ why: "lib/blob is not a text file" });
    const link = tempDir();
    writeFiles(link, { "solve.sh": "true\n" });
    symlinkSync("solve.sh", path.join(link, "run.sh"));
    expect(await solutionWriter(link)).toEqual({ why: "run.sh is not a regular file" });
  });
});
