/**
 * Agents' event streams → `transcript.jsonl`: one normalized shape for every preset (documented in
 * docs/agents.md), so a reviewer and the report read Claude Code, Codex and Gemini CLI runs alike.
 * The raw output stays in agent.log; the transcript is the readable, bounded account of it.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { StringDecoder } from "node:string_decoder";

/** One entry of transcript.jsonl (wire format: snake_case). */
export type TranscriptEntry =
  | { type: "session"; model: string | null; version: string | null; session_id: string | null }
  | { type: "message"; role: "assistant" | "user"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool_call"; id: string | null; name: string; input: unknown }
  | { type: "tool_result"; id: string | null; output: string; is_error: boolean }
  | { type: "error"; message: string; fatal: boolean }
  | {
      type: "result";
      status: "success" | "error";
      text: string | null;
      turns: number | null;
      duration_ms: number | null;
    }
  | {
      type: "end";
      /** The agent's final event was seen. */
      complete: boolean;
      events: number;
      /** Lines of stdout that were not JSON objects (banners, garbage, a cut-off last line). */
      unparsed_lines: number;
      note: string | null;
    };

/** Longest text kept per field; the full output is in agent.log. */
export const MAX_FIELD_CHARS = 16_384;

export function clip(text: string, max = MAX_FIELD_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more characters in agent.log]`;
}

/** Caps the strings inside a tool's input (file contents written by the agent can be large). */
export function clipValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return clip(value, 4096);
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.slice(0, 200).map((v) => clipValue(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipValue(v, depth + 1)]));
}

/** Writes transcript.jsonl as entries arrive; each line carries its index and the agent's event type. */
export class TranscriptWriter {
  private readonly stream: WriteStream;
  private seq = 0;

  constructor(file: string) {
    this.stream = createWriteStream(file);
  }

  write(entry: TranscriptEntry, source: string | null): void {
    this.stream.write(`${JSON.stringify({ seq: this.seq++, source, ...entry })}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.stream.once("error", reject);
      this.stream.end(() => resolve());
    });
  }
}

/**
 * Splits a byte stream into lines and parses each as JSON. Lines that are not JSON objects are
 * counted, not fatal: agents print banners and warnings, and a killed agent leaves half a line.
 */
export class JsonLines {
  private readonly decoder = new StringDecoder("utf8");
  private pending = "";
  unparsed = 0;
  events = 0;

  constructor(private readonly onEvent: (event: Record<string, unknown>) => void) {}

  push(chunk: Buffer): void {
    const text = this.pending + this.decoder.write(chunk);
    const lines = text.split("\n");
    this.pending = lines.pop() ?? "";
    for (const line of lines) this.line(line);
    // One line larger than this is not an event we can use; keep memory bounded.
    if (this.pending.length > 64 * 1024 * 1024) {
      this.pending = "";
      this.unparsed++;
    }
  }

  end(): void {
    const rest = this.pending + this.decoder.end();
    this.pending = "";
    if (rest.trim()) this.line(rest);
  }

  private line(raw: string): void {
    const line = raw.trim();
    if (!line) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.unparsed++;
      return;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.unparsed++;
      return;
    }
    this.events++;
    this.onEvent(value as Record<string, unknown>);
  }
}

/** Small readers for loosely typed event payloads. */
export function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

export function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;
}

export function obj(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** Text of a content value that is a string or a list of `{type: "text", text}` blocks. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content))
    return content === undefined || content === null ? "" : JSON.stringify(content);
  return content
    .map((b) => {
      const block = obj(b);
      if (!block) return "";
      if (typeof block.text === "string") return block.text;
      if (block.type === "image") return "[image]";
      return JSON.stringify(block);
    })
    .filter(Boolean)
    .join("\n");
}
