/**
 * `resources.disk`: what an attempt writes into the folders it may write (its workspace, HOME and
 * TMPDIR), measured while its process runs. No file system here gives a per-folder quota without
 * root and a prepared mount, so evalgate walks the folders and stops the process once they have
 * grown past the limit: the bound holds within one walk's interval (a second or more; longer for a
 * large tree, since the interval is ten times the last walk's time).
 */
import { lstat, readdir, statfs } from "node:fs/promises";
import path from "node:path";

/** Bytes the folders take on disk (allocated blocks), not following links. Stops counting past `cap`. */
export async function allocatedBytes(
  dirs: readonly string[],
  cap = Number.POSITIVE_INFINITY,
): Promise<number> {
  let total = 0;
  const stack = [...dirs];
  while (stack.length > 0 && total <= cap) {
    const dir = stack.pop()!;
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      try {
        const s = await lstat(p);
        total += s.blocks * 512;
        if (s.isDirectory()) stack.push(p);
      } catch {
        // removed while we looked
      }
    }
  }
  return total;
}

export interface DiskWatch {
  /** Stops watching; resolves with the most growth seen. */
  stop(): Promise<number>;
  /** Whether the limit was passed (and `onExceeded` called). */
  exceeded(): boolean;
}

/**
 * Watches `dirs` while a process runs: when they have grown by more than `limitBytes` since the
 * watch began, calls `onExceeded` once (which stops the process).
 */
export function watchDisk(
  dirs: readonly string[],
  limitBytes: number,
  onExceeded: (grownBytes: number) => void,
  minIntervalMs = 1000,
): DiskWatch {
  let stopped = false;
  let over = false;
  let peak = 0;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    const base = await allocatedBytes(dirs);
    while (!stopped) {
      const t0 = performance.now();
      const now = await allocatedBytes(dirs, base + limitBytes);
      const grown = Math.max(0, now - base);
      peak = Math.max(peak, grown);
      if (grown > limitBytes && !over) {
        over = true;
        onExceeded(grown);
        return;
      }
      const walk = performance.now() - t0;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, Math.max(minIntervalMs, walk * 10));
      });
    }
  })();
  return {
    exceeded: () => over,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await loop;
      return peak;
    },
  };
}

/** Bytes free to evalgate on the file system that holds `dir`; undefined when it cannot be read. */
export async function freeBytes(dir: string): Promise<number | undefined> {
  const s = await statfs(dir).catch(() => undefined);
  return s ? s.bavail * s.bsize : undefined;
}

/**
 * Whether an evalgate step that failed with `error` after the agent ran failed because the agent
 * filled the file system its attempt folder `dir` is on: the error is ENOSPC or EDQUOT, and the
 * agent's folder now takes at least 90 % of what was free (`freeBefore`) when it started, so the
 * space went into what it wrote, not into another process's files (evalgate's own measure is the
 * evidence, docs/decisions/0247). Returns the message, or undefined.
 */
export async function agentFilledDisk(
  error: unknown,
  dir: string,
  freeBefore: number | undefined,
): Promise<string | undefined> {
  const code = (error as NodeJS.ErrnoException)?.code;
  const text = error instanceof Error ? error.message : "";
  if (freeBefore === undefined) return undefined;
  if (code !== "ENOSPC" && code !== "EDQUOT" && !/No space left on device|Disk quota exceeded/i.test(text)) {
    return undefined;
  }
  const used = await allocatedBytes([dir]);
  if (used < freeBefore * 0.9) return undefined;
  const mib = (n: number) => `${Math.round(n / 1048576)} MiB`;
  return `the agent filled the disk its workspace is on (its folders take ${mib(used)}; ${mib(freeBefore)} were free when it started): its changes could not be captured`;
}
