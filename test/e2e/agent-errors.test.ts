/**
 * Errors are evidence, not a choice (issue 26, point 5a): an agent that exits non-zero or times out
 * is graded on what it left, and its failure is counted, unless evalgate saw infrastructure trouble
 * (the program could not start; the model API answered 429, 5xx or refused the credential).
 *
 * Attack first: an agent that exits 1 whenever it cannot fix the bug. Before this change every
 * non-zero exit was `error` (`agent_exit`), never counted: under `on_error: exclude` the failures
 * were dropped and the case passed; under `on_error: retry` they got fresh tries until one passed.
 */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJson, readJsonl, runCli, tempDir, writeFiles } from "../helpers.js";

interface Row {
  verdict: string;
  classification: string;
  target: string;
  runs: { dir: string; status: string; failure_kind: string | null }[];
}
interface Result {
  status: string;
  failure_stage: string | null;
  failure_kind: string | null;
  message: string | null;
  warnings: string[];
  agent: { exit_code: number | null; timed_out: boolean; infrastructure: string | null } | null;
}

const FIX = `sed -i 's/a + i.price);/a + i.price, 0);/' src/cart.js`;

function project(dir: string, agents: Record<string, string>): void {
  writeFiles(dir, {
    "project/src/cart.js":
      "export function total(items) {\n  return items.reduce((a, i) => a + i.price);\n}\n",
    "project/test/cart.test.js": `import test from "node:test";
import assert from "node:assert";
import { total } from "../src/cart.js";
test("empty cart totals 0", () => assert.strictEqual(total([]), 0));
`,
    ...Object.fromEntries(
      Object.entries(agents).map(([name, body]) => [`agents/${name}.sh`, `#!/bin/sh\n${body}\n`]),
    ),
  });
  writeFiles(dir, { "agents/no-interpreter.sh": "#!/nonexistent/interpreter\n" });
  for (const name of [...Object.keys(agents), "no-interpreter"]) {
    chmodSync(path.join(dir, "agents", `${name}.sh`), 0o755);
  }
}

function evalFile(targets: string[], gate: object, extra: object = {}): string {
  return JSON.stringify({
    name: "errors",
    targets: targets.map((t) =>
      t === "missing"
        ? // A script whose interpreter does not exist: it cannot start (the preflight checks the script only).
          { name: t, provider: "command", command: ["./agents/no-interpreter.sh"] }
        : { name: t, provider: "command", command: [`./agents/${t}.sh`], timeout: "3s" },
    ),
    concurrency: 1,
    gate,
    workspace: { seed: { path: "project" } },
    tests: [
      {
        id: "empty-total",
        instruction: "total() of an empty cart must be 0",
        scorers: [{ name: "unit", type: "command", run: "node --test test/cart.test.js" }],
      },
    ],
    ...extra,
  });
}

function bundle(dir: string, out: string) {
  const rows = readJsonl<Row>(path.join(out, "index.jsonl"));
  const row = (target: string) => rows.find((r) => r.target === target)!;
  const result = (target: string, run = 0) =>
    readJson<Result>(path.join(out, row(target).runs[run]!.dir, "result.json"));
  return { rows, row, result, dir };
}

describe("an agent that exits 1 whenever it fails", () => {
  const agents = {
    // Fixes the bug on even attempts; on odd ones gives up and exits 1, hoping to be left out.
    "quits-when-stuck": `if [ $((EVALGATE_ATTEMPT % 2)) = 0 ]; then ${FIX}; exit 0; fi\necho "cannot fix this" >&2; exit 1`,
    // Gives up with exit 1 on its first try; fixes the bug when tried again.
    "quits-first-try": `if [ "$EVALGATE_RETRY" != 0 ]; then ${FIX}; exit 0; fi\necho "cannot fix this" >&2; exit 1`,
    // Runs out of time on odd attempts without fixing anything.
    "stalls-when-stuck": `if [ $((EVALGATE_ATTEMPT % 2)) = 0 ]; then ${FIX}; exit 0; fi\nsleep 30`,
    // Control: fixes the bug, then crashes.
    "fixes-then-crashes": `${FIX}\nexit 3`,
  };

  it("fails the gate under on_error: exclude (before: the exit-1 attempts were excluded and it passed)", () => {
    const dir = tempDir();
    project(dir, agents);
    writeFiles(dir, {
      "e.eval.yaml": evalFile(["quits-when-stuck", "stalls-when-stuck", "fixes-then-crashes"], {
        on_error: "exclude",
        min_case_pass_rate: 0,
      }),
    });
    const out = path.join(dir, "out");
    const r = runCli(["run", "e.eval.yaml", "--out", out, "--repeat", "2"], dir);
    expect(r.stderr).toBe("");
    const b = bundle(dir, out);
    // The attempt it gave up on is a counted failure; the record keeps how the agent ended.
    expect(b.result("quits-when-stuck", 0)).toMatchObject({
      status: "failed",
      failure_stage: "agent",
      failure_kind: "agent_exit",
      agent: { exit_code: 1, infrastructure: null },
    });
    expect(b.result("quits-when-stuck", 0).message).toMatch(
      /^the agent exited with status 1: cannot fix this; the work it left changed nothing: unit: exit 1: not ok 1 - empty cart totals 0/,
    );
    expect(b.result("quits-when-stuck", 1).status).toBe("passed");
    expect(b.row("quits-when-stuck")).toMatchObject({ verdict: "fail", classification: "flaky" });
    // Running out of time is the same: graded, failed, counted.
    expect(b.result("stalls-when-stuck", 0)).toMatchObject({
      status: "failed",
      failure_kind: "agent_timeout",
      agent: { timed_out: true, infrastructure: null },
    });
    expect(b.row("stalls-when-stuck").verdict).toBe("fail");
    // Control: an agent that crashed after fixing the bug passes, with a warning that it crashed.
    const crashed = b.result("fixes-then-crashes", 0);
    expect(crashed.status).toBe("passed");
    expect(crashed.warnings).toContain(
      "the agent exited with status 3, but the work it left passed the scorers",
    );
    expect(b.row("fixes-then-crashes").verdict).toBe("pass");
  });

  it("is not tried again under on_error: retry (before: retried until a try passed)", () => {
    const dir = tempDir();
    project(dir, agents);
    writeFiles(dir, {
      "r.eval.yaml": evalFile(["quits-first-try", "missing"], {
        on_error: "retry",
        retries: 2,
        min_case_pass_rate: 0,
      }),
    });
    const out = path.join(dir, "out");
    const r = runCli(["run", "r.eval.yaml", "--out", out], dir);
    expect(r.code, r.stderr).toBe(1);
    const b = bundle(dir, out);
    expect(b.row("quits-first-try").runs.map((x) => [x.dir.split("/").at(-1), x.status])).toEqual([
      ["run-1", "failed"],
    ]);
    expect(b.row("quits-first-try").verdict).toBe("fail");
    // Control: a program that cannot start is infrastructure trouble: an error, retried.
    const missing = b.row("missing");
    expect(missing.runs.map((x) => x.status)).toEqual(["error", "error", "error"]);
    expect(b.result("missing", 0)).toMatchObject({
      failure_kind: "agent_exit",
      agent: { infrastructure: "the agent could not be started" },
    });
    expect(missing.verdict).toBe("error");
    expect(existsSync(path.join(out, missing.runs[2]!.dir, "result.json"))).toBe(true);
    expect(readFileSync(path.join(out, "summary.json"), "utf8")).toContain('"errored"');
  });
});
