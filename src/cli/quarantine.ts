/**
 * The quarantine file of a CLI command (`--quarantine FILE`, `--no-quarantine`), read as the action
 * reads it (config/quarantine.ts), so that a case quarantined in CI is quarantined on a laptop too.
 * The default `.evalgate/quarantine.yaml` is the repository's (where the action's default points);
 * a file named with --quarantine is relative to the current folder and must exist.
 */
import path from "node:path";
import { DEFAULT_QUARANTINE_FILE, type Quarantine, readQuarantineFile } from "../config/quarantine.js";
import { UsageError } from "../errors.js";

/** `--quarantine FILE` (a string), `--no-quarantine` (false), or neither (undefined). */
export type QuarantineFlag = string | false | undefined;

export async function cliQuarantine(
  flag: QuarantineFlag,
  cwd: string,
  projectRoot: string,
  today: Date = new Date(),
): Promise<Quarantine | null> {
  if (flag === false) return null;
  const abs =
    typeof flag === "string" ? path.resolve(cwd, flag) : path.join(projectRoot, DEFAULT_QUARANTINE_FILE);
  const display = path.relative(cwd, abs) || abs;
  const q = await readQuarantineFile(abs, display, today, "strict");
  if (q === null && typeof flag === "string")
    throw new UsageError(`--quarantine ${flag}: no such file (--no-quarantine runs without one)`);
  return q;
}
