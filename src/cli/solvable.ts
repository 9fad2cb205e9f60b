/** `evalgate validate --solvable`: each test's reference patch must pass and no change must fail. */
import { EXIT } from "../errors.js";
import { StreamLogger } from "../log.js";
import { checkSolvability } from "../pipeline/solvable.js";
import { LineProgress, SilentProgress } from "../report/console.js";
import { renderSolvabilityText, solvabilityJson } from "../report/solvability.js";
import { ChildProcessRunner } from "../sandbox/process.js";
import { CLI_NAMING } from "./args.js";
import type { CommandIO } from "./io.js";
import type { ValidateFlags } from "./validate.js";

export async function solvableCommand(
  paths: string[],
  o: ValidateFlags,
  projectRoot: string,
  io: CommandIO,
): Promise<number> {
  const { stdout, stderr } = io;
  const json = Boolean(o.json);
  const attempts = (o.attempts as number | undefined) ?? 1;
  const report = await checkSolvability(
    {
      cwd: io.cwd,
      projectRoot,
      paths,
      attempts,
      tests: o.test,
      tags: o.tag,
      concurrency: o.concurrency,
      naming: CLI_NAMING,
      ...(o.out ? { out: o.out } : {}),
    },
    {
      runner: new ChildProcessRunner(),
      // stdout is the report alone: progress and notes go to stderr.
      progress: json ? new SilentProgress() : new LineProgress(stderr),
      logger: new StreamLogger(stderr, stderr),
    },
  );
  stdout.write(
    json
      ? `${JSON.stringify(solvabilityJson(report.tests, attempts, report.bundleDir), null, 2)}\n`
      : `${renderSolvabilityText(report.tests, attempts)}${report.bundleDir ? `bundle: ${report.bundleDir}\n` : ""}`,
  );
  return report.tests.every((t) => t.problems.length === 0) ? EXIT.pass : EXIT.fail;
}
