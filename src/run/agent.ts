/** The attempt's agent step (run/attempt.ts): the prompt, the agent's run in its place, its record. */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { agentFolder } from "../config/types.js";
import { providerFor } from "../providers/index.js";
import type { AgentOutcome } from "../providers/types.js";
import { buildEnv } from "../sandbox/env.js";
import type { OverlayMount } from "../sandbox/overlay.js";
import type { ProcessRunner } from "../sandbox/process.js";
import type { PreparedStart } from "../workspace/start.js";
import { type AttemptInput, promptFor } from "./attempt.js";
import type { AttemptState } from "./attempt-result.js";
import { agentRunnerFor, limitWatch } from "./environment.js";
import type { AgentRecord } from "./types.js";

/** The attempt's folders the agent is given (run/attempt.ts makes them). */
export interface AttemptDirs {
  ws: string;
  home: string;
  tmp: string;
}

export interface AgentStep {
  input: AttemptInput;
  start: PreparedStart;
  /** The run's runner with the case's log cap. */
  runner: ProcessRunner;
  dirs: AttemptDirs;
  /** What setup built, shared with an upper layer of the attempt's own (run/share.ts). */
  overlays: readonly OverlayMount[];
}

/** Runs the agent on the prepared workspace and records what it did in `s` (its facts, usage, warnings). */
export async function runAgent(step: AgentStep, s: AttemptState): Promise<void> {
  const { input, dirs } = step;
  const { spec, evidenceDir } = input;
  const prompt = promptFor(spec);
  const promptFile = path.join(input.workDir, "prompt.md");
  await writeFile(promptFile, prompt);
  await writeFile(path.join(evidenceDir, "prompt.md"), prompt);
  const agentLog = path.join(evidenceDir, "agent.log");
  await writeFile(agentLog, "");
  const target = spec.target;
  // In the case's image, under bubblewrap, or under the run's reaper; within the case's resources.
  const agentLimit = limitWatch(
    agentRunnerFor(step.runner, { ...input, workspace: dirs.ws, overlays: step.overlays }),
  );
  const outputFile = path.join(input.workDir, "output.json");
  const a0 = performance.now();
  const outcome = await providerFor(target.provider).run({
    target,
    test: spec.test,
    workspace: agentFolder(dirs.ws, step.start.subdir),
    repoRoot: dirs.ws,
    attemptDir: input.workDir,
    evidenceDir,
    prompt,
    promptFile,
    outputFile,
    attempt: input.attempt,
    evalDir: spec.evalDir,
    timeoutMs: spec.timeouts.agentMs,
    logFile: agentLog,
    env: buildEnv({
      passthrough: target.envPassthrough,
      values: {
        ...target.env,
        EVALGATE_ATTEMPT: String(input.attempt),
        EVALGATE_RETRY: String(input.retry),
        EVALGATE_TEST_ID: spec.test.id,
        EVALGATE_OUTPUT_FILE: outputFile,
      },
      home: dirs.home,
      tmp: dirs.tmp,
    }),
    runner: agentLimit.runner,
    ...(input.place ? { inEnvironment: true } : {}),
  });
  s.phases.agentMs = Math.round(performance.now() - a0);
  recordAgent(outcome, agentLimit.hit(), spec.timeouts.agentMs, s);
}

function recordAgent(
  outcome: AgentOutcome,
  limit: AgentRecord["limit"],
  timeoutMs: number,
  s: AttemptState,
): void {
  const agent: AgentRecord = {
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    timedOut: outcome.timedOut,
    durationMs: outcome.durationMs,
  };
  if (outcome.error) agent.error = outcome.error;
  if (outcome.stopped) agent.stopped = outcome.stopped;
  if (outcome.activity) agent.activity = outcome.activity;
  if (outcome.infrastructure) agent.infrastructure = outcome.infrastructure;
  if (limit) agent.limit = limit;
  if (outcome.usage) s.usage = outcome.usage;
  if (outcome.transcript) s.transcript = outcome.transcript;
  if (outcome.agentOutput) s.agentOutput = outcome.agentOutput;
  s.warnings.push(...(outcome.warnings ?? []));
  s.facts.agent = agent;
  s.facts.agentTail = outcome.tail;
  s.facts.agentTimeoutMs = timeoutMs;
}
