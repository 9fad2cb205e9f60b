/**
 * Bounded, contained reads of a bundle's files for reports. A diff is read from its head up to a
 * cap and a log from its tail, so a bundle whose agent printed gigabytes is read in constant memory.
 * Paths come from index.jsonl and case summaries, which may come from a downloaded artifact: a path
 * that leaves the bundle is refused, never read. Problems are collected, never thrown.
 */
import { open, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../paths.js";
import type { Excerpt } from "../report/view.js";

/** A result.json or grading.json larger than this is not parsed (a tests scorer keeps ≤ 1,000 tests). */
const JSON_CAP_BYTES = 8 * 1024 * 1024;

export class BundleFiles {
  readonly problems: string[] = [];
  /** Shared by a reader and its children: the bundle root with symbolic links resolved, once. */
  private shared: { rootReal?: Promise<string> } = {};
  constructor(
    readonly root: string,
    /** Shared by a reader and its children: what the report has read so far, against its budgets. */
    readonly spent = { passingDiffBytes: 0, evidenceBytes: 0 },
  ) {}

  /** A reader that collects its own problems (one attempt's), sharing the budget and the resolved root. */
  child(): BundleFiles {
    const c = new BundleFiles(this.root, this.spent);
    c.shared = this.shared;
    return c;
  }

  /**
   * The absolute path of a bundle-relative path, or null (and a problem) when it, or a symbolic
   * link on the way, leaves the bundle. A missing file resolves (the caller reports it).
   */
  async resolve(rel: string): Promise<string | null> {
    const abs = path.resolve(this.root, rel);
    let real = abs;
    try {
      real = await realpath(abs);
    } catch {
      // missing: nothing to follow
    }
    this.shared.rootReal ??= realpath(this.root).catch(() => this.root);
    const rootReal = await this.shared.rootReal;
    for (const [base, p] of [
      [this.root, abs],
      [rootReal, real],
    ] as const) {
      if (!isWithin(base, p)) {
        this.problems.push(`${rel}: the path leaves the bundle; not read`);
        return null;
      }
    }
    return abs;
  }

  async json<T>(rel: string, required = true): Promise<T | null> {
    const abs = await this.resolve(rel);
    if (!abs) return null;
    try {
      const size = (await stat(abs)).size;
      if (size > JSON_CAP_BYTES) {
        this.problems.push(`${rel}: ${size} bytes, too large to read for the report`);
        return null;
      }
      return JSON.parse(await readFile(abs, "utf8")) as T;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" && !required) return null;
      this.problems.push(
        `${rel}: ${code === "ENOENT" ? "missing" : `cannot be read (${(error as Error).message})`}`,
      );
      return null;
    }
  }

  /** The first `max` bytes of a file, cut at the last whole line. */
  head(rel: string, max: number): Promise<Excerpt | null> {
    return this.excerpt(rel, max, "head");
  }

  /** The last `max` bytes of a file, from the first whole line. */
  tail(rel: string, max: number): Promise<Excerpt | null> {
    return this.excerpt(rel, max, "tail");
  }

  /** At most `max` bytes from one end of a file, trimmed to whole lines where it was cut. */
  private async excerpt(rel: string, max: number, end: "head" | "tail"): Promise<Excerpt | null> {
    const abs = await this.resolve(rel);
    if (!abs) return null;
    try {
      const fh = await open(abs, "r");
      try {
        const size = (await fh.stat()).size;
        const want = Math.min(size, max);
        const buf = Buffer.alloc(want);
        const { bytesRead } = await fh.read(buf, 0, want, end === "head" ? 0 : size - want);
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
        await fh.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT")
        this.problems.push(`${rel}: cannot be read (${(error as Error).message})`);
      return null;
    }
  }
}
