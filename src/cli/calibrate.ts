/**
 * `evalgate calibrate`: the suite run N times on the unchanged working tree (A/A runs), each run's
 * bundle written to OUT/run-K, then each case's rate, interval, admission and needed repeat
 * (pipeline/calibrate.ts). The bundles are a base history: `--baseline OUT` pools them.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { BaseHistory, readBaselines } from "../bundle/history.js";
import { EXIT, UsageError } from "../errors.js";
import { StreamLogger } from "../log.js";
import { calibrateView } from "../pipeline/calibrate.js";
import { planRun, type RunOutcome } from "../pipeline/run.js";
import { calibrateJson, renderCalibrateText } from "../report/calibrate.js";
import { SilentProgress } from "../report/console.js";
import { exitCodeOf } from "../run/interrupt.js";
import { repositoryRoot } from "../workspace/git.js";
import { cliRunOptions, type SelectionFlags } from "./args.js";
import type { CommandIO } from "./io.js";
import { runInterruptibly } from "./run.js";

export interface CalibrateFlags extends SelectionFlags {
  runs?: number;
  out?: string;
  json?: boolean;
}

export const DEFAULT_CALIBRATE_RUNS = 5;
export const DEFAULT_CALIBRATE_OUT = ".evalgate/calibrate";

/** OUT must be new or empty: bundles of another calibration would be pooled with these. */
async function checkOut(abs: string, given: string): Promise<void> {
  const names = await readdir(abs).catch(() => [] as string[]);
  if (names.length > 0)
    throw new UsageError(
      `--out ${given} is not empty: calibrate writes run-1 … run-N there and reads every bundle in it back; give a new or empty folder (or remove ${given})`,
    );
}

export async function calibrateCommand(paths: string[], o: CalibrateFlags, io: CommandIO): Promise<number> {
  const runs = o.runs ?? DEFAULT_CALIBRATE_RUNS;
  const given = o.out ?? DEFAULT_CALIBRATE_OUT;
  const outDir = path.resolve(io.cwd, given);
  await checkOut(outDir, given);
  const logger = o.json ? new StreamLogger(io.stderr, io.stderr) : io.logger;
  const projectRoot = await repositoryRoot(io.cwd);
  let last: RunOutcome | undefined;
  for (let k = 1; k <= runs; k++) {
    // A/A: each run alone (no baseline); the history is read back from all of them at the end.
    const opts = cliRunOptions(
      paths,
      { ...o, out: path.join(outDir, `run-${k}`) },
      { cwd: io.cwd, projectRoot },
    );
    const plan = await planRun(opts);
    io.stderr.write(`evalgate calibrate: run ${k} of ${runs} (${plan.cases.length} cases)\n`);
    const { result, interrupted } = await runInterruptibly(opts, plan, new SilentProgress(), logger);
    last = result;
    if (interrupted) {
      io.stderr.write(
        `evalgate: interrupted by ${interrupted}: calibration stopped after ${k - 1} complete runs; the bundles are in ${given}\n`,
      );
      return exitCodeOf(interrupted);
    }
  }
  const history = new BaseHistory(await readBaselines([outDir], io.cwd, "--out"));
  const view = calibrateView(history, last!.plan);
  io.stdout.write(
    o.json ? `${JSON.stringify(calibrateJson(view, given), null, 2)}\n` : renderCalibrateText(view, given),
  );
  return EXIT.pass;
}
