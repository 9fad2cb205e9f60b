/**
 * Runs a preset (claude-code, codex, gemini-cli): finds the program, checks that a credential was
 * passed, runs the agent unattended with the task on stdin (never interpolated into a shell string),
 * reads its JSON event stream as it arrives into transcript.jsonl, and turns what the stream said
 * into usage and, for an error the agent reported in its own output, an errored attempt.
 */
import { appendFile } from "node:fs/promises";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import type { TargetSpec } from "../config/types.js";
import { findProgram } from "../sandbox/commands.js";
import type { ProcessOutcome } from "../sandbox/process.js";
import { withCost } from "./prices.js";
import type { Preset, StreamOutcome } from "./stream.js";
import { JsonLines, type TranscriptEntry, TranscriptWriter } from "./transcript.js";
import type { AgentContext, AgentOutcome, Provider, Usage } from "./types.js";

export const TRANSCRIPT_FILE = "transcript.jsonl";

/** Why the agent cannot be started for want of a credential, or undefined when one is there. */
export function missingCredential(
  preset: Preset,
  target: TargetSpec,
  env: Record<string, string>,
): string | undefined {
  if (preset.credentials.some((name) => env[name])) return undefined;
  const names = preset.credentials;
  const listed = names.filter((n) => target.envPassthrough.includes(n));
  if (listed.length > 0) {
    return `${preset.provider} needs ${listed.join(" or ")}: the target passes ${listed.length === 1 ? "it" : "them"} through (env_passthrough), but evalgate's environment does not set ${listed.length === 1 ? "it" : "any of them"}`;
  }
  return `${preset.provider} needs a credential: add ${names[0]} (or one of ${names.slice(1).join(", ")}) to the target's env_passthrough and set it in evalgate's environment`;
}

const versions = new Map<string, Promise<string | null>>();

/**
 * The agent's version from `<program> --version`, once per program, place and process. It runs
 * through the attempt's process runner, so whatever sandbox wraps the agent wraps this too; the same
 * program asked on the runner and in a case's image are two questions (one may fail where the other
 * runs), so neither answer stands for the other.
 */
export function versionOf(
  program: string,
  args: readonly string[],
  ctx: AgentContext,
  env: Record<string, string>,
): Promise<string | null> {
  const key = `${ctx.inEnvironment ? "image" : "runner"}\0${program}`;
  let v = versions.get(key);
  if (!v) {
    v = ctx.runner
      .run({
        command: { argv: [program, ...args] },
        cwd: ctx.workspace,
        env,
        timeoutMs: 30_000,
        captureStdout: true,
      })
      .then(
        (r) => (r.exitCode === 0 ? (VERSION_PATTERN.exec(r.stdout)?.[0] ?? null) : null),
        () => null,
      );
    versions.set(key, v);
  }
  return v;
}

const VERSION_PATTERN = /\d+\.\d+(\.\d+)?([-+.][\w.]+)?/;

function sourceOf(event: Record<string, unknown>): string | null {
  const type = typeof event.type === "string" ? event.type : null;
  const item = event.item as { type?: unknown } | undefined;
  if (type && item && typeof item.type === "string") return `${type}:${item.type}`;
  if (type && typeof event.subtype === "string") return `${type}:${event.subtype}`;
  return type;
}

function usageOf(stream: StreamOutcome, target: TargetSpec, version: string | null): Usage {
  return withCost(
    {
      inputTokens: stream.inputTokens,
      outputTokens: stream.outputTokens,
      cachedTokens: stream.cachedTokens,
      costUsd: stream.costUsd,
      turns: stream.turns,
      toolCalls: stream.toolCalls,
      model: stream.model ?? target.model ?? null,
      agentVersion: version,
    },
    target.price,
  );
}

/**
 * What the agent was doing last, for the record of an attempt that timed out: when it last printed
 * anything, and whether it was then waiting for the model (its last event was the model's turn
 * being sent: a tool's result, or the session's start) or running a tool (a call without its
 * result). "The API hung" and "the agent was slow" read differently.
 */
class Activity {
  private readonly start = performance.now();
  private lastOutput: number | null = null;
  private last: TranscriptEntry | null = null;
  private lastAt = 0;

  output(): void {
    this.lastOutput = performance.now();
  }

  saw(entry: TranscriptEntry): void {
    if (entry.type === "end") return;
    this.last = entry;
    this.lastAt = performance.now();
  }

  describe(): string {
    const now = performance.now();
    const ago = (t: number) => `${Math.round((now - t) / 1000)} s before it was stopped`;
    if (this.lastOutput === null)
      return `it printed nothing in ${Math.round((now - this.start) / 1000)} s (no answer from the model, or it never started)`;
    const e = this.last;
    if (!e) return `its last output was ${ago(this.lastOutput)}, and none of it was an event it reports`;
    const when = ago(this.lastAt);
    switch (e.type) {
      case "tool_call":
        return `its last event, ${when}, was a call of the tool ${e.name} with no result yet: it was running that tool`;
      case "tool_result":
      case "session":
        return `its last event, ${when}, was ${e.type === "session" ? "the session's start" : "a tool's result"}: it was waiting for the model's answer`;
      case "message":
        if (e.role === "user")
          return `its last event, ${when}, was a user message: it was waiting for the model's answer`;
        return `its last event, ${when}, was a message of the model`;
      default:
        return `its last event, ${when}, was ${e.type === "reasoning" ? "the model's reasoning" : `a ${e.type} event`}`;
    }
  }
}

/** stderr, line by line, for the parser (a line is cut at 64 KiB: only short error lines matter). */
class StderrLines {
  private readonly decoder = new StringDecoder("utf8");
  private pending = "";

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    const lines = (this.pending + this.decoder.write(chunk)).split("\n");
    this.pending = (lines.pop() ?? "").slice(0, 64 * 1024);
    for (const line of lines) this.onLine(line);
  }

  end(): void {
    const rest = this.pending + this.decoder.end();
    this.pending = "";
    if (rest) this.onLine(rest);
  }
}

export function presetProvider(preset: Preset): Provider {
  return {
    async run(ctx: AgentContext): Promise<AgentOutcome> {
      const start = await startable(preset, ctx);
      // The program cannot run at all: trouble of the setup, never the agent's failure.
      if ("refused" in start) return refused(ctx, start.refused);
      const { resolved, env } = start;
      const streamed = await streamAgent(preset, ctx, resolved, env);
      const { run, stream, lines, transcript } = streamed;
      const { outcome, note } = outcomeOf(preset, streamed);
      transcript.write(
        {
          type: "end",
          complete: stream.complete,
          events: lines.events,
          unparsed_lines: lines.unparsed,
          note,
        },
        null,
      );
      await transcript.close();
      if (!run.spawnError) {
        const version =
          stream.agentVersion ??
          (preset.versionArgs ? await versionOf(resolved, preset.versionArgs, ctx, env) : null);
        outcome.usage = usageOf(stream, ctx.target, version);
      }
      return outcome;
    },
  };
}

/** The program to run and its environment (the preset's own variables added), or why it cannot start. */
async function startable(
  preset: Preset,
  ctx: AgentContext,
): Promise<{ resolved: string; env: Record<string, string> } | { refused: string }> {
  const { target } = ctx;
  const env: Record<string, string> = { ...preset.env, ...ctx.env };
  const program = target.bin ?? preset.bin;
  const resolved = findProgram(program, env.PATH);
  if (!resolved) {
    return {
      refused: target.bin
        ? `${preset.provider}: the program ${program} (bin:) does not exist or is not executable`
        : `${preset.provider}: "${program}" was not found on PATH; install it (${preset.install}) or set bin: on the target`,
    };
  }
  const noCredential = missingCredential(preset, target, env);
  if (noCredential) return { refused: noCredential };
  if (preset.prepare) {
    const added = await preset.prepare(env, ctx.attemptDir);
    for (const [k, v] of Object.entries(added)) if (!(k in target.env)) env[k] = v;
  }
  return { resolved, env };
}

/** The outcome of an agent that could not be started, the reason also in its log. */
async function refused(ctx: AgentContext, error: string): Promise<AgentOutcome> {
  await appendFile(ctx.logFile, `evalgate: ${error}\n`);
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    durationMs: 0,
    tail: "",
    error,
    infrastructure: "the agent could not be started",
  };
}

interface Streamed {
  run: ProcessOutcome;
  stream: StreamOutcome;
  lines: JsonLines;
  activity: Activity;
  /** Still open: the end entry is written once the outcome is known. */
  transcript: TranscriptWriter;
}

/** Runs the agent, its event stream read as it arrives into the transcript and the parser. */
async function streamAgent(
  preset: Preset,
  ctx: AgentContext,
  resolved: string,
  env: Record<string, string>,
): Promise<Streamed> {
  const { target } = ctx;
  const parser = preset.parser();
  const transcript = new TranscriptWriter(path.join(ctx.evidenceDir, TRANSCRIPT_FILE));
  const activity = new Activity();
  const lines = new JsonLines((event) => {
    const source = sourceOf(event);
    for (const entry of parser.event(event)) {
      transcript.write(entry, source);
      activity.saw(entry);
    }
  });
  const stderr = new StderrLines((line) => parser.stderr?.(line));
  const run = await ctx.runner.run({
    command: { argv: [resolved, ...preset.argv(target, env, ctx.inEnvironment)] },
    cwd: ctx.workspace,
    env,
    timeoutMs: ctx.timeoutMs,
    logFile: ctx.logFile,
    input: ctx.prompt,
    onStdout: (chunk) => {
      activity.output();
      lines.push(chunk);
    },
    ...(parser.stderr ? { onStderr: (chunk: Buffer) => stderr.push(chunk) } : {}),
  });
  lines.end();
  stderr.end();
  for (const entry of parser.flush?.() ?? []) transcript.write(entry, null);
  const stream = parser.finish();
  return { run, stream, lines, activity, transcript };
}

/** The attempt's agent outcome from the process and what its stream said, and the transcript's end note. */
function outcomeOf(preset: Preset, s: Streamed): { outcome: AgentOutcome; note: string | null } {
  const { run, stream, lines } = s;
  const outcome: AgentOutcome = {
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    tail: run.tail,
    transcript: TRANSCRIPT_FILE,
  };
  let note: string | null = null;
  if (run.timedOut) outcome.activity = s.activity.describe();
  // Evidence of infrastructure trouble, for a run that did not end well (docs/decisions/0192).
  if (stream.infrastructure && (run.timedOut || stream.error || run.exitCode !== 0)) {
    outcome.infrastructure = stream.infrastructure;
  }
  if (run.spawnError) {
    outcome.error = `${preset.provider} could not start: ${run.spawnError}`;
    outcome.infrastructure = "the agent could not be started";
  } else if (!run.timedOut) {
    if (stream.error) {
      outcome.error = `${preset.provider} reported an error: ${stream.error}`;
    } else if (stream.stoppedBy && run.exitCode !== 0) {
      outcome.stopped = stream.stoppedBy;
      outcome.warnings = [
        `${preset.provider} stopped: ${stream.stoppedBy} (exit status ${run.exitCode}); that is the agent's outcome, so its work was scored`,
      ];
    } else if (!stream.complete && run.exitCode === 0) {
      note = "the stream ended without the agent's final event";
      outcome.error = `${preset.provider} exited without its final result event (its output was cut off after ${lines.events} events); the work it left was still scored`;
    }
  }
  if (!stream.complete && !note) note = run.timedOut ? "the agent was stopped at its time limit" : null;
  return { outcome, note };
}
