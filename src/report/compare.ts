/** Markdown for `evalgate compare`. Pure. */
import type { ComparedCase, RunComparison } from "../gate/compare.js";

const ORDER: ComparedCase["change"][] = ["regressed", "improved", "new", "removed", "unchanged"];
const MARK: Record<ComparedCase["change"], string> = {
  regressed: "❌ regressed",
  improved: "✅ improved",
  new: "🆕 new",
  removed: "➖ removed",
  unchanged: "unchanged",
};

function attempts(a: { counted: number; passed: number } | null): string {
  return a ? `${a.passed}/${a.counted}` : "—";
}

function delta(d: number | null): string {
  if (d === null) return "—";
  const pp = Math.round(d * 100);
  return pp === 0 ? "0 pp" : `${pp > 0 ? "+" : "−"}${Math.abs(pp)} pp`;
}

function pValue(c: ComparedCase): string {
  if (c.pValue === null) return "—";
  return `${c.pValue < 0.001 ? "<0.001" : c.pValue.toFixed(3)}${c.significant ? " (significant)" : ""}`;
}

/** Escapes text for a markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/[\r\n]+/g, " ");
}

export function renderComparisonMarkdown(c: RunComparison): string {
  const n = c.counts;
  const counted = c.cases.filter((x) => x.countedByGate).length;
  const head =
    c.verdict === "fail"
      ? `## ❌ evalgate compare: ${counted} regression${counted === 1 ? "" : "s"}`
      : `## ✅ evalgate compare: no regression the gate counts`;
  const sha = (s: string | null) => (s ? ` \`${s.slice(0, 7)}\`` : "");
  const lines = [
    head,
    "",
    `base \`${c.base.runId}\`${sha(c.base.gitSha)} → head \`${c.head.runId}\`${sha(c.head.gitSha)} · ${n.regressed} regressed · ${n.improved} improved · ${n.new} new · ${n.removed} removed · ${n.unchanged} unchanged · ${n.significant} significant`,
    "",
  ];
  const shown = c.cases
    .filter((x) => x.change !== "unchanged" || x.significant || x.headVerdict === "error" || x.headFlaky)
    .sort((a, b) => ORDER.indexOf(a.change) - ORDER.indexOf(b.change));
  if (shown.length === 0) {
    lines.push("Every case has the same verdict as on the base, and no success rate moved significantly.");
    return `${lines.join("\n")}\n`;
  }
  lines.push(
    "| change | test | target | base | head | Δ success | p (Barnard's exact test, one-sided) |",
    "|---|---|---|---|---|---|---|",
  );
  for (const x of shown) {
    const headText = `${attempts(x.headAttempts)}${x.headVerdict === "error" ? " (error)" : ""}${x.headFlaky ? " flaky" : ""}`;
    lines.push(
      `| ${MARK[x.change]}${x.change === "regressed" && !x.countedByGate ? " (not gated)" : ""} | ${cell(`${x.suite}/${x.testId}`)} | ${cell(x.target)} | ${attempts(x.baseAttempts)} | ${headText} | ${delta(x.successRateDelta)} | ${pValue(x)} |`,
    );
  }
  lines.push(
    "",
    "Attempts that errored on either side are left out of the counts, the deltas and the p-values.",
  );
  return `${lines.join("\n")}\n`;
}
