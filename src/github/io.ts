/**
 * The runner's side channels, through @actions/core: log commands, step outputs (GITHUB_OUTPUT)
 * and the job summary (GITHUB_STEP_SUMMARY).
 */
import * as core from "@actions/core";
import type { Logger } from "../log.js";

export class ActionsLogger implements Logger {
  info(message: string): void {
    core.info(message);
  }
  warn(message: string): void {
    core.warning(message);
  }
  error(message: string): void {
    core.error(message);
  }
  /**
   * Fails the step: the error annotation and the process's exit status at once (core.setFailed), so
   * a runner or a local action runner that reads either sees the failed gate. See decision 0112.
   */
  fail(message: string): void {
    core.setFailed(message);
  }
  notice(message: string): void {
    core.notice(message);
  }
  group(title: string): void {
    core.startGroup(title);
  }
  groupEnd(): void {
    core.endGroup();
  }
}

/** The outputs of action.yml; every one is set, empty when it does not apply. */
export interface ActionOutputs {
  /**
   * The gate's verdict (pass, fail), pending for a shard, or how the step ended without one:
   * skipped (no evals ran), cancelled (the run was stopped), error (exit 2 or 3).
   */
  verdict: "pass" | "fail" | "pending" | "skipped" | "cancelled" | "error" | "";
  "run-id": string;
  "bundle-path": string;
  "artifact-id": string;
  "artifact-url": string;
  "comment-id": string;
  "comment-url": string;
  "check-run-id": string;
  cases: string;
  passed: string;
  failed: string;
  errored: string;
  flaky: string;
  regressions: string;
  /** Cases whose attempts did not settle their verdict (evidence: inconclusive). */
  inconclusive: string;
  /** "true" when the step ran evals, "false" when it decided not to (skipped-reason says why). */
  ran: string;
  "skipped-reason": string;
}

export function emptyOutputs(): ActionOutputs {
  return {
    verdict: "",
    "run-id": "",
    "bundle-path": "",
    "artifact-id": "",
    "artifact-url": "",
    "comment-id": "",
    "comment-url": "",
    "check-run-id": "",
    cases: "",
    passed: "",
    failed: "",
    errored: "",
    flaky: "",
    regressions: "",
    inconclusive: "",
    ran: "",
    "skipped-reason": "",
  };
}

export function setOutputs(outputs: ActionOutputs): void {
  for (const [name, value] of Object.entries(outputs)) core.setOutput(name, value);
}

/** Writes the job summary; false (and nothing written) when GITHUB_STEP_SUMMARY is not set. */
export async function writeJobSummary(markdown: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  // core.summary.write() throws without the variable (outside Actions, or an old runner).
  if (!env.GITHUB_STEP_SUMMARY) return false;
  await core.summary.addRaw(markdown, true).write();
  return true;
}

export function maskSecret(value: string): void {
  if (value) core.setSecret(value);
}
