import { describe, expect, it } from "vitest";
import { BaseHistory, baseRunOf } from "../../src/bundle/history.js";
import type { Bundle } from "../../src/bundle/read.js";
import type { WireIndexRow } from "../../src/bundle/wire.js";
import { comparableRuns, pooledSide } from "../../src/gate/history.js";

type Status = "passed" | "failed" | "error";

function row(statuses: Status[], over: Partial<WireIndexRow> = {}): WireIndexRow {
  const runs = statuses.map((status, i) => ({ attempt: i + 1, retry: 0, status }));
  return {
    eval_path: "e.eval.yaml",
    test_id: "t",
    target: "bot",
    suite: "e",
    verdict: "pass",
    flaky: false,
    history_key: "k1",
    repeat: null,
    attempts: {
      counted: statuses.filter((s) => s !== "error").length,
      passed: statuses.filter((s) => s === "passed").length,
    },
    runs,
    ...over,
  } as unknown as WireIndexRow;
}

function bundle(id: string, at: string, rows: WireIndexRow[], status?: "interrupted"): Bundle {
  return {
    dir: `/b/${id}`,
    sealed: true,
    rows,
    summary: {
      run: { id, started_at: at },
      git: { sha: `${id}sha` },
      ...(status ? { status } : {}),
    },
  } as unknown as Bundle;
}

const P: Status = "passed";
const F: Status = "failed";

describe("base runs read from bundles", () => {
  it("pool only the first min attempts of an adaptive run: the part that did not depend on its outcomes", () => {
    // {3, 10} after two early failures went on to 9 attempts; only attempts 1..3 are pooled.
    const r = baseRunOf(
      bundle("a", "2026-11-01", []),
      row([F, P, F, P, P, P, P, P, P], { repeat: { min: 3, max: 10 } }),
    );
    expect(r.first).toEqual({ counted: 3, passed: 1 });
    expect({ counted: r.counted, passed: r.passed }).toEqual({ counted: 9, passed: 7 });
    // A fixed repeat (and a bundle from before `repeat` was recorded) pools every attempt.
    expect(baseRunOf(bundle("a", "2026-11-01", []), row([P, F, P, P])).first).toEqual({
      counted: 4,
      passed: 3,
    });
  });

  it("count the last try of an attempt, and never an errored one", () => {
    const r = row([P, F, P]);
    r.runs = [
      { attempt: 1, retry: 0, status: "error" },
      { attempt: 1, retry: 1, status: "passed" },
      { attempt: 2, retry: 0, status: "error" },
      { attempt: 3, retry: 0, status: "failed" },
    ] as unknown as WireIndexRow["runs"];
    expect(baseRunOf(bundle("a", "2026-11-01", []), r).first).toEqual({ counted: 2, passed: 1 });
  });

  it("are ordered newest first, one per run id, without interrupted runs", () => {
    const h = new BaseHistory([
      bundle("old", "2026-11-01T00:00:00Z", [row([P, P, P])]),
      bundle("new", "2026-11-03T00:00:00Z", [row([F, F, F], { verdict: "fail" })]),
      bundle("new", "2026-11-03T00:00:00Z", [row([F, F, F], { verdict: "fail" })]),
      bundle("cut", "2026-11-04T00:00:00Z", [row([P])], "interrupted"),
      bundle("mid", "2026-11-02T00:00:00Z", [row([P, F, P])]),
    ]);
    expect(h.bundles.map((b) => b.summary.run.id)).toEqual(["new", "mid", "old"]);
    expect(h.newest?.summary.run.id).toBe("new");
    const runs = h.runsOf("e.eval.yaml\u0000t\u0000bot");
    expect(runs.map((r) => r.runId)).toEqual(["new", "mid", "old"]);
    const pooled = pooledSide(h.of("e.eval.yaml\u0000t\u0000bot", "k1"))!;
    // The newest run's verdict, the attempts of all three pooled.
    expect(pooled).toEqual({ verdict: "fail", counted: 9, passed: 5, flaky: false });
  });
});

describe("a case's comparable runs", () => {
  const runs = [
    { key: "k2", startedAt: "2026-11-04" },
    { key: "k1", startedAt: "2026-11-03" },
    { key: "k1", startedAt: "2026-11-02" },
    { key: null, startedAt: "2026-11-01" },
  ].map((r, i) => ({
    runId: `r${i}`,
    gitSha: null,
    verdict: "pass" as const,
    flaky: false,
    counted: 3,
    passed: 3,
    first: { counted: 3, passed: 3 },
    ...r,
  }));

  it("are those with the head's key: a change of key starts a new history", () => {
    expect(comparableRuns(runs, "k1")).toMatchObject({
      keyChanged: false,
      runs: [{ runId: "r1" }, { runId: "r2" }],
    });
    expect(comparableRuns(runs, "k2").runs.map((r) => r.runId)).toEqual(["r0"]);
  });

  it("fall back to the newest run alone, flagged, when none has the key (an exam changed, or bundles from before keys)", () => {
    expect(comparableRuns(runs, "k3")).toMatchObject({ keyChanged: true, runs: [{ runId: "r0" }] });
    expect(comparableRuns(runs, null)).toMatchObject({ keyChanged: true, runs: [{ runId: "r0" }] });
    expect(comparableRuns([], "k1")).toEqual({ keyChanged: false, runs: [] });
  });

  it("keep at most the newest HISTORY_RUNS", () => {
    const many = Array.from({ length: 30 }, (_, i) => ({
      ...runs[1]!,
      runId: `m${i}`,
      startedAt: `2026-10-${String(i + 1).padStart(2, "0")}`,
    }));
    const h = comparableRuns(many, "k1");
    expect(h.runs).toHaveLength(20);
    expect(h.runs[0]!.runId).toBe("m29");
  });
});
