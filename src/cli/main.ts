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
