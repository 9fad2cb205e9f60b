/**
 * One run per bundle folder (docs/decisions/0189). Two runs given the same `--out` would both pass
 * the empty-folder check and write into it: one run's summary lost, the other's seal covering the
 * first one's case folders. The run holds a lock file beside the folder while it writes it (beside,
 * not inside: the bundle is sealed and uploaded as it is). A second run exits 2 naming the first;
 * a lock whose process is gone (a `kill -9`, a crash) is taken over.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { OptionNaming } from "../config/options.js";
import { UsageError } from "../errors.js";

interface LockRecord {
  pid: number;
  started_at: string;
  host: string;
  /** The process's start time in clock ticks since boot, and the boot: a pid reused is not the run. */
  start_ticks?: string;
  boot_id?: string;
  token: string;
}

export interface BundleLock {
  /** The lock file (beside the bundle folder). */
  file: string;
  release(): Promise<void>;
}

export function lockFileOf(bundleDir: string): string {
  return path.join(path.dirname(bundleDir), `.${path.basename(bundleDir)}.evalgate-lock`);
}

function startTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22 (starttime), counted after the command name, which may hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return undefined;
  }
}

/** Whether the run that wrote `r` is still running; a run on another machine is taken as running. */
function running(r: LockRecord): boolean {
  if (r.host !== os.hostname()) return true;
  try {
    process.kill(r.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  const boot = bootId();
  if (r.boot_id && boot && r.boot_id !== boot) return false;
  const ticks = startTicks(r.pid);
  return !(r.start_ticks && ticks && r.start_ticks !== ticks);
}

async function readRecord(file: string): Promise<LockRecord | undefined> {
  try {
    const r = JSON.parse(await readFile(file, "utf8")) as LockRecord;
    return typeof r.pid === "number" && typeof r.token === "string" ? r : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock of `bundleDir` for this process, or throws a UsageError naming the run that holds
 * it. `shown` is the folder as the user gave it.
 */
export async function lockBundleFolder(
  bundleDir: string,
  shown: string,
  naming: OptionNaming,
): Promise<BundleLock> {
  const file = lockFileOf(bundleDir);
  await mkdir(path.dirname(file), { recursive: true });
  const mine: LockRecord = {
    pid: process.pid,
    started_at: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    host: os.hostname(),
    token: randomBytes(8).toString("hex"),
  };
  const ticks = startTicks(process.pid);
  const boot = bootId();
  if (ticks) mine.start_ticks = ticks;
  if (boot) mine.boot_id = boot;
  const text = `${JSON.stringify(mine)}\n`;
  for (let round = 0; round < 5; round++) {
    try {
      await writeFile(file, text, { flag: "wx" });
      return held(file, mine.token);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const other = await readRecord(file);
    if (other && running(other)) {
      const where = other.host === os.hostname() ? "" : ` on ${other.host}`;
      throw new UsageError(
        `${naming.given("out", shown)} is being written by another evalgate run (pid ${other.pid}${where}, started ${other.started_at}): wait for it to end, or give another folder (if that run is gone, remove ${file})`,
      );
    }
    if (!other) {
      // Being written this instant, or left unreadable: looked at again before it is taken over.
      await new Promise((r) => setTimeout(r, 200));
      if (await readRecord(file)) continue;
    }
    // The run that held it is gone: taken over, atomically; of two runs taking it over at once, the
    // one whose record is there afterwards has it.
    const tmp = `${file}.${mine.token}`;
    await writeFile(tmp, text);
    await rename(tmp, file);
    if ((await readRecord(file))?.token === mine.token) return held(file, mine.token);
  }
  throw new UsageError(
    `${naming.given("out", shown)}: cannot take its lock ${file}: remove it and try again`,
  );
}

function held(file: string, token: string): BundleLock {
  const ours = () => {
    try {
      return (JSON.parse(readFileSync(file, "utf8")) as LockRecord).token === token;
    } catch {
      return false;
    }
  };
  // A run that ends without release (an uncaught error) still gives the folder back.
  const onExit = () => {
    if (ours()) {
      try {
        unlinkSync(file);
      } catch {
        // gone
      }
    }
  };
  process.once("exit", onExit);
  return {
    file,
    async release() {
      process.removeListener("exit", onExit);
      if (ours()) await unlink(file).catch(() => undefined);
    },
  };
}
