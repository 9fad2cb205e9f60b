/**
 * Bounded, contained reads of a bundle's files for reports. A diff is read from its head up to a
 * cap and a log from its tail, so a bundle whose agent printed gigabytes is read in constant memory.
 * Paths come from index.jsonl and case summaries, which may come from a downloaded artifact: a path
 * that leaves the bundle is refused, never read. Problems are collected, never thrown (but a file
 * that does not match the bundle's seal, read through a FileSeal, is: the bundle is not trusted).
 */
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from "node:fs";
import path from "node:path";
import { isWithin } from "../paths.js";

/**
 * A bounded piece of a bundle's text file: the head of a diff or the tail of a log. The report
 * view's `Excerpt` has this shape; it is declared here too so that the bundle knows nothing of the
 * reports.
 */
export interface FileExcerpt {
  text: string;
  /** Size of the whole file in bytes. */
  totalBytes: number;
  /** Whether `text` is only part of the file. */
  truncated: boolean;
  /** Bundle-relative path of the file. */
  path: string;
}

/** Why a file of a bundle was not read. */
export type RefusedRead = "outside" | "missing" | "special" | "too-large" | "unreadable";

/** A bundle file that the confined reader would not (or could not) read. */
export class RefusedFile extends Error {
  constructor(
    readonly rel: string,
    readonly reason: RefusedRead,
    detail: string,
  ) {
    super(`${rel}: ${detail}`);
    this.name = "RefusedFile";
  }
}

/**
 * Opens `rel` inside the bundle `root` as untrusted input: a relative path with no `..`, that does
 * not leave the bundle through a symbolic link, and that is a regular file (opened non-blocking, so
 * a FIFO or a device is refused at once instead of hanging the reader). `rootReal` is the root
 * with its links resolved. Synchronous, like the reads below: a report reads thousands of small
 * files that are in the page cache, and the promise API's round trips per file (resolve, open,
 * stat, read, close) cost several times the reading itself (decision 0174 found the same for the
 * seal; docs/decisions/0236).
 */
export function openConfined(root: string, rel: string, rootReal?: string): { fd: number; size: number } {
  const segments = rel.split(/[\\/]/);
  if (!rel || rel.includes("\0") || path.isAbsolute(rel) || segments.includes(".."))
    throw new RefusedFile(rel, "outside", "the path leaves the bundle; not read");
  const abs = path.resolve(root, rel);
  let real: string;
  try {
    real = realpathSync.native(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new RefusedFile(rel, "missing", "missing");
    throw new RefusedFile(rel, "unreadable", `cannot be read (${code ?? (error as Error).message})`);
  }
  const base = rootReal ?? realRoot(root);
  if (!isWithin(root, abs) || !isWithin(base, real))
    throw new RefusedFile(rel, "outside", "the path leaves the bundle; not read");
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new RefusedFile(rel, "missing", "missing");
    if (code === "ELOOP") throw new RefusedFile(rel, "outside", "the path leaves the bundle; not read");
    if (code === "ENXIO") throw new RefusedFile(rel, "special", "not a regular file; not read");
    throw new RefusedFile(rel, "unreadable", `cannot be read (${code ?? (error as Error).message})`);
  }
  const st = fstatSync(fd);
  if (!st.isFile()) {
    closeSync(fd);
    throw new RefusedFile(
      rel,
      "special",
      `${st.isDirectory() ? "a folder" : st.isFIFO() ? "a FIFO (named pipe)" : "not a regular file"}, not a file evalgate writes; not read`,
    );
  }
  return { fd, size: st.size };
}

/** The bundle root with its links resolved (itself when it cannot be resolved). */
function realRoot(root: string): string {
  try {
    return realpathSync.native(root);
  } catch {
    return root;
  }
}

/** The whole of a bundle file, read through openConfined, refused beyond `maxBytes`. */
export async function readConfined(
  root: string,
  rel: string,
  maxBytes: number,
  rootReal?: string,
): Promise<Buffer> {
  const { fd, size } = openConfined(root, rel, rootReal);
  try {
    if (size > maxBytes)
      throw new RefusedFile(rel, "too-large", `${size} bytes, more than the ${maxBytes} evalgate reads`);
    const buf = Buffer.alloc(size);
    const bytesRead = readSync(fd, buf, 0, size, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    closeSync(fd);
  }
}

/** A file read through a {@link FileSeal} that is not the file the bundle's seal names. */
export class SealBroken extends Error {
  override name = "SealBroken";
}

/**
 * The seal of a large bundle, checked one file at a time as a report reads it (bundle/seal.ts
 * checked the digest over summary.json and these hashes): a report of thousands of cases hashes the
 * files it shows, not every file of the bundle (docs/decisions/0236).
 */
export class FileSeal {
  constructor(private readonly expected: Readonly<Record<string, string>>) {}

  /** Throws SealBroken unless `bytes` are the content the seal lists for `rel`. */
  verify(rel: string, bytes: Buffer): void {
    this.verifyHash(rel, createHash("sha256").update(bytes).digest("hex"));
  }

  /** The whole of an open file hashed (the report may show only its head or tail) and verified. */
  verifyOpen(rel: string, fd: number): void {
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(256 * 1024);
    for (let at = 0; ; ) {
      const bytesRead = readSync(fd, buf, 0, buf.length, at);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      at += bytesRead;
    }
    this.verifyHash(rel, hash.digest("hex"));
  }

  /** A file the seal lists could not be found: the bundle lost it after it was sealed. */
  verifyMissing(rel: string): void {
    if (Object.hasOwn(this.expected, rel)) throw new SealBroken(`missing: ${rel}`);
  }

  private verifyHash(rel: string, actual: string): void {
    if (!Object.hasOwn(this.expected, rel)) throw new SealBroken(`added: ${rel}`);
    if (this.expected[rel] !== actual) throw new SealBroken(`changed: ${rel}`);
  }
}

/** A result.json or grading.json larger than this is not parsed (a tests scorer keeps ≤ 1,000 tests). */
const JSON_CAP_BYTES = 8 * 1024 * 1024;

export class BundleFiles {
  readonly problems: string[] = [];
  /** Shared by a reader and its children: the bundle root with symbolic links resolved, once. */
  private shared: { rootReal?: string } = {};
  constructor(
    readonly root: string,
    /** Shared by a reader and its children: what the report has read so far, against its budgets. */
    readonly spent = { passingDiffBytes: 0, evidenceBytes: 0 },
    /** When given, every file read is checked against it; a mismatch throws SealBroken. */
    readonly seal?: FileSeal,
  ) {}

  /** A reader that collects its own problems (one attempt's), sharing the budget and the resolved root. */
  child(): BundleFiles {
    const c = new BundleFiles(this.root, this.spent, this.seal);
    c.shared = this.shared;
    return c;
  }

  private rootReal(): string {
    this.shared.rootReal ??= realRoot(this.root);
    return this.shared.rootReal;
  }

  async json<T>(rel: string, required = true): Promise<T | null> {
    try {
      const buf = await readConfined(this.root, rel, JSON_CAP_BYTES, this.rootReal());
      this.seal?.verify(rel, buf);
      return JSON.parse(buf.toString("utf8")) as T;
    } catch (error) {
      if (error instanceof SealBroken) throw error;
      if (error instanceof RefusedFile) {
        if (error.reason === "missing") this.seal?.verifyMissing(rel);
        if (error.reason === "missing" && !required) return null;
        this.problems.push(
          error.reason === "too-large"
            ? `${rel}: ${error.message.slice(rel.length + 2).split(",")[0]}, too large to read for the report`
            : error.message,
        );
        return null;
      }
      this.problems.push(`${rel}: cannot be read (${(error as Error).message})`);
      return null;
    }
  }

  /** The first `max` bytes of a file, cut at the last whole line. */
  head(rel: string, max: number): Promise<FileExcerpt | null> {
    return this.excerpt(rel, max, "head");
  }

  /** The last `max` bytes of a file, from the first whole line. */
  tail(rel: string, max: number): Promise<FileExcerpt | null> {
    return this.excerpt(rel, max, "tail");
  }

  /** At most `max` bytes from one end of a file, trimmed to whole lines where it was cut. */
  private async excerpt(rel: string, max: number, end: "head" | "tail"): Promise<FileExcerpt | null> {
    try {
      const { fd, size } = openConfined(this.root, rel, this.rootReal());
      try {
        this.seal?.verifyOpen(rel, fd);
        const want = Math.min(size, max);
        const buf = Buffer.alloc(want);
        const bytesRead = readSync(fd, buf, 0, want, end === "head" ? 0 : size - want);
        let text = buf.subarray(0, bytesRead).toString("utf8");
        const truncated = bytesRead < size;
        if (truncated && end === "head") {
          const cut = text.lastIndexOf("\n");
          text = cut > 0 ? text.slice(0, cut + 1) : text.replace(/\uFFFD+$/, "");
        } else if (truncated) {
          const nl = text.indexOf("\n");
          text = nl >= 0 && nl < text.length - 1 ? text.slice(nl + 1) : text.replace(/^\uFFFD+/, "");
        }
        return { text, totalBytes: size, truncated, path: rel };
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      if (error instanceof SealBroken) throw error;
      if (error instanceof RefusedFile) {
        if (error.reason === "missing") this.seal?.verifyMissing(rel);
        if (error.reason !== "missing") this.problems.push(error.message);
      } else this.problems.push(`${rel}: cannot be read (${(error as Error).message})`);
      return null;
    }
  }
}
