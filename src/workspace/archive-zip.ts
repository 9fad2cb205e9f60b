/** Zip archives through yauzl: entries one at a time, data counted as it inflates. */
import { Transform } from "node:stream";
import yauzl from "yauzl";
import { ArchiveRefused, type EntryGuard, type EntryKind, type EntrySink } from "./archive.js";

const S_IFMT = 0o170000;
// A Map, not an object literal: TypeScript mangles octal literals used as property names.
const UNIX_TYPES = new Map<number, EntryKind>([
  [0o100000, "file"],
  [0o040000, "directory"],
  [0o120000, "symlink"],
  [0o020000, "character device"],
  [0o060000, "block device"],
  [0o010000, "fifo"],
  [0o140000, "socket"],
]);
/** "Version made by" hosts whose external attributes carry a Unix mode (Unix, OS X). */
const UNIX_HOSTS = new Set([3, 19]);

function kindOf(entry: yauzl.Entry): { kind: EntryKind; mode?: number } {
  const byName: EntryKind = entry.fileName.endsWith("/") ? "directory" : "file";
  const unixMode = entry.externalFileAttributes >>> 16;
  if (!UNIX_HOSTS.has(entry.versionMadeBy >> 8) || unixMode === 0) return { kind: byName };
  const type = unixMode & S_IFMT;
  if (type === 0) return { kind: byName, mode: unixMode & 0o7777 };
  return { kind: UNIX_TYPES.get(type) ?? "other", mode: unixMode & 0o7777 };
}

/** yauzl checks names itself before it hands an entry over; its refusals name the entry. */
function translate(error: unknown): unknown {
  const message = error instanceof Error ? error.message : String(error);
  const named = /^(absolute path|invalid relative path|invalid characters in fileName): (.*)$/s.exec(message);
  if (named) {
    const reason =
      named[1] === "absolute path"
        ? "is an absolute path"
        : named[1] === "invalid relative path"
          ? "leaves the archive's folder (..)"
          : "has characters that are not allowed in a file name";
    return new ArchiveRefused(named[2]!, reason);
  }
  if (error instanceof ArchiveRefused) return error;
  return new ArchiveRefused(undefined, `the zip file cannot be read: ${message}`);
}

/** A failure while reading one entry's data, named after the entry. */
function entryError(entry: yauzl.Entry, error: unknown): ArchiveRefused {
  if (error instanceof ArchiveRefused) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (/too many bytes in the stream/.test(message)) {
    return new ArchiveRefused(
      entry.fileName,
      `inflates past the ${entry.uncompressedSize} bytes its header declares (a compression bomb)`,
    );
  }
  return new ArchiveRefused(entry.fileName, `cannot be unpacked: ${message}`);
}

/** Counts every inflated byte; a stream longer than its header says is a compression bomb. */
function counter(name: string, guard: EntryGuard, declared: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      try {
        if (seen > declared) {
          throw new ArchiveRefused(
            name,
            `inflates past the ${declared} bytes its header declares (a compression bomb)`,
          );
        }
        guard.count(name, chunk.length);
        done(null, chunk);
      } catch (error) {
        done(error as Error);
      }
    },
  });
}

export async function readZip(file: string, guard: EntryGuard, sink: EntrySink): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(file, {
      autoClose: true,
      validateEntrySizes: true,
      strictFileNames: false,
    });
  } catch (error) {
    throw translate(error);
  }
  try {
    for await (const entry of zip.eachEntry()) {
      const { kind, mode } = kindOf(entry);
      const rel = guard.admit({ name: entry.fileName, kind, mode, declaredSize: entry.uncompressedSize });
      if (rel === null) continue;
      if (kind === "directory") {
        await sink.directory(rel);
        continue;
      }
      if (entry.isEncrypted()) throw new ArchiveRefused(entry.fileName, "is encrypted");
      if (!entry.canDecodeFileData()) {
        throw new ArchiveRefused(
          entry.fileName,
          `uses compression method ${entry.compressionMethod}, which evalgate cannot read`,
        );
      }
      const data = await zip.openReadStreamPromise(entry);
      const counted = data.pipe(counter(entry.fileName, guard, entry.uncompressedSize));
      data.on("error", (error) => counted.destroy(error));
      try {
        await sink.file(rel, mode, counted);
      } catch (error) {
        throw entryError(entry, error);
      }
    }
  } catch (error) {
    zip.close();
    throw translate(error);
  }
}
