/**
 * Extracting a downloaded bundle artifact. The zip may come from another workflow run (a base-branch
 * run, a fork's run), so it is treated as hostile: names that climb out of the folder, absolute
 * names, links and devices are refused, and the number of entries and bytes written are capped
 * (sizes in the headers are checked against the data, so a zip bomb stops at the cap).
 */
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import yauzl from "yauzl";

export class UnsafeArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeArchiveError";
  }
}

export interface ExtractLimits {
  maxEntries: number;
  maxBytes: number;
}

export const DEFAULT_LIMITS: ExtractLimits = { maxEntries: 200_000, maxBytes: 2 * 1024 ** 3 };

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** The entry's type from its Unix mode, when the zip was made on Unix (else undefined). */
function unixType(entry: yauzl.Entry): number | undefined {
  const madeBy = entry.versionMadeBy >> 8;
  const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
  return madeBy === 3 && mode !== 0 ? mode & S_IFMT : undefined;
}

/** Extracts `zipFile` into `dest` (created); returns the number of files written. */
export async function extractZip(
  zipFile: string,
  dest: string,
  limits: ExtractLimits = DEFAULT_LIMITS,
): Promise<number> {
  const root = path.resolve(dest);
  await mkdir(root, { recursive: true });
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(
      zipFile,
      { lazyEntries: true, decodeStrings: true, validateEntrySizes: true, strictFileNames: true },
      (err, z) => (err ? reject(err) : resolve(z!)),
    ),
  );
  let entries = 0;
  let bytes = 0;
  let files = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (error: unknown) => {
        zip.close();
        reject(error);
      };
      zip.on("error", (error: Error) =>
        // yauzl checks names itself (absolute paths, "..", backslashes) and reports them here.
        fail(
          /fileName|relative path|absolute path/i.test(error.message)
            ? new UnsafeArchiveError(error.message)
            : error,
        ),
      );
      zip.on("end", resolve);
      zip.on("entry", (entry: yauzl.Entry) => {
        void (async () => {
          entries++;
          if (entries > limits.maxEntries)
            throw new UnsafeArchiveError(`more than ${limits.maxEntries} entries`);
          const target = path.resolve(root, entry.fileName);
          if (target !== root && !target.startsWith(root + path.sep))
            throw new UnsafeArchiveError(`entry ${JSON.stringify(entry.fileName)} points outside the folder`);
          const type = unixType(entry);
          const isDir = entry.fileName.endsWith("/");
          if (type !== undefined && type !== (isDir ? S_IFDIR : S_IFREG))
            throw new UnsafeArchiveError(`entry ${JSON.stringify(entry.fileName)} is a link or special file`);
          if (isDir) {
            await mkdir(target, { recursive: true });
          } else {
            await mkdir(path.dirname(target), { recursive: true });
            const stream = await new Promise<NodeJS.ReadableStream>((res, rej) =>
              zip.openReadStream(entry, (err, s) => (err ? rej(err) : res(s!))),
            );
            const cap = new Transform({
              transform(chunk: Buffer, _enc, done) {
                bytes += chunk.length;
                if (bytes > limits.maxBytes)
                  done(new UnsafeArchiveError(`more than ${limits.maxBytes} bytes when extracted`));
                else done(null, chunk);
              },
            });
            // "wx": never follow or replace something already there (two entries of one name).
            await pipeline(stream, cap, createWriteStream(target, { flags: "wx", mode: 0o644 }));
            files++;
          }
          zip.readEntry();
        })().catch(fail);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return files;
}
