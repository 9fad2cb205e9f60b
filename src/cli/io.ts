/**
 * What every CLI command writes to and runs in (main.ts fills it from the process), and the small
 * helpers the commands share. Loaded with the command that runs, never at start-up.
 */
import path from "node:path";
import { type Bundle, readBundleAs } from "../bundle/read.js";
import type { Logger } from "../log.js";

export interface CliIO {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface CommandIO extends CliIO {
  /** Notes and warnings: stdout and stderr. */
  logger: Logger;
}

/** A CI job's log is not a terminal to redraw, even when it claims to be one. */
export function isCi(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.CI || env.GITHUB_ACTIONS);
}

/** A bundle folder named on the command line, read and checked (a UsageError naming it if it is not one). */
export function readBundleArg(dir: string, cwd: string): Promise<Bundle> {
  return readBundleAs(path.resolve(cwd, dir));
}
