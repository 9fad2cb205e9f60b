/**
 * What an attempt's steps learn (run/attempt.ts), and the `AttemptResult` made of it: the same shape
 * whichever step the attempt ended at.
 */
import type { Usage } from "../providers/types.js";
import type { AttemptInput } from "./attempt.js";
import { placeFacts } from "./environment.js";
import type { AttemptTrees } from "./share.js";
import { allTampered, decideStatus, type StageFacts } from "./status.js";
import type { AttemptResult } from "./types.js";

/** Filled in by the steps as they go; read whenever the attempt ends, so every field may be missing. */
export interface AttemptState {
  startedAt: Date;
  /** performance.now() at the start, for the attempt's duration. */
  t0: number;
  phases: AttemptResult["phases"];
  facts: StageFacts;
  warnings: string[];
  usage?: Usage;
  transcript?: string;
  agentOutput?: string;
  /** The workspace's setup-built trees: in the result, also when the start failed, and discarded at the end. */
  trees?: AttemptTrees;
  /** Free bytes of the attempt's filesystem before the agent ran: evidence for a disk the agent fills. */
  freeBefore?: number;
}

export function newAttemptState(): AttemptState {
  return {
    startedAt: new Date(),
    t0: performance.now(),
    phases: { workspaceMs: 0, agentMs: 0, diffMs: 0, scorersMs: 0 },
    facts: {},
    warnings: [],
  };
}

/** The attempt's result as of now: its status decided from the facts gathered so far. */
export function attemptResult(input: AttemptInput, s: AttemptState): AttemptResult {
  const { spec } = input;
  const { facts, trees } = s;
  const decision = decideStatus(facts);
  const r: AttemptResult = {
    caseKey: spec.key,
    attempt: input.attempt,
    retry: input.retry,
    ...decision,
    startedAt: s.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    durationMs: Math.round(performance.now() - s.t0),
    phases: s.phases,
    ...(input.start.setup ? { setup: input.start.setup } : {}),
    dirName: input.dirName,
  };
  if ("sha" in input.start) r.startSha = input.start.sha;
  if (facts.agent) r.agent = facts.agent;
  if (s.usage) r.usage = s.usage;
  if (s.transcript) r.transcript = s.transcript;
  if (s.agentOutput) r.agentOutput = s.agentOutput;
  const allWarnings = [...s.warnings, ...(decision.warnings ?? [])];
  if (allWarnings.length > 0) r.warnings = allWarnings;
  const tampered = allTampered(facts);
  if (tampered.length > 0) r.tampered = tampered;
  if (facts.grading) r.grading = facts.grading;
  if (trees?.mode) r.setupTrees = { mode: trees.mode, ...(trees.reason ? { reason: trees.reason } : {}) };
  Object.assign(r, placeFacts(spec, input.place, input.hostLimits));
  return r;
}
