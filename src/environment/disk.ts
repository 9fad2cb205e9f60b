/**
 * `resources.disk`: what an attempt writes into the folders it may write (its workspace, HOME and
 * TMPDIR), measured while its process runs. No file system here gives a per-folder quota without
 * root and a prepared mount, so evalgate walks the folders and stops the process once they have
 * grown past the limit: the bound holds within one walk's interval (a second or more; longer for a
 * large tree, since the interval is ten times the last walk's time).
 */
import { lstat, readdir } from "node:fs/promises";
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
