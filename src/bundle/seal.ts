/**
 * The bundle's seal (docs/decisions/0095): summary.json carries the sha256 of every other file of the bundle
 * and a digest over those and its own content, computed last. Every reader checks it, so a bundle
 * changed after its run (a file edited, added or removed, a verdict rewritten, a write cut off) is
 * detected. It is an integrity check, not a signature: whoever can rewrite the whole bundle can
 * seal it again (decision 0095).
 */
import { createHash } from "node:crypto";
import { closeSync, constants, type Dirent, fstatSync, openSync, readSync } from "node:fs";
import { readdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { readConfined } from "./files.js";
import type { WireSeal, WireSummary } from "./wire.js";

export const SUMMARY_FILE = "summary.json";
/** A summary.json larger than this is not read (a summary holds rollups, not cases). */
export const SUMMARY_CAP_BYTES = 64 * 1024 * 1024;
/** Entries of one bundle beyond which it is not walked (like an artifact's limit). */
const MAX_ENTRIES = 200_000;
const MAX_DEPTH = 32;

interface Walked {
  /** Regular files, bundle-relative with `/`. */
  files: string[];
  /** Anything else that is not a folder: symbolic links, FIFOs, sockets, devices. */
  special: { rel: string; kind: string }[];
}

function kindOf(s: Pick<Dirent, "isSymbolicLink" | "isFIFO" | "isSocket">): string {
  if (s.isSymbolicLink()) return "a symbolic link";
  if (s.isFIFO()) return "a FIFO (named pipe)";
  if (s.isSocket()) return "a socket";
  return "not a regular file";
}

/** Folders read at once while walking a bundle. */
const PARALLEL = 8;

/**
 * Every entry of the bundle, never following a link; `files` sorted. PARALLEL folders are read at a
 * time from a work list: starting every folder's read at once held thousands of pending reads and
 * their listings (24 MB more heap on a 5,000-attempt bundle).
 */
async function walk(root: string): Promise<Walked> {
  const out: Walked = { files: [], special: [] };
  const pending: { rel: string; depth: number }[] = [{ rel: "", depth: 0 }];
  let seen = 0;
  const visit = async ({ rel, depth }: { rel: string; depth: number }): Promise<void> => {
    if (depth > MAX_DEPTH) throw new Error(`${rel}: folders nested deeper than ${MAX_DEPTH}`);
    // The entry's type from the folder listing (no lstat per entry); never a link's target.
    for (const e of await readdir(path.join(root, rel), { withFileTypes: true })) {
      if (++seen > MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} entries`);
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) pending.push({ rel: child, depth: depth + 1 });
      else if (e.isFile()) out.files.push(child);
      else out.special.push({ rel: child, kind: kindOf(e) });
    }
  };
  await new Promise<void>((resolve, reject) => {
    let active = 0;
    let failed = false;
    const pump = (): void => {
      if (failed) return;
      if (pending.length === 0 && active === 0) {
        resolve();
        return;
      }
      while (active < PARALLEL && pending.length > 0) {
        active++;
        visit(pending.pop()!).then(
          () => {
            active--;
            pump();
          },
          (error: unknown) => {
            failed = true;
            reject(error);
          },
        );
      }
    };
    pump();
  });
  out.files.sort();
  out.special.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return out;
}

/**
 * sha256 of one regular file, opened without following a link or blocking on a FIFO. `buf` is
 * reused for every file: a fresh 1 MiB buffer per file zero-filled a gigabyte for every thousand
 * files of a bundle and left them for the garbage collector. Synchronous: a bundle is thousands of
 * small files in the page cache (just written, or just unpacked), and the promise API's four round
 * trips per file cost several times the reading itself (decision 0174).
 */
function hashFile(root: string, rel: string, buf: Buffer): string {
  const fd = openSync(path.join(root, rel), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${rel}: not a regular file`);
    const hash = createHash("sha256");
    for (;;) {
      const bytesRead = readSync(fd, buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
    }
    return hash.digest("hex");
  } finally {
    closeSync(fd);
  }
}

function digestOf(summary: unknown, files: Record<string, string>): string {
  const { seal: _seal, ...rest } = summary as Record<string, unknown>;
  const hash = createHash("sha256").update(JSON.stringify(rest)).update("\n");
  for (const rel of Object.keys(files).sort()) hash.update(`${files[rel]} ${JSON.stringify(rel)}\n`);
  return hash.digest("hex");
}

/** The sha256 of each file but summary.json. */
function hashAll(root: string, files: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const buf = Buffer.allocUnsafe(1024 * 1024);
  for (const rel of files) if (rel !== SUMMARY_FILE) out[rel] = hashFile(root, rel, buf);
  return out;
}

/** Writes a file by renaming a complete copy over it: a reader never sees half of it. */
export async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.partial`);
  try {
    await writeFile(tmp, text);
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw error;
  }
}

/**
 * Seals the bundle in `dir`: the last write of a run, a merge, or the action once it has added its
 * files. Anything in the bundle that is neither a folder nor a regular file is not evalgate's (an
 * agent's link or FIFO): it is removed, and returned so the caller can say so.
 */
export async function sealBundle(dir: string): Promise<{ removed: string[]; summary: WireSummary }> {
  const walked = await walk(dir);
  for (const s of walked.special) await rm(path.join(dir, s.rel), { force: true });
  const summary = JSON.parse(
    (await readConfined(dir, SUMMARY_FILE, SUMMARY_CAP_BYTES)).toString("utf8"),
  ) as WireSummary;
  delete summary.seal;
  const files = hashAll(dir, walked.files);
  const seal: WireSeal = { algorithm: "sha256", files, digest: digestOf(summary, files) };
  const sealed = { ...summary, seal };
  await writeAtomically(path.join(dir, SUMMARY_FILE), `${JSON.stringify(sealed, null, 2)}\n`);
  return { removed: walked.special.map((s) => s.rel), summary: sealed };
}

export type SealCheck = { state: "sealed" | "unsealed" } | { state: "broken"; problem: string };

function wellFormed(s: Partial<WireSeal>): boolean {
  return (
    s.algorithm === "sha256" &&
    typeof s.digest === "string" &&
    Boolean(s.files) &&
    typeof s.files === "object" &&
    !Array.isArray(s.files)
  );
}

/**
 * The seal of a large bundle for a reader that checks each file as it reads it (bundle/files.ts
 * FileSeal): no walk and no hash of the files here, only the digest, which binds summary.json to
 * the list of files and their hashes. What this leaves unchecked is what the reader never reads: a
 * file added, changed or removed that the report does not show (docs/decisions/0236).
 */
export function checkSealListing(
  summary: unknown,
):
  | { state: "unsealed" }
  | { state: "broken"; problem: string }
  | { state: "listed"; files: Record<string, string> } {
  const seal = (summary as { seal?: unknown }).seal;
  if (seal === undefined) return { state: "unsealed" };
  const s = seal as Partial<WireSeal>;
  if (!wellFormed(s) || Object.values(s.files!).some((h) => typeof h !== "string"))
    return { state: "broken", problem: "its seal is not one evalgate writes" };
  const files = s.files as Record<string, string>;
  if (digestOf(summary, files) !== s.digest)
    return { state: "broken", problem: "its files do not match its seal (summary.json changed)" };
  return { state: "listed", files };
}

/** How many files a bundle's seal lists (0 without a seal): what a full check would hash. */
export function sealedFileCount(summary: unknown): number {
  const files = (summary as { seal?: { files?: unknown } } | null)?.seal?.files;
  return files && typeof files === "object" ? Object.keys(files).length : 0;
}

const listed = (names: string[], max = 5) =>
  `${names.slice(0, max).join(", ")}${names.length > max ? ` and ${names.length - max} more` : ""}`;

/**
 * Checks the bundle in `dir` against the seal of its parsed summary.json. A link, FIFO or other
 * special file breaks a sealed bundle, and an unsealed one unless `special` is "allow" (the report
 * view, whose confined reads refuse each such file and list it as a problem).
 */
export async function checkSeal(
  dir: string,
  summary: unknown,
  special: "refuse" | "allow" = "refuse",
): Promise<SealCheck> {
  let walked: Walked;
  try {
    walked = await walk(dir);
  } catch (error) {
    return { state: "broken", problem: `it cannot be walked: ${(error as Error).message}` };
  }
  const seal = (summary as { seal?: unknown }).seal;
  if (walked.special.length > 0 && (seal !== undefined || special === "refuse")) {
    const s = walked.special[0]!;
    return {
      state: "broken",
      problem: `${s.rel} is ${s.kind}: a bundle holds only folders and regular files`,
    };
  }
  if (seal === undefined) return { state: "unsealed" };
  const s = seal as Partial<WireSeal>;
  if (!wellFormed(s)) return { state: "broken", problem: "its seal is not one evalgate writes" };
  const expected = s.files as Record<string, unknown>;
  const present = walked.files.filter((f) => f !== SUMMARY_FILE);
  const here = new Set(present);
  const added = present.filter((f) => !Object.hasOwn(expected, f));
  const missing = Object.keys(expected).filter((f) => !here.has(f));
  const actual = hashAll(dir, present);
  const changed = present.filter((f) => Object.hasOwn(expected, f) && expected[f] !== actual[f]);
  const parts: string[] = [];
  if (changed.length) parts.push(`changed: ${listed(changed)}`);
  if (added.length) parts.push(`added: ${listed(added)}`);
  if (missing.length) parts.push(`missing: ${listed(missing)}`);
  if (parts.length === 0 && digestOf(summary, actual) !== s.digest) parts.push("summary.json changed");
  if (parts.length > 0)
    return { state: "broken", problem: `its files do not match its seal (${parts.join("; ")})` };
  return { state: "sealed" };
}
