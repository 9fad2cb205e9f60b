/**
 * The comment's exam section (docs/exam.md): when the exam was read from the base commit, what the
 * pull request changes in it — each eval file's gate or paths, each case's scorers, verifiers,
 * instruction…, the cases it removes, the quarantine — which applies after merge, and the cases it
 * proposes, which ran from its own definition and do not gate. Pure; every name from the bundle is
 * escaped like agent output, and each line can be left out to fit the comment's budget.
 */
import { RANK } from "./comment-case.js";
import type { Piece } from "./fit.js";
import { plural } from "./format.js";
import * as md from "./markdown.js";
import { clip } from "./text.js";
import type { CaseView, ReportView } from "./view.js";

/** One test, with the targets it ran on and their verdicts: the lines name tests, not cases. */
interface TestLine {
  label: string;
  changes: string[];
  targets: string[];
}

function byTest(cases: readonly CaseView[], multiSuite: boolean): TestLine[] {
  const lines = new Map<string, TestLine>();
  for (const c of cases) {
    const key = `${c.evalPath}\u0000${c.testId}`;
    let line = lines.get(key);
    if (!line) {
      line = {
        label: multiSuite ? `${c.suite}/${c.testId}` : c.testId,
        changes: c.exam?.changes ?? [],
        targets: [],
      };
      lines.set(key, line);
    }
    const a = c.attempts;
    line.targets.push(`${md.text(clip(c.target, 40))}: ${c.verdict} ${a.passed}/${a.counted}`);
  }
  return [...lines.values()];
}

const item = (open: string, omits = "exam"): Piece => ({ open, rank: RANK.otherRow, omits });

/** The lines of what the pull request changes in its exam, each droppable. */
function changeItems(view: ReportView, multiSuite: boolean): Piece[] {
  const exam = view.exam!;
  const out: Piece[] = [];
  for (const f of exam.files) {
    const what =
      f.change === "added"
        ? "added: its cases are proposed"
        : f.change === "removed"
          ? "removed: its cases still ran, from the base"
          : md.text(clip(f.changes.join("; "), 400));
    out.push(item(`- ${md.code(clip(f.evalPath, 120))}: ${what}\n`));
  }
  const changed = view.cases.filter((c) => c.exam?.status === "changed");
  for (const t of byTest(changed, multiSuite))
    out.push(
      item(
        `- ${md.code(clip(t.label, 120))}: changes ${md.text(clip(t.changes.join(", "), 300))} · judged by the base's: ${t.targets.join(", ")}\n`,
      ),
    );
  const removed = view.cases.filter((c) => c.exam?.status === "removed");
  for (const t of byTest(removed, multiSuite))
    out.push(
      item(
        `- ${md.code(clip(t.label, 120))}: removed by this PR · ran all the same: ${t.targets.join(", ")}\n`,
      ),
    );
  if (exam.quarantine.length)
    out.push(item(`- the quarantine file: ${md.text(clip(exam.quarantine.join("; "), 400))}\n`));
  return out;
}

/** The exam section, or nothing when the exam was the checkout's own or the PR changes none of it. */
export function examPieces(view: ReportView, multiSuite: boolean): Piece[] {
  const exam = view.exam;
  if (!exam) return [];
  const base = md.code(exam.sha.slice(0, 7));
  const out: Piece[] = [];
  const changes = changeItems(view, multiSuite);
  if (changes.length)
    out.push({
      open: `**This pull request changes its exam**: this run was judged by the base commit ${base}'s tests, scorers, verifiers and gate; these changes apply after merge.\n`,
      children: changes,
      close: "\n",
      rank: RANK.lastResort,
      omits: "examSection",
    });
  const proposed = byTest(
    view.cases.filter((c) => c.exam?.status === "proposed"),
    multiSuite,
  );
  if (proposed.length)
    out.push({
      open: `**Proposed by this pull request** (${plural(proposed.length, "test")}, not gating): they ran from the PR's own definition and gate after merge.\n`,
      children: proposed.map((t) => item(`- ${md.code(clip(t.label, 120))}: ${t.targets.join(", ")}\n`)),
      close: "\n",
      rank: RANK.lastResort,
      omits: "examSection",
    });
  return out;
}
