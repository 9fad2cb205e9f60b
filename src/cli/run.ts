/** `evalgate run`: the eval files → a run bundle, the case table, and the gate's exit status. */
import type { Plan } from "../config/types.js";
import { EXIT } from "../errors.js";
import { type Logger, StreamLogger } from "../log.js";
import { type OpenExam, openExam } from "../pipeline/exam.js";
import { gateExcludeOf, quarantineBlock } from "../pipeline/quarantine.js";
import { planRun, type RunOptions, type RunOutcome, runEvals } from "../pipeline/run.js";
import { quarantineText } from "../report/bot.js";
import { regressionsOf } from "../report/comment-head.js";
import { LineProgress, LiveProgress, type Progress, SilentProgress } from "../report/console.js";
import { renderCaseTable, renderRunFooter } from "../report/table.js";
import { exitCodeOf, type Interruption, SignalInterrupt } from "../run/interrupt.js";
import { ChildProcessRunner, killLiveGroups } from "../sandbox/process.js";
import { repositoryRoot } from "../workspace/git.js";
import { cliRunOptions, examRequest, type RunOptionFlags } from "./args.js";
import { type CommandIO, isCi } from "./io.js";
import { cliQuarantine, type QuarantineFlag } from "./quarantine.js";

/** The flags of `evalgate run`, as commander parses them (cli/program.ts). */
export interface RunFlags extends RunOptionFlags {
  json?: boolean;
  examFrom?: string;
  quarantine?: QuarantineFlag;
}

function progressFor(io: CommandIO, json: boolean): Progress {
  if (json) return new SilentProgress();
  return io.stdout.isTTY && !isCi(io.env) ? new LiveProgress(io.stdout) : new LineProgress(io.stdout);
}

export async function runCommand(paths: string[], o: RunFlags, io: CommandIO): Promise<number> {
  const json = Boolean(o.json);
  // With --json, stdout is the summary alone.
  const logger = json ? new StreamLogger(io.stderr, io.stderr) : io.logger;
  const projectRoot = await repositoryRoot(io.cwd);
  const exam = o.examFrom ? await openExam(projectRoot, examRequest(o.examFrom), logger) : undefined;
  try {
    return await runWith(paths, o, io, { projectRoot, logger, ...(exam ? { exam } : {}) });
  } finally {
    await exam?.close();
  }
}

/**
 * One run of the CLI, stopped by SIGINT or SIGTERM: its agents stopped, its partial bundle written;
 * `interrupted` names the signal then.
 */
export async function runInterruptibly(
  opts: RunOptions,
  plan: Plan,
  progress: Progress,
  logger: Logger,
): Promise<{ result: RunOutcome; interrupted: Interruption["received"] }> {
  const interrupt = new SignalInterrupt(killLiveGroups).install();
  try {
    const result = await runEvals(
      opts,
      { runner: new ChildProcessRunner(), progress, logger, interruption: interrupt },
      plan,
    );
    return { result, interrupted: interrupt.received };
  } finally {
    interrupt.dispose();
  }
}

async function runWith(
  paths: string[],
  o: RunFlags,
  io: CommandIO,
  with_: { projectRoot: string; logger: Logger; exam?: OpenExam },
): Promise<number> {
  const { stdout, stderr, cwd } = io;
  const json = Boolean(o.json);
  const opts = cliRunOptions(paths, o, { cwd, ...with_ });
  // Read as the action reads it, before anything runs: a bad entry is an error naming file and line.
  // With --exam-from the default file is the exam's, as the action reads the base's on a pull request.
  const quarantine = await cliQuarantine(o.quarantine, cwd, with_.exam?.root ?? with_.projectRoot);
  if (quarantine) opts.gateExclude = gateExcludeOf(quarantine);
  // Planned before the interrupt handler is installed: a signal while a large eval file is read
  // ends evalgate at once (nothing has started that needs stopping or a partial bundle).
  const plan = await planRun(opts);
  const { result, interrupted: sig } = await runInterruptibly(
    opts,
    plan,
    progressFor(io, json),
    with_.logger,
  );
  if (sig) {
    const tries = result.cases.flatMap((c) => c.tries);
    const done = tries.filter((t) => t.failureKind !== "cancelled").length;
    stderr.write(
      `evalgate: interrupted by ${sig}: agents stopped, workspaces removed, ${done} of ${tries.length} attempts finished; the partial bundle (status: ${result.summary.status}) is in ${result.bundleDir}\n`,
    );
    return exitCodeOf(sig);
  }
  if (json) stdout.write(`${JSON.stringify(result.summary, null, 2)}\n`);
  else {
    const q = quarantine ? quarantineText(quarantineBlock(quarantine, result.rows)) : "";
    stdout.write(
      `\n${renderCaseTable(result.view.cases, regressionsOf(result.view).counted)}\n\n${q ? `${q}\n` : ""}${renderRunFooter(result.view, result.bundleDir)}\n`,
    );
  }
  // A shard sees part of the cases (the footer says so): the gate is decided when they are merged.
  if (opts.shard) return EXIT.pass;
  return result.summary.gate.verdict === "pass" ? EXIT.pass : EXIT.fail;
}
