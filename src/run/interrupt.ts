/**
 * Interrupts (SIGINT, SIGTERM, SIGHUP; a GitHub Actions cancel sends SIGINT, then SIGTERM 7.5 s
 * later): the first signal stops the run — running agents and scorers are killed, no attempt
 * starts — and the edge writes a partial bundle marked interrupted, then exits 128 + the signal's
 * number. A second signal exits at once (the bundle may then be cut off; it reads as incomplete).
 */
import os from "node:os";
import type { AttemptResult } from "./types.js";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type Sig = (typeof SIGNALS)[number];

/** What the pipeline needs to know of an interrupt. */
export interface Interruption {
  readonly signal: AbortSignal;
  /** The signal received, once one was. */
  readonly received: Sig | undefined;
}

export function exitCodeOf(sig: NodeJS.Signals): number {
  return 128 + (os.constants.signals[sig] ?? 0);
}

/** Listens for interrupts while a run is going on. */
export class SignalInterrupt implements Interruption {
  private readonly controller = new AbortController();
  private got: Sig | undefined;
  private readonly handlers = new Map<Sig, () => void>();

  constructor(
    /** Kills the processes still running (sandbox/process.ts killLiveGroups). */
    private readonly kill: () => void,
    /** Ends evalgate at once (a second signal). */
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get received(): Sig | undefined {
    return this.got;
  }

  install(): this {
    for (const sig of SIGNALS) {
      const handler = () => this.on(sig);
      this.handlers.set(sig, handler);
      process.on(sig, handler);
    }
    return this;
  }

  dispose(): void {
    for (const [sig, handler] of this.handlers) process.off(sig, handler);
    this.handlers.clear();
  }

  private on(sig: Sig): void {
    this.kill();
    if (this.got) {
      this.exit(exitCodeOf(sig));
      return;
    }
    this.got = sig;
    this.controller.abort(new Error(`interrupted by ${sig}`));
  }
}

/**
 * An attempt that was running when the run was interrupted: whatever it recorded, its agent or
 * scorers were killed, so it is cancelled, never counted.
 */
export function interruptedAttempt(r: AttemptResult, sig: string): AttemptResult {
  return {
    ...r,
    status: "error",
    failureKind: "cancelled",
    message: `stopped: the run was interrupted (${sig}) while this attempt ran`,
  };
}
