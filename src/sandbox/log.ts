/**
 * A log file with a size cap. It keeps the head and the tail of the output (the end of an agent's
 * output often holds its result), and marks where it cut. Secrets are redacted before the cap is
 * applied, so a cut can never leave part of a secret behind.
 */
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import path from "node:path";
import type { Redactor, StreamRedactor } from "./redact.js";

const TAIL_SHARE = 0.2;
const MESSAGE_TAIL = 4096;

export class CappedLog {
  private stream: WriteStream | undefined;
  private written = 0;
  private readonly headCap: number;
  private readonly tailCap: number;
  private tailChunks: Buffer[] = [];
  private tailSize = 0;
  /** Bytes that were neither written in the head nor kept in the tail. */
  droppedBytes = 0;
  /** The last few KiB, for messages. */
  private recent = Buffer.alloc(0);
  private readonly redaction: StreamRedactor | undefined;
  private failure: Error | undefined;

  constructor(
    file: string | undefined,
    readonly capBytes: number,
    redactor?: Redactor,
  ) {
    if (redactor?.active) this.redaction = redactor.stream();
    if (file) {
      mkdirSync(path.dirname(file), { recursive: true });
      this.stream = createWriteStream(file);
      // A write that fails (a full disk) is raised by close(), not as an unhandled 'error' event.
      this.stream.on("error", (error) => {
        this.failure ??= error;
      });
    }
    this.tailCap = Math.floor(capBytes * TAIL_SHARE);
    this.headCap = capBytes - this.tailCap;
  }

  write(chunk: Buffer): void {
    this.keep(this.redaction ? this.redaction.push(chunk) : chunk);
  }

  private keep(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.recent = Buffer.concat([this.recent, chunk]);
    if (this.recent.length > MESSAGE_TAIL * 2)
      this.recent = this.recent.subarray(this.recent.length - MESSAGE_TAIL);
    let rest = chunk;
    if (this.written < this.headCap) {
      const take = rest.subarray(0, this.headCap - this.written);
      this.stream?.write(take);
      this.written += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0) return;
    this.tailChunks.push(Buffer.from(rest));
    this.tailSize += rest.length;
    while (this.tailSize > this.tailCap && this.tailChunks.length > 0) {
      const first = this.tailChunks[0]!;
      const excess = this.tailSize - this.tailCap;
      if (first.length <= excess) {
        this.tailChunks.shift();
        this.tailSize -= first.length;
        this.droppedBytes += first.length;
      } else {
        this.tailChunks[0] = first.subarray(excess);
        this.tailSize -= excess;
        this.droppedBytes += excess;
      }
    }
  }

  tail(): string {
    const text = this.recent.subarray(Math.max(0, this.recent.length - MESSAGE_TAIL)).toString("utf8");
    return text.replace(/^[^\n]*\uFFFD/, "");
  }

  async close(): Promise<void> {
    if (this.redaction) this.keep(this.redaction.end());
    const stream = this.stream;
    if (!stream) return;
    if (this.failure) {
      stream.destroy();
      throw this.failure;
    }
    if (this.droppedBytes > 0) {
      stream.write(
        `\n[evalgate: output cut here: ${this.droppedBytes} bytes not kept; the log keeps the first and last part of a ${this.capBytes}-byte cap]\n`,
      );
    }
    for (const c of this.tailChunks) stream.write(c);
    await new Promise<void>((resolve, reject) => {
      stream.once("error", reject);
      stream.end(() => resolve());
    });
    if (this.failure) throw this.failure;
  }
}
