/**
 * The change mark of an attempt's copy: a point in the filesystem's own time after which every
 * change to the workspace has a later status-change time (ctime). The copy's files all have a ctime
 * at or before the mark; whatever changes later (a write, a chmod, a rename, a link, a new file)
 * gets a later one, and no unprivileged process can set a ctime back. So one `find -newerct` after
 * the agent (workspace/scan.ts) lists everything it touched, with no walk of the copy before it
 * (docs/decisions/0190).
 */
import { rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";

export interface ChangeMark {
  /** The ctime (nanoseconds) of a file made right after the copy: later changes are newer. */
  sinceNs: bigint;
  /** The wall clock and the monotonic clock at the mark, to notice a clock set back meanwhile. */
  wallMs: number;
  monoMs: number;
}

/** How long the filesystem's clock may take to move past the mark (a coarse one ticks every ~10 ms). */
const MAX_WAIT_MS = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ctimeOf(file: string): Promise<bigint> {
  await writeFile(file, "");
  const ns = (await stat(file, { bigint: true })).ctimeNs;
  await rm(file, { force: true });
  return ns;
}

/**
 * Marks a copy that has just been made. `scratch` is a folder of evalgate's on the workspace's
 * filesystem (the attempt folder). Returns once the filesystem's clock has moved past the mark: a
 * file the kernel stamps with a coarse clock (or with the floor of a fine-grained one) could
 * otherwise get the mark's very time and pass for unchanged. Undefined when the clock does not move
 * within MAX_WAIT_MS (a filesystem with whole-second times, say): then nothing is marked.
 */
export async function markCopy(scratch: string): Promise<ChangeMark | undefined> {
  const probe = path.join(scratch, ".evalgate-change-mark");
  const wallMs = Date.now();
  const monoMs = performance.now();
  const sinceNs = await ctimeOf(probe);
  while (performance.now() - monoMs <= MAX_WAIT_MS) {
    // A new file each time: one whose ctime was read gets a fine-grained stamp on its next change,
    // which says nothing about the clock other files are stamped with.
    if ((await ctimeOf(probe)) > sinceNs) return { sinceNs, wallMs, monoMs };
    await sleep(1);
  }
  return undefined;
}

/**
 * Whether the wall clock was set back after the mark (the ctimes of later changes could then be
 * older than the mark): the wall clock advanced by more than a second less than the monotonic one.
 */
export function clockSetBack(mark: ChangeMark): boolean {
  const wall = Date.now() - mark.wallMs;
  const mono = performance.now() - mark.monoMs;
  return wall < mono - 1000;
}
