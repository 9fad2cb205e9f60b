/**
 * Reading a file of the repository as text (an eval file, an include, an `instruction_file`, the
 * quarantine file, a judge's rubric): it must be a regular file once links are followed, and at most
 * a size cap. A link to /dev/zero, a FIFO or a folder is refused at once with a reason, instead of
 * being read until memory runs out or blocking forever.
 */
import { constants, type Stats } from "node:fs";
import { lstat, open, readlink } from "node:fs/promises";

/** The cap of an eval file or an included file of cases (decision 0203). */
export const MAX_EVAL_FILE_BYTES = 64 * 2 ** 20;
/** The cap of an `instruction_file` (the agent's task) and of a judge's rubric file. */
export const MAX_TASK_FILE_BYTES = 4 * 2 ** 20;
/** The cap of the quarantine file. */
export const MAX_QUARANTINE_FILE_BYTES = 2 ** 20;

/** Why a text file was not read: `missing` for a file (or a link's target) that is not there. */
export class TextFileRefused extends Error {
  constructor(
    message: string,
    readonly reason: "missing" | "not-a-file" | "too-large" | "unreadable",
  ) {
    super(message);
    this.name = "TextFileRefused";
  }
}

function kindOf(s: Stats): string {
  if (s.isDirectory()) return "a folder";
  if (s.isCharacterDevice() || s.isBlockDevice()) return "a device";
  if (s.isFIFO()) return "a FIFO (named pipe)";
  if (s.isSocket()) return "a socket";
  return "not a regular file";
}

function mib(bytes: number): string {
  return bytes >= 2 ** 20
    ? `${Math.round((bytes / 2 ** 20) * 10) / 10} MiB`
    : `${Math.ceil(bytes / 1024)} KiB`;
}

/** "a link to /dev/zero, " for a link, "" otherwise: the message names what the file really is. */
async function linkNote(abs: string): Promise<string> {
  const l = await lstat(abs).catch(() => undefined);
  if (!l?.isSymbolicLink()) return "";
  const to = await readlink(abs).catch(() => "?");
  return `a link to ${to}, `;
}

/**
 * The text of `abs`, a regular file of at most `maxBytes` bytes. Throws TextFileRefused, whose
 * message completes "<file> …" ("does not exist", "is a link to /dev/zero, a device: …").
 */
export async function readTextFile(abs: string, maxBytes: number): Promise<string> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: opening a FIFO nobody writes to returns at once instead of waiting for a writer.
    fh = await open(abs, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      const link = await linkNote(abs);
      throw new TextFileRefused(link ? `is ${link}which does not exist` : "does not exist", "missing");
    }
    if (code === "EISDIR") throw new TextFileRefused("is a folder, not a file", "not-a-file");
    throw new TextFileRefused(`cannot be read (${code ?? String(error)})`, "unreadable");
  }
  try {
    const s = await fh.stat();
    if (!s.isFile()) {
      throw new TextFileRefused(
        `is ${await linkNote(abs)}${kindOf(s)}: evalgate reads only regular files`,
        "not-a-file",
      );
    }
    const tooLarge = (size: string) =>
      new TextFileRefused(`is ${size}, over the ${mib(maxBytes)} a file of this kind may have`, "too-large");
    if (s.size > maxBytes) throw tooLarge(mib(s.size));
    // The size can change while it is read: never more than the cap plus one byte.
    const buf = Buffer.alloc(Math.min(s.size, maxBytes) + 1);
    let n = 0;
    for (;;) {
      if (n === buf.length) break;
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > maxBytes) throw tooLarge(`more than ${mib(maxBytes)}`);
    return buf.toString("utf8", 0, n);
  } catch (error) {
    if (error instanceof TextFileRefused) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new TextFileRefused(`cannot be read (${code ?? String(error)})`, "unreadable");
  } finally {
    await fh.close();
  }
}
