import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { type AttemptLine, formatAttemptLine, LineProgress, LiveProgress } from "../../src/report/console.js";

const line = (over: Partial<AttemptLine> = {}): AttemptLine => ({
  suite: "shop",
  testId: "empty-total",
  target: "claude",
  attempt: 2,
  repeat: 3,
  retry: 0,
  status: "failed",
  durationMs: 48_000,
  message: "unit: exit 1: not ok 2 - empty total",
  score: 0.2,
  ...over,
});

function capture(tty: boolean) {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number };
  stream.isTTY = tty;
  stream.columns = 80;
  let text = "";
  stream.on("data", (c: Buffer) => {
    text += c.toString();
  });
  return { stream, text: () => text };
}

describe("console progress", () => {
  it("formats one line per attempt with status, score, duration and reason", () => {
    expect(formatAttemptLine(line())).toBe(
      "✗ shop/empty-total on claude · attempt 2/3 · failed · score 0.20 · 48 s — unit: exit 1: not ok 2 - empty total",
    );
    expect(formatAttemptLine(line({ status: "passed", retry: 1, score: 1 }))).toBe(
      "✓ shop/empty-total on claude · attempt 2/3 (retry 1) · passed · 48 s",
    );
  });

  it("prints one numbered line per finished attempt in CI", () => {
    const { stream, text } = capture(false);
    const p = new LineProgress(stream);
    p.start(3);
    p.attemptStarted();
    p.attemptFinished(line({ status: "passed" }));
    p.attemptFinished(line({ status: "error", message: "the agent exited with status 1" }));
    p.addPlanned(1);
    p.attemptFinished(line({ status: "passed", retry: 1 }));
    p.attemptFinished(line({ attempt: 3, status: "passed" }));
    p.stop();
    // The retry leaves the count alone: the denominator stays the planned attempts.
    expect(text()).toBe(
      [
        "evalgate: 3 attempts planned",
        "[1/3] ✓ shop/empty-total on claude · attempt 2/3 · passed · 48 s",
        "[2/3] ! shop/empty-total on claude · attempt 2/3 · error · 48 s — the agent exited with status 1",
        "[2/3] ✓ shop/empty-total on claude · attempt 2/3 (retry 1) · passed · 48 s",
        "[3/3] ✓ shop/empty-total on claude · attempt 3/3 · passed · 48 s",
        "",
      ].join("\n"),
    );
  });

  it("strips terminal escapes a scorer printed from the progress line", () => {
    const hostile =
      "unit: \u001b[31mFAIL\u001b[0m \u001b]0;pwned\u0007title\u001b[2J\u001b[H cleared \u202Eevil\r\nnext";
    const out = formatAttemptLine(line({ message: hostile }));
    expect(out).toBe(
      "✗ shop/empty-total on claude · attempt 2/3 · failed · score 0.20 · 48 s — unit: FAIL title cleared evil next",
    );
    expect(out).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
  });

  it("shows retries beside the live count instead of growing the denominator", () => {
    const { stream, text } = capture(true);
    const p = new LiveProgress(stream as unknown as NodeJS.WriteStream);
    p.start(2);
    p.attemptStarted();
    p.attemptFinished(line({ status: "error" }));
    p.addPlanned(1);
    p.attemptStarted();
    p.attemptFinished(line({ status: "passed", retry: 1 }));
    p.stop();
    const out = text();
    expect(out).toMatch(/\[1\/2 \+1 retry\] running 0 · 1 passed · 0 failed · 1 errored/);
    expect(out).not.toContain("/3]");
  });

  it("keeps a live status line on a terminal: done/total, running, elapsed", async () => {
    const { stream, text } = capture(true);
    const p = new LiveProgress(stream as unknown as NodeJS.WriteStream);
    p.start(4);
    p.attemptStarted();
    p.attemptStarted();
    p.attemptFinished(line({ status: "passed" }));
    p.stop();
    const out = text();
    expect(out).toContain("\r\u001b[2K[0/4] running 2 · 0 passed · 0 failed ·");
    expect(out).toContain("✓ shop/empty-total on claude · attempt 2/3 · passed · 48 s\n");
    expect(out).toMatch(/\[1\/4\] running 1 · 1 passed · 0 failed · \d+ ms/);
    expect(out.endsWith("\r\u001b[2K")).toBe(true);
  });
});
