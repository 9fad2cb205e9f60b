/**
 * `evalgate history` rendered: each case's success rate over the base branch's runs, newest first,
 * and what the drop test pools from them. Pure functions of the view (pipeline/history.ts).
 */

export interface HistoryRunView {
  runId: string;
  gitSha: string | null;
  startedAt: string;
  verdict: string;
  counted: number;
  passed: number;
  /** Has the case's current history key (the newest run's): pooled. */
  comparable: boolean;
}

export interface CaseHistoryView {
  evalPath: string;
  testId: string;
  target: string;
  suite: string;
  /** The newest run's history key (null: written before keys). */
  key: string | null;
  runs: HistoryRunView[];
  /** What a head is compared with: the comparable runs' first `min` attempts, pooled. */
  pooled: {
    runs: number;
    counted: number;
    passed: number;
    rate: number | null;
    wilson95: [number, number] | null;
  };
}

const pct = (x: number | null) => (x === null ? "—" : `${Math.round(x * 100)} %`);

export function renderHistoryText(cases: readonly CaseHistoryView[]): string {
  if (cases.length === 0) return "no case in these bundles matches\n";
  const out: string[] = [];
  for (const c of cases) {
    const p = c.pooled;
    const iv = p.wilson95 ? `, 95 % interval ${pct(p.wilson95[0])}–${pct(p.wilson95[1])}` : "";
    out.push(`${c.suite}/${c.testId} on ${c.target} (${c.evalPath})`);
    out.push(
      `  pooled: ${p.passed} of ${p.counted} attempts over ${p.runs} run${p.runs === 1 ? "" : "s"} = ${pct(p.rate)}${iv}`,
    );
    out.push("  commit   started               verdict  passed  rate");
    let marked = false;
    for (const r of c.runs) {
      if (!r.comparable && !marked && c.key !== null) {
        out.push("  — older runs below have another history key (exam or agent changed): not pooled —");
        marked = true;
      }
      const sha = (r.gitSha ?? "").slice(0, 7).padEnd(7);
      const when = r.startedAt.slice(0, 19).replace("T", " ").padEnd(20);
      const passed = `${r.passed}/${r.counted}`.padEnd(6);
      out.push(
        `  ${sha}  ${when}  ${r.verdict.padEnd(7)}  ${passed}  ${pct(r.counted ? r.passed / r.counted : null)}`,
      );
    }
    out.push("");
  }
  return `${out.join("\n")}`;
}

/** `evalgate history --json`: the view in the bundle's spelling (snake_case, versioned). */
export function historyJson(cases: readonly CaseHistoryView[]): unknown {
  return {
    schema: "evalgate.history/v1",
    cases: cases.map((c) => ({
      eval_path: c.evalPath,
      test_id: c.testId,
      target: c.target,
      suite: c.suite,
      history_key: c.key,
      pooled: {
        runs: c.pooled.runs,
        counted: c.pooled.counted,
        passed: c.pooled.passed,
        rate: c.pooled.rate,
        wilson_95: c.pooled.wilson95,
      },
      runs: c.runs.map((r) => ({
        run_id: r.runId,
        git_sha: r.gitSha,
        started_at: r.startedAt,
        verdict: r.verdict,
        counted: r.counted,
        passed: r.passed,
        pooled: r.comparable,
      })),
    })),
  };
}
