/**
 * The CLI edge (bin/evalgate.js runs it). Exit status: 0 gate passed, 1 gate failed, 2 invalid
 * configuration or usage, 3 internal error; errors are mapped as the action maps them (errors.ts).
 */
import { CommanderError } from "commander";
import { EXIT, failureOf } from "../errors.js";
import { StreamLogger } from "../log.js";
import type { CliIO } from "./io.js";
import { cliProgram } from "./program.js";

export type { CliIO } from "./io.js";

export async function main(argv: string[], given: Partial<CliIO> = {}): Promise<number> {
  const stdout = given.stdout ?? process.stdout;
  const stderr = given.stderr ?? process.stderr;
  for (const stream of new Set([stdout, stderr])) outliveClosedReader(stream);
  const env = given.env ?? process.env;
  const io = {
    stdout,
    stderr,
    env,
    cwd: given.cwd ?? process.cwd(),
    logger: new StreamLogger(stdout, stderr),
  };
  let status: number = EXIT.pass;
  const program = cliProgram(io, (s) => {
    status = s;
  });
  try {
    await program.parseAsync(argv, { from: "user" });
    if (argv.length === 0) program.outputHelp();
    return status;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed its message (or the help, or the version).
      const done = error.code === "commander.helpDisplayed" || error.code === "commander.version";
      return done || error.exitCode === 0 ? EXIT.pass : EXIT.usage;
    }
    const failure = failureOf(error, {
      enabled: Boolean(env.EVALGATE_DEBUG),
      how: "Set EVALGATE_DEBUG=1 for details.",
    });
    stderr.write(`${failure.message}\n`);
    return failure.status;
  }
}

/**
 * A console whose reader went away (`evalgate run | head -1`, or a parent that gave up and closed
 * its pipes before its SIGTERM arrived) ends the console, not the run. Node would otherwise throw
 * the pipe's EPIPE as an uncaught error: exit status 1, read as "gate failed", with the bundle half
 * written. The run goes on, writes its bundle and exits with its own status; what it would still
 * have printed is lost with the reader.
 */
function outliveClosedReader(stream: NodeJS.WritableStream): void {
  if (stream.listeners("error").includes(ignoreClosedReader)) return;
  stream.on("error", ignoreClosedReader);
}

function ignoreClosedReader(error: NodeJS.ErrnoException): void {
  if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
}
