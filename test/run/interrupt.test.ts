import { describe, expect, it } from "vitest";
import { exitCodeOf, SignalInterrupt } from "../../src/run/interrupt.js";

describe("SignalInterrupt", () => {
  it("the first signal kills and aborts; a second exits at once with 128 + its number", () => {
    const calls: string[] = [];
    const before = process.listenerCount("SIGINT");
    const interrupt = new SignalInterrupt(
      () => calls.push("kill"),
      (code) => calls.push(`exit ${code}`),
    ).install();
    try {
      expect(interrupt.signal.aborted).toBe(false);
      process.emit("SIGINT");
      expect(interrupt.signal.aborted).toBe(true);
      expect(interrupt.received).toBe("SIGINT");
      expect(calls).toEqual(["kill"]);
      process.emit("SIGTERM");
      expect(calls).toEqual(["kill", "kill", "exit 143"]);
      // The first signal is the one reported.
      expect(interrupt.received).toBe("SIGINT");
    } finally {
      interrupt.dispose();
    }
    expect(process.listenerCount("SIGINT")).toBe(before);
  });

  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const)("%s exits %i", (sig, code) => {
    expect(exitCodeOf(sig)).toBe(code);
  });
});
