/**
 * Why setup failed, in one line: the failing command's own first error line, not its last lines
 * (npm ends with "A complete log of this run can be found in …", a file in setup's HOME, which is
 * removed with the prepared start). Its debug logs are appended to setup.log, which is kept.
 */
import { existsSync } from "node:fs";
import { appendFile, readFile } from "node:fs/promises";
import { isWithin } from "../paths.js";

/** A line that names a missing or forbidden path: the most precise cause a tool prints. */
const PATH_CAUSE = /ENOENT|EACCES|EPERM|No such file|not found|cannot find|Cannot find|Permission denied/;
/** Any error line. */
const ERROR_LINE = /\b(error|ERR!|fatal|Traceback|Exception|failed)\b/i;
/** Lines that point elsewhere instead of saying what went wrong. */
const POINTER = /complete log of this run|A complete log|for more details|--verbose|^npm error\s*$/i;

/** The first line of `log` that says what went wrong (a missing path first, then any error). */
export function firstErrorLine(log: string): string | undefined {
  const lines = log
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !POINTER.test(l));
  const line =
    lines.find((l) => PATH_CAUSE.test(l) && l.includes("/")) ?? lines.find((l) => ERROR_LINE.test(l));
  return line && line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/** Debug logs the output points to inside `home` (npm's _logs), appended to setup.log before home goes. */
export async function keepToolLogs(setupLog: string, log: string, home: string): Promise<void> {
  const named = new Set([...log.matchAll(/(\/\S+?\/_logs\/\S+?\.log)\b/g)].map((m) => m[1]!));
  for (const file of named) {
    if (!isWithin(home, file) || !existsSync(file)) continue;
    const text = await readFile(file, "utf8").catch(() => "");
    await appendFile(setupLog, `\n--- ${file} (kept here: setup's HOME is removed after setup) ---\n${text}`);
  }
}
