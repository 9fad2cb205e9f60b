/**
 * Copying a prepared start tree into an attempt's workspace: every file a copy of its own (an
 * agent that edits a file in place must not change the start tree or another attempt, so no hard
 * links), as fast as the filesystem allows. See docs/decisions/0030-prepared-start-copies.md.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { runTool } from "./tool.js";

/**
 * `reflink`: the filesystem clones files copy-on-write (btrfs, XFS, ...): `cp --reflink=always`
 * copies metadata only. `copy`: everything else (ext4, tmpfs, ...): `cp -a`, one process
 * (docs/decisions/0106; a `tar | tar` pipe was two, and no faster in paired runs), letting the
 * kernel copy each file's data (`copy_file_range`, which coreutils 9 uses unless told
 * `--reflink=never`): 25–30 % faster than reading and writing it through cp (docs/decisions/0178).
 * Either way every file is a new inode of its own; shared blocks, where a filesystem shares them,
 * are copied on write.
 */
export type CopyMethod = "reflink" | "copy";

/** Which copy method the filesystem of `dir` (an existing folder) supports. */
export async function probeCopyMethod(dir: string): Promise<CopyMethod> {
  const probe = path.join(dir, ".evalgate-reflink-probe");
  await writeFile(probe, "probe\n");
  try {
    const r = await runTool("cp", ["--reflink=always", probe, `${probe}.copy`]);
    return r.code === 0 ? "reflink" : "copy";
  } finally {
    await rm(probe, { force: true });
    await rm(`${probe}.copy`, { force: true });
  }
}

/** Copies the folder `src` to `dest` (which must not exist), keeping modes, times and links. */
export async function copyTree(src: string, dest: string, method: CopyMethod): Promise<void> {
  await mkdir(path.dirname(dest), { recursive: true });
  const r = await runTool("cp", [
    "-a",
    method === "reflink" ? "--reflink=always" : "--reflink=auto",
    "--",
    src,
    dest,
  ]);
  if (r.code !== 0) throw new Error(`cannot copy ${src} to ${dest}: ${r.stderr.trim()}`);
}
