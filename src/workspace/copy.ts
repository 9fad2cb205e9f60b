/**
 * Copying a prepared baseline into an attempt's workspace: every file a copy of its own (an agent
 * that edits a file in place must not change the baseline or another attempt, so no hard links),
 * as fast as the filesystem allows. See docs/decisions/0030-prepared-baseline-copies.md.
 */
import { spawn } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { execa } from "execa";

/**
 * `reflink`: the filesystem clones files copy-on-write (btrfs, XFS, ...): `cp --reflink=always`
 * copies metadata only. `tar`: everything else (ext4, tmpfs, ...): a `tar | tar` pipe, whose
 * reader and writer run side by side, measured faster than `cp -a` for large trees.
 */
export type CopyMethod = "reflink" | "tar";

/** Which copy method the filesystem of `dir` (an existing folder) supports. */
export async function probeCopyMethod(dir: string): Promise<CopyMethod> {
  const probe = path.join(dir, ".evalgate-reflink-probe");
  await writeFile(probe, "probe\n");
  try {
    const r = await execa("cp", ["--reflink=always", probe, `${probe}.copy`], { reject: false });
    return r.exitCode === 0 ? "reflink" : "tar";
  } finally {
    await rm(probe, { force: true });
    await rm(`${probe}.copy`, { force: true });
  }
}

function run(cmd: string, args: string[], stdio: Parameters<typeof spawn>[2]["stdio"]) {
  const child = spawn(cmd, args, { stdio });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.on("error", (error) => resolve({ code: -1, stderr: error.message }));
    child.on("close", (code) => resolve({ code, stderr }));
  });
  return { child, done };
}

/** Copies the folder `src` to `dest` (which must not exist), keeping modes, times and links. */
export async function copyTree(src: string, dest: string, method: CopyMethod): Promise<void> {
  await mkdir(path.dirname(dest), { recursive: true });
  if (method === "reflink") {
    const r = await execa("cp", ["-a", "--reflink=always", src, dest], { reject: false });
    if (r.exitCode !== 0) throw new Error(`cannot copy ${src} to ${dest}: ${String(r.stderr).trim()}`);
    return;
  }
  await mkdir(dest);
  const pack = run("tar", ["-c", "-f", "-", "--numeric-owner", "-C", src, "."], ["ignore", "pipe", "pipe"]);
  const unpack = run(
    "tar",
    ["-x", "-p", "-f", "-", "--numeric-owner", "-C", dest],
    [pack.child.stdout!, "ignore", "pipe"],
  );
  // The reader's stdout now belongs to the writer; the parent's end would keep it from closing.
  pack.child.stdout?.destroy();
  const [c, x] = await Promise.all([pack.done, unpack.done]);
  if (c.code !== 0 || x.code !== 0) {
    const why = [c.stderr, x.stderr]
      .map((t) => t.trim())
      .filter(Boolean)
      .join(" / ");
    throw new Error(`cannot copy ${src} to ${dest}: ${why || `tar exited with ${c.code}/${x.code}`}`);
  }
}
