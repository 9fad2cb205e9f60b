/** The one error → exit-status mapping both edges use: the user's mistakes exit 2, bugs 3. */
import { describe, expect, it } from "vitest";
import { ConfigError, EXIT, failureOf, UsageError } from "../src/errors.js";

const quiet = { enabled: false, how: "Set EVALGATE_DEBUG=1 for details." };

describe("failureOf", () => {
  it("a configuration error: every problem, indented under a count, exit 2", () => {
    const error = new ConfigError([
      { file: "a.eval.yaml", line: 3, key: "repeat", message: "must be at least 1" },
      { file: "b.eval.yaml", message: "no tests", hint: "add one" },
    ]);
    expect(failureOf(error, quiet)).toEqual({
      status: EXIT.usage,
      message:
        "evalgate: 2 problems in the eval files:\n  a.eval.yaml:3: repeat: must be at least 1\n  b.eval.yaml: no tests\n      hint: add one",
    });
  });

  it("a usage error and a full disk are the user's to fix: exit 2", () => {
    expect(failureOf(new UsageError("--shard takes I/N"), quiet)).toEqual({
      status: EXIT.usage,
      message: "evalgate: --shard takes I/N",
    });
    const full = Object.assign(new Error("ENOSPC: no space left on device"), {
      code: "ENOSPC",
      path: "/tmp/out/summary.json",
    });
    const f = failureOf(full, quiet);
    expect(f.status).toBe(EXIT.usage);
    expect(f.message).toMatch(/^evalgate: no space left on the disk for \/tmp\/out: free some space/);
  });

  it("anything else is a bug: exit 3, saying so and how to get details, or the details", () => {
    const bug = new TypeError("x is undefined");
    const f = failureOf(bug, quiet);
    expect(f.status).toBe(EXIT.internal);
    expect(f.message).toBe(
      "evalgate: internal error: x is undefined\n  This is a bug in evalgate; the bundle written so far was kept. Set EVALGATE_DEBUG=1 for details.",
    );
    expect(failureOf(bug, { ...quiet, enabled: true }).message).toContain(bug.stack);
    expect(failureOf("thrown text", quiet).message).toMatch(/^evalgate: internal error: thrown text\n/);
  });
});
