/**
 * The action edge: inputs → the bot's decision → the step's mode (github/modes/) → its outcome
 * published (artifact, sticky comment, check run, job summary, outputs). The exit status is the
 * gate's: 0 passed, 1 failed, 2 a mistake in the inputs or eval files, 3 a bug (errors.ts maps
 * errors as the CLI does).
 */
import { readBundleAs } from "../bundle/read.js";
import { EXIT, failureOf } from "../errors.js";
import { LineProgress, type Progress } from "../report/console.js";
import { shardFinished } from "../report/format.js";
import { ChildProcessRunner, type ProcessRunner } from "../sandbox/process.js";
import { ActionsArtifactStore, type ArtifactStore } from "./artifact.js";
import { type BotPlan, prepareBot } from "./bot.js";
import { createClient } from "./client.js";
import { readEventContext, readEventPayload, runUrl } from "./context.js";
import { envInputReader, parseInputs } from "./inputs.js";
import { ActionsLogger, maskSecret, setOutputs } from "./io.js";
import { type Produced, produceBundle } from "./modes/index.js";
import { publishOutcome } from "./outcome.js";
import { skipStep } from "./skip.js";

export interface StepDeps {
  env: NodeJS.ProcessEnv;
  artifacts: ArtifactStore;
  logger: ActionsLogger;
  /** The run mode's agents, setups and scorers; default: child processes of this one. */
  runner?: ProcessRunner;
  /** The run mode's attempt-by-attempt lines; default: one line each on stdout (the job log). */
  progress?: Progress;
}

export async function run(
  deps: StepDeps = { env: process.env, artifacts: new ActionsArtifactStore(), logger: new ActionsLogger() },
): Promise<number> {
  const { env, logger } = deps;
  let bot: BotPlan | undefined;
  try {
    const inputs = parseInputs(envInputReader(env), { workspace: env.GITHUB_WORKSPACE || process.cwd() });
    maskSecret(inputs.token);
    // Agents get an allow-listed environment anyway; the token need not stay in this process's either.
    delete env["INPUT_GITHUB-TOKEN"];
    const first = readEventContext(env);
    const client = inputs.token
      ? createClient({ token: inputs.token, baseUrl: first.apiUrl, logger })
      : undefined;
    bot = await prepareBot(inputs, first, {
      client,
      logger,
      payload: readEventPayload(env),
      today: new Date(),
    });
    const ctx = bot.ctx;
    if (bot.skipped) return await skipStep(bot, inputs, ctx, client, deps);
    let produced: Produced;
    try {
      produced = await produceBundle(
        inputs,
        ctx,
        {
          client,
          logger,
          env,
          runner: deps.runner ?? new ChildProcessRunner(),
          progress: deps.progress ?? new LineProgress(process.stdout),
        },
        bot.run,
      );
    } catch (error) {
      await bot.finish("error", runUrl(ctx));
      throw error;
    }
    const rows = produced.made ? (await readBundleAs(produced.dir)).rows : [];
    const { outputs, reasons } = await publishOutcome(
      produced,
      inputs,
      ctx,
      client,
      deps,
      bot.sections(rows, produced.baseline),
    );
    if (inputs.mode.kind === "run") outputs.ran = "true";
    setOutputs(outputs);
    await bot.finish(outputs.verdict === "fail" ? "fail" : "pass", runUrl(ctx));
    if (outputs.verdict === "fail") {
      logger.fail(`evalgate: gate failed${reasons.length ? `: ${reasons.join("; ")}` : ""}`);
      return EXIT.fail;
    }
    const shard = produced.summary.run.shard;
    logger.info(
      shard ? `evalgate: ${shardFinished(shard, produced.summary.counts)}` : "evalgate: gate passed",
    );
    return EXIT.pass;
  } catch (error) {
    const failure = failureOf(error, {
      enabled: env.RUNNER_DEBUG === "1" || Boolean(env.EVALGATE_DEBUG),
      how: "Re-run with debug logging for details.",
    });
    logger.fail(failure.message);
    return failure.status;
  } finally {
    // The exam's files (the base commit's, outside the checkout) go with the step.
    await bot?.close();
  }
}
