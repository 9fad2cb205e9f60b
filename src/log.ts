/**
 * Where evalgate's own messages go. The CLI prints to the terminal; the action uses the Actions
 * log commands. The core only sees this interface.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** Starts a collapsible group in CI logs (no-op in a terminal). */
  group?(title: string): void;
  groupEnd?(): void;
}

export class StreamLogger implements Logger {
  constructor(
    private readonly out: NodeJS.WritableStream = process.stdout,
    private readonly err: NodeJS.WritableStream = process.stderr,
  ) {}

  info(message: string): void {
    this.out.write(`${message}\n`);
  }

  warn(message: string): void {
    this.err.write(`warning: ${message}\n`);
  }

  error(message: string): void {
    this.err.write(`error: ${message}\n`);
  }
}

/** Collects messages (tests, --json mode). */
export class MemoryLogger implements Logger {
  readonly lines: string[] = [];
  info(message: string): void {
    this.lines.push(message);
  }
  warn(message: string): void {
    this.lines.push(`warning: ${message}`);
  }
  error(message: string): void {
    this.lines.push(`error: ${message}`);
  }
}
