/** The contract between the attempt lifecycle and an agent provider. */
import type { TargetSpec, TestSpec } from "../config/types.js";
import type { ProcessRunner } from "../sandbox/process.js";

/** What an agent used: tokens, cost, turns. Unknown values are null, never invented. */
export interface Usage {
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  costUsd: number | null;
  /** Where the cost comes from: the agent's own report, or evalgate's documented price table. */
  costSource: "agent" | "price_table" | null;
  turns: number | null;
  toolCalls: number | null;
  model: string | null;
  agentVersion: string | null;
}

export interface AgentContext {
  target: TargetSpec;
  test: TestSpec;
  /** The agent's working folder: the workspace, or its subfolder when the git seed names a subdir. */
  workspace: string;
  /** The workspace's repository root (the diff and the scorers see the whole repository). */
  repoRoot: string;
  /** The attempt's private folder, outside the workspace. */
  attemptDir: string;
  /** The attempt's folder in the bundle (transcript.jsonl goes there). */
  evidenceDir: string;
  prompt: string;
  promptFile: string;
  outputFile: string;
  attempt: number;
  evalDir: string;
  timeoutMs: number;
  /** Where the agent's stdout and stderr go. */
  logFile: string;
  /** The agent's complete environment (minimal base + the target's passthrough). */
  env: Record<string, string>;
  runner: ProcessRunner;
  /** The agent runs in the case's image, where the container is its sandbox. */
  inEnvironment?: boolean;
}

export interface AgentOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** Set when the agent could not be run at all, or reported a failure of its own. */
  error?: string;
  /** The last lines of the agent's output, for messages. */
  tail: string;
  /** Tokens, cost and turns, when the provider can tell. */
  usage?: Usage;
  /** The transcript file the provider wrote in the evidence folder. */
  transcript?: string;
  /** The copy of the agent's {OUTPUT_FILE} kept in the evidence folder. */
  agentOutput?: string;
  /** The agent stopped for a reason of its own (max turns), so its non-zero exit is scored. */
  stopped?: string;
  /** On a timeout: what the agent was doing last (its last output, and what it was waiting for). */
  activity?: string;
  /** Things that went wrong without failing the attempt (a malformed output file). */
  warnings?: string[];
  /**
   * Evidence that the agent could not do its work for reasons not its own, in one phrase: the
   * model API answered 429, 5xx or refused the credential (seen in the agent's own output), the
   * program could not start. Without it a timeout or a failed run is the agent's failure, scored on
   * what it left (docs/decisions/0192).
   */
  infrastructure?: string;
}

export interface Provider {
  run(ctx: AgentContext): Promise<AgentOutcome>;
}
