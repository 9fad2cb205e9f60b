/**
 * Archive seeds: a zip, tar or tar.gz file unpacked into the workspace — only after the whole
 * archive has been read once and found safe. The check reads the real decompressed data (a
 * compression bomb lies in its headers), refuses links, devices, absolute paths and `..`, and
 * enforces the size and entry limits; the unpacking pass enforces them again as it writes.
 */
import { createWriteStream } from "node:fs";
import { mkdir, open, stat } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { formatSize } from "../config/size.js";
import type { ArchiveLimits } from "../config/types.js";
import { readTar } from "./archive-tar.js";
import { readZip } from "./archive-zip.js";

/** Folders a seed never brings along, at any depth: version control and evalgate's own. */
export const SKIPPED_SEED_FOLDERS: readonly string[] = [".git", ".evalgate"];

/** The archive may not be unpacked; `entry` names the offending entry when there is one. */
export class ArchiveRefused extends Error {
  constructor(
    readonly entry: string | undefined,
    reason: string,
  ) {
    super(entry === undefined ? reason : `entry "${entry}" ${reason}`);
    this.name = "ArchiveRefused";
  }
}

export type EntryKind =
  | "file"
  | "directory"
  | "symlink"
  | "hardlink"
  | "character device"
  | "block device"
  | "fifo"
  | "socket"
  | "other";

export interface ArchiveEntry {
  /** The name as stored in the archive. */
  name: string;
  kind: EntryKind;
  /** Permission bits, when the archive records them. */
  mode?: number;
  /** Target of a link entry (for the message). */
  linkTarget?: string;
  /** The size the archive's header declares. */
  declaredSize: number;
}

/** What each pass does with the entries that passed the checks. */
export interface EntrySink {
  directory(rel: string): Promise<void>;
  /** Consumes `data` completely (writing it or discarding it). */
  file(rel: string, mode: number | undefined, data: Readable): Promise<void>;
}

/**
 * The checks every entry goes through, in both passes. A reader calls `admit` for each entry and
 * `count` for every chunk of data it decompresses.
 */
export class EntryGuard {
  private entries = 0;
  private bytes = 0;

  constructor(readonly limits: ArchiveLimits) {}

  /** The entry's path inside the workspace, null for entries that are left out; throws ArchiveRefused. */
  admit(e: ArchiveEntry): string | null {
    this.entries++;
    if (this.entries > this.limits.maxEntries) {
      throw new ArchiveRefused(
        e.name,
        `is entry number ${this.entries}, over max_entries (${this.limits.maxEntries})`,
      );
    }
    const rel = safeRelativePath(e.name);
    if (e.kind === "symlink") {
      throw new ArchiveRefused(e.name, `is a symbolic link${e.linkTarget ? ` (to "${e.linkTarget}")` : ""}`);
    }
    if (e.kind === "hardlink") {
      throw new ArchiveRefused(e.name, `is a hard link${e.linkTarget ? ` (to "${e.linkTarget}")` : ""}`);
    }
    if (e.kind !== "file" && e.kind !== "directory") {
      throw new ArchiveRefused(e.name, `is a ${e.kind}; only files and folders are unpacked`);
    }
    if (e.declaredSize > this.limits.maxUnpackedSize - this.bytes) {
      throw this.tooLarge(e.name);
    }
    if (rel === "" || rel.split("/").some((part) => SKIPPED_SEED_FOLDERS.includes(part))) return null;
    return rel;
  }

  /** Counts `n` bytes of real decompressed data of entry `name`. */
  count(name: string, n: number): void {
    this.bytes += n;
    if (this.bytes > this.limits.maxUnpackedSize) throw this.tooLarge(name);
  }

  private tooLarge(name: string): ArchiveRefused {
    return new ArchiveRefused(
      name,
      `takes the unpacked data past max_unpacked_size (${formatSize(this.limits.maxUnpackedSize)})`,
    );
  }
}

/**
 * The entry's name as a clean relative path (`a/b.txt`; "" for the archive's root folder), or
 * ArchiveRefused when it would land outside the workspace.
 */
export function safeRelativePath(name: string): string {
  if (name.includes("\0")) throw new ArchiveRefused(name, "has a NUL character in its name");
  if (name.startsWith("/") || name.startsWith("\\") || /^[A-Za-z]:/.test(name)) {
    throw new ArchiveRefused(name, "is an absolute path");
  }
  const parts = name.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw new ArchiveRefused(name, "leaves the archive's folder (..)");
  return parts.join("/");
}

type Format = "zip" | "tar" | "gzip";

async function sniff(file: string): Promise<Format | undefined> {
  const fh = await open(file, "r");
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await fh.read(head, 0, 512, 0);
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x04034b50) return "zip";
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x06054b50) return "zip"; // an empty zip
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "gzip";
    if (bytesRead >= 262 && head.toString("latin1", 257, 262) === "ustar") return "tar";
    // A pre-POSIX tar has no magic; trust the name (the parser still checks every header).
    if (file.toLowerCase().endsWith(".tar") && bytesRead === 512) return "tar";
    return undefined;
  } finally {
    await fh.close();
  }
}

async function readArchive(file: string, format: Format, guard: EntryGuard, sink: EntrySink) {
  if (format === "zip") await readZip(file, guard, sink);
  else await readTar(file, format === "gzip", guard, sink);
}

const discard: EntrySink = {
  directory: async () => undefined,
  file: async (_rel, _mode, data) => {
    data.resume();
    await new Promise<void>((resolve, reject) => {
      data.once("end", resolve);
      data.once("close", resolve);
      data.once("error", reject);
    });
  },
};

function writer(dest: string): EntrySink {
  return {
    directory: async (rel) => {
      await mkdir(path.join(dest, rel), { recursive: true, mode: 0o755 });
    },
    file: async (rel, mode, data) => {
      const target = path.join(dest, rel);
      await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
      // Only the executable bit is kept: no setuid, no world-writable files from an archive.
      const perm = mode !== undefined && (mode & 0o111) !== 0 ? 0o755 : 0o644;
      await pipeline(data, createWriteStream(target, { mode: perm }));
    },
  };
}

export interface UnpackStats {
  format: "zip" | "tar" | "tar.gz";
}

/**
 * Unpacks `file` into `dest` (created), after checking all of it; throws ArchiveRefused, leaving
 * `dest` untouched, when the archive breaks a rule.
 */
export async function unpackArchive(file: string, dest: string, limits: ArchiveLimits): Promise<UnpackStats> {
  const { size } = await stat(file);
  if (size > limits.maxSize) {
    throw new ArchiveRefused(
      undefined,
      `the archive is ${formatSize(size)}, over max_size (${formatSize(limits.maxSize)})`,
    );
  }
  const format = await sniff(file);
  if (!format) throw new ArchiveRefused(undefined, "the file is not a zip, tar or gzipped tar archive");
  await readArchive(file, format, new EntryGuard(limits), discard);
  await mkdir(dest, { recursive: true });
  await readArchive(file, format, new EntryGuard(limits), writer(dest));
  return { format: format === "gzip" ? "tar.gz" : format };
}
