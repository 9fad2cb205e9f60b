/**
 * Tar and gzipped tar archives through node-tar's parser. evalgate gunzips the file itself and
 * counts every decompressed byte before the parser sees it, so a gzip bomb is stopped by what it
 * really inflates to, whatever its headers say.
 */
import { createReadStream } from "node:fs";
import { Transform } from "node:stream";
import { createGunzip } from "node:zlib";
import { Parser, type ReadEntry } from "tar";
import { ArchiveRefused, type EntryGuard, type EntryKind, type EntrySink } from "./archive.js";

const KINDS: Record<string, EntryKind> = {
  File: "file",
  OldFile: "file",
  ContiguousFile: "file",
  Directory: "directory",
  SymbolicLink: "symlink",
  Link: "hardlink",
  CharacterDevice: "character device",
  BlockDevice: "block device",
  FIFO: "fifo",
};

/** Tar headers and padding take at most this much beside the file data (per entry, plus the end). */
const TAR_OVERHEAD_PER_ENTRY = 4096;
const TAR_OVERHEAD = 1 << 20;

function refusal(error: unknown): ArchiveRefused {
  if (error instanceof ArchiveRefused) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ArchiveRefused(undefined, `the tar file cannot be read: ${message}`);
}

/** A pass-through that gives each chunk's size to `check` first: a throw ends the stream with that error. */
function checkedStream(check: (bytes: number) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      try {
        check(chunk.length);
        done(null, chunk);
      } catch (error) {
        done(error as Error);
      }
    },
  });
}

export function readTar(file: string, gzipped: boolean, guard: EntryGuard, sink: EntrySink): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let failure: ArchiveRefused | undefined;
    let current: string | undefined;
    const writes: Promise<void>[] = [];
    const source = createReadStream(file);
    const gunzip = gzipped ? createGunzip() : undefined;
    const parser = new Parser({ strict: true, brotli: false, zstd: false });

    const fail = (error: unknown) => {
      if (failure) return;
      failure = refusal(error);
      source.destroy();
      gunzip?.destroy();
      streamCounter.destroy();
      parser.abort(failure);
      reject(failure);
    };

    // Every decompressed byte, headers included: the parser never sees more than the limits allow.
    const streamLimit =
      guard.limits.maxUnpackedSize + guard.limits.maxEntries * TAR_OVERHEAD_PER_ENTRY + TAR_OVERHEAD;
    let streamed = 0;
    const streamCounter = checkedStream((bytes) => {
      streamed += bytes;
      if (streamed <= streamLimit) return;
      throw current === undefined
        ? new ArchiveRefused(undefined, "the archive decompresses past what max_unpacked_size allows")
        : new ArchiveRefused(current, "takes the decompressed data past what max_unpacked_size allows");
    });

    parser.on("entry", (entry: ReadEntry) => {
      if (failure) {
        entry.resume();
        return;
      }
      current = entry.path;
      let rel: string | null;
      const kind = KINDS[entry.type] ?? "other";
      try {
        rel = guard.admit({
          name: entry.path,
          kind,
          mode: entry.mode,
          linkTarget: entry.linkpath,
          declaredSize: entry.size,
        });
      } catch (error) {
        entry.resume();
        fail(error);
        return;
      }
      if (rel === null || kind === "directory") {
        if (rel !== null) writes.push(sink.directory(rel).catch(fail));
        entry.resume();
        return;
      }
      const name = entry.path;
      const counted = checkedStream((bytes) => guard.count(name, bytes));
      entry.pipe(counted);
      writes.push(
        sink.file(rel, entry.mode, counted).catch((error) => {
          fail(
            error instanceof ArchiveRefused
              ? error
              : new ArchiveRefused(name, `cannot be unpacked: ${(error as Error).message}`),
          );
        }),
      );
    });
    // Entry types the parser skips on its own (sparse files, tape headers, oversized metadata).
    parser.on("ignoredEntry", (entry: ReadEntry) => {
      fail(new ArchiveRefused(entry.path, `has entry type ${entry.type}, which evalgate does not unpack`));
    });
    parser.on("error", fail);
    parser.on("end", () => {
      Promise.all(writes).then(() => {
        if (!failure) resolve();
      }, fail);
    });

    source.on("error", fail);
    gunzip?.on("error", (error) =>
      fail(new ArchiveRefused(undefined, `the gzip data cannot be decompressed: ${error.message}`)),
    );
    streamCounter.on("error", fail);
    const decompressed = gunzip ? source.pipe(gunzip) : source;
    decompressed.pipe(streamCounter).pipe(parser as unknown as NodeJS.WritableStream);
  });
}
