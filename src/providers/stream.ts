/** What every preset's event-stream parser gives back, and the contract a preset fulfils. */
import type { TargetSpec } from "../config/types.js";
import type { TranscriptEntry } from "./transcript.js";

/** What the stream told about the run. Unknown values are null, never guessed. */
export interface StreamOutcome {
  /** The agent's final event (its result) was seen. */
  complete: boolean;
  /** An error the agent reported in its own output (API error, rate limit, crash). */
  error: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  /** Only when the agent itself reported it. */
  costUsd: number | null;
  turns: number | null;
  toolCalls: number | null;
  model: string | null;
  agentVersion: string | null;
  /**
   * The agent stopped for a reason of its own that is its outcome, not an error, though it exits
   * non-zero (Claude Code 2.1 exits 1 on --max-turns): its work is scored as it stands.
   */
  stoppedBy: string | null;
  /**
   * Infrastructure trouble the run met last and never got past (api-trouble.ts): the model API
   * answered 429, 5xx or refused the credential.
   */
  infrastructure: string | null;
}

export interface StreamParser {
  /** One JSON event of the agent's stdout → the transcript entries it stands for. */
  event(event: Record<string, unknown>): TranscriptEntry[];
  /** Entries still held back (text streamed in pieces), once stdout has ended. */
  flush?(): TranscriptEntry[];
  /** One line the agent printed on stderr (where some CLIs report API errors and their retries). */
  stderr?(line: string): void;
  /** Everything learnt, once stdout has ended. */
  finish(): StreamOutcome;
}

export function emptyOutcome(): StreamOutcome {
  return {
    complete: false,
    error: null,
    inputTokens: null,
    outputTokens: null,
    cachedTokens: null,
    costUsd: null,
    turns: null,
    toolCalls: null,
    model: null,
    agentVersion: null,
    stoppedBy: null,
    infrastructure: null,
  };
}

/** A preset: how to run one agent CLI unattended and read what it printed. */
export interface Preset {
  /** The provider name users write. */
  provider: "claude-code" | "codex" | "gemini-cli";
  /** The program, looked up on PATH unless the target sets `bin:`. */
  bin: string;
  /** How to install the program, for the error when it is missing. */
  install: string;
  /** The npm package of the CLI, which `version:` installs. */
  npmPackage: string;
  /** The agent needs at least one of these variables (a key, or a login folder). */
  credentials: readonly string[];
  /** Settings for an unattended run; a target's `env:` overrides them. */
  env: Readonly<Record<string, string>>;
  /**
   * The complete argument list, the target's `args` included (the prompt goes to stdin). `env` is
   * the agent's environment, for flags that stand in for variables the CLI ignores.
   */
  argv(target: TargetSpec, env: Readonly<Record<string, string>>, inEnvironment?: boolean): string[];
  /**
   * Variables (and files) the CLI needs to honour the conventional ones it was given: a key under
   * the name it reads, a settings file for a gateway. Returned variables never override the
   * target's own.
   */
  prepare?(env: Readonly<Record<string, string>>, attemptDir: string): Promise<Record<string, string>>;
  /** Arguments that print the version, when the event stream does not carry it. */
  versionArgs?: readonly string[];
  parser(): StreamParser;
}

/** True when `args` already sets one of `flags` (as `--flag`, `--flag=value` or a short flag). */
export function hasFlag(args: readonly string[], flags: readonly string[]): boolean {
  return args.some((a) => flags.some((f) => a === f || a.startsWith(`${f}=`)));
}
