/**
 * Files too large to capture. `git add` reads and hashes every byte of a file, and git commands
 * have no timeout: a sparse 50 GB file the agent made in a second (`truncate -s 50G`) would keep
 * the capture busy for many minutes, and a file over `limits.diff` cannot fit in the stored patch
 * anyway. Such a file is never read: a short placeholder naming its size stands for it in the
 * capture index, marked unchanged so `git add -A` leaves it there (docs/decisions/0076).
 */
import { lstat } from "node:fs/promises";
import { formatSize } from "../config/size.js";
import { git, gitBytes, nulInput, nulParts, under } from "./git.js";

export interface OversizeFile {
  path: string;
  bytes: number;
}

type GitOpts = { cwd: string; env: Record<string, string> };

/** Of `names` (relative to `workTree`), the regular files larger than `maxBytes`. */
async function largerThan(workTree: string, names: Buffer[], maxBytes: number) {
  const out: { name: Buffer; bytes: number }[] = [];
  for (const name of names) {
    const s = await lstat(under(workTree, name)).catch(() => undefined);
    if (s?.isFile() && s.size > maxBytes) out.push({ name, bytes: s.size });
  }
  return out;
}

/**
 * Of `big` (the workspace's files over the limit, from its scan), those `git add -A` would read: new
 * files it does not ignore and modified tracked ones. Only asked when some file is over the limit,
 * so most captures never list them (docs/decisions/0170).
 */
export async function addedOrModified(opts: GitOpts, big: Buffer[]): Promise<Buffer[]> {
  if (big.length === 0) return [];
  const wanted = new Set(big.map((b) => b.toString("latin1")));
  const listed = nulParts(
    await gitBytes(["ls-files", "-z", "--others", "--modified", "--exclude-standard"], opts),
  );
  return listed.filter((name) => wanted.has(name.toString("latin1")));
}

/**
 * Puts a placeholder in the index for every file among `names` larger than `maxBytes`, before the
 * `git add` that would read it.
 */
export async function stageOversize(
  workTree: string,
  opts: GitOpts,
  maxBytes: number,
  names: Buffer[],
): Promise<OversizeFile[]> {
  if (names.length === 0) return [];
  const big = await largerThan(workTree, names, maxBytes);
  if (big.length === 0) return [];
  const records: Buffer[] = [];
  for (const f of big) {
    const note = `evalgate: this file (${formatSize(f.bytes)}) is larger than limits.diff (${formatSize(maxBytes)}): not read, not captured\n`;
    const sha = (await git(["hash-object", "-w", "--stdin"], { ...opts, input: note })).trim();
    records.push(Buffer.from(`100644 ${sha}\t`), f.name, Buffer.from([0]));
  }
  await git(["update-index", "-z", "--index-info"], { ...opts, input: Buffer.concat(records) });
  await git(["update-index", "--assume-unchanged", "-z", "--stdin"], {
    ...opts,
    input: nulInput(big.map((f) => f.name)),
  });
  return big.map((f) => ({ path: f.name.toString("utf8"), bytes: f.bytes }));
}
