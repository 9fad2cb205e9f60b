/**
 * evalgate's own short commands on attempt folders (cp, find, rm, chmod). Node's `spawn`, not
 * execa: every attempt runs several of them, and execa's layers cost about a millisecond and 100 KB
 * of garbage per process (docs/decisions/0171, 0176).
 */
import { spawn } from "node:child_process";

export interface ToolResult {
  /** The exit status; null when the program could not be started or was killed (`stderr` says). */
  code: number | null;
  /** What it printed, when `stdout` was asked for; empty otherwise. */
  stdout: Buffer;
  /** The start of what it printed on stderr (4 KiB at most). */
  stderr: string;
}

/** Runs `cmd` with `args` to its end. */
export function runTool(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; stdout?: boolean } = {},
): Promise<ToolResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ["ignore", opts.stdout ? "pipe" : "ignore", "pipe"],
    });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout?.on("data", (c: Buffer) => out.push(c));
    child.stderr?.on("data", (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString("utf8");
    });
    child.once("error", (e) => resolve({ code: null, stdout: Buffer.alloc(0), stderr: e.message }));
    child.once("close", (code) => resolve({ code, stdout: Buffer.concat(out), stderr }));
  });
}
