/**
 * Console output of a run: on a terminal a live status line (done/total, running, elapsed) under
 * the finished attempts; in CI logs one plain line per finished attempt. At the end, a short table
 * of cases.
 */
import { formatDuration } from "../config/duration.js";
import { cleanText } from "./text.js";

export interface AttemptLine {
  suite: string;
  testId: string;
  target: string;
  attempt: number;
  repeat: number;
  retry: number;
  status: "passed" | "failed" | "timeout" | "error";
  durationMs: number;
  message?: string;
  score?: number | null;
}

export interface Progress {
  start(totalAttempts: number): void;
  attemptStarted(): void;
  attemptFinished(line: AttemptLine): void;
  /** Retries added after the start: counted apart, so the done/total count does not jump. */
  addPlanned(n: number): void;
  /**
   * Adaptive attempts added after the start: they are attempts like the first ones, so the total
   * grows with them (the done count never passes the total).
   */
  addAttempts(n: number): void;
  stop(): void;
}

const MARK: Record<AttemptLine["status"], string> = { passed: "✓", failed: "✗", timeout: "⧗", error: "!" };

export function formatAttemptLine(l: AttemptLine): string {
  const retry = l.retry > 0 ? ` (retry ${l.retry})` : "";
  const score = typeof l.score === "number" && l.status === "failed" ? ` · score ${l.score.toFixed(2)}` : "";
  const msg = l.message && l.status !== "passed" ? ` — ${oneLine(l.message, 160)}` : "";
  return `${MARK[l.status] ?? "!"} ${l.suite}/${l.testId} on ${l.target} · attempt ${l.attempt}/${l.repeat}${retry} · ${l.status}${score} · ${formatDuration(l.durationMs)}${msg}`;
}

export function oneLine(text: string, max: number): string {
  // A scorer's or agent's output may carry terminal escapes (colours, cursor moves, a title change).
  const flat = cleanText(text).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * `[done/total]` of the planned attempts; a retry's line says "(retry N)" and leaves the count as it
 * is, so the denominator never changes under the reader's eyes.
 */
function counter(done: number, total: number, retries: number): string {
  return `[${done}/${total}${retries > 0 ? ` +${retries} retr${retries === 1 ? "y" : "ies"}` : ""}]`;
}

/** One line per finished attempt: for CI logs and pipes. */
export class LineProgress implements Progress {
  private done = 0;
  private total = 0;
  constructor(private readonly out: NodeJS.WritableStream) {}
  start(total: number): void {
    this.total = total;
    this.out.write(`evalgate: ${total} attempt${total === 1 ? "" : "s"} planned\n`);
  }
  attemptStarted(): void {}
  addPlanned(_retries: number): void {}
  addAttempts(n: number): void {
    this.total += n;
  }
  attemptFinished(l: AttemptLine): void {
    if (l.retry === 0) this.done++;
    this.out.write(`${counter(this.done, this.total, 0)} ${formatAttemptLine(l)}\n`);
  }
  stop(): void {}
}

/** A live status line on a terminal. */
export class LiveProgress implements Progress {
  private done = 0;
  private total = 0;
  private retries = 0;
  private running = 0;
  private readonly counts = { passed: 0, failed: 0, timeout: 0, error: 0 };
  private started = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly out: NodeJS.WriteStream) {}

  start(total: number): void {
    this.total = total;
    this.started = Date.now();
    this.timer = setInterval(() => this.render(), 250);
    this.timer.unref();
    this.render();
  }

  attemptStarted(): void {
    this.running++;
    this.render();
  }

  addPlanned(n: number): void {
    this.retries += n;
  }

  addAttempts(n: number): void {
    this.total += n;
    this.render();
  }

  attemptFinished(l: AttemptLine): void {
    this.running = Math.max(0, this.running - 1);
    if (l.retry === 0) this.done++;
    // A status this line does not know counts as an error, never as a pass.
    this.counts[Object.hasOwn(this.counts, l.status) ? l.status : "error"]++;
    this.clear();
    this.out.write(`${formatAttemptLine(l)}\n`);
    this.render();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.clear();
  }

  private clear(): void {
    this.out.write("\r\u001b[2K");
  }

  private render(): void {
    const c = this.counts;
    const parts = [`${c.passed} passed`, `${c.failed} failed`];
    if (c.timeout) parts.push(`${c.timeout} timed out`);
    if (c.error) parts.push(`${c.error} errored`);
    const line = `${counter(this.done, this.total, this.retries)} running ${this.running} · ${parts.join(" · ")} · ${formatDuration(Date.now() - this.started)}`;
    const width = this.out.columns ?? 100;
    this.out.write(`\r\u001b[2K${line.slice(0, width - 1)}`);
  }
}

/** Progress that prints nothing (--json). */
export class SilentProgress implements Progress {
  start(): void {}
  attemptStarted(): void {}
  addPlanned(): void {}
  addAttempts(): void {}
  attemptFinished(): void {}
  stop(): void {}
}
