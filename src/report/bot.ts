/**
 * The comment's blocks that come from the bot rather than from the run: who asked for it, the
 * quarantined cases, suites skipped because the PR touched none of their paths (with the
 * baseline's verdicts carried over). What a PR changes in its exam is rendered from the bundle
 * (comment-exam.ts). Pure: plain data in, escaped markdown out, each block bounded.
 */
import * as md from "./markdown.js";
import { clip } from "./text.js";

const MAX_ITEMS = 30;

function items<T>(list: readonly T[], line: (x: T) => string): string {
  const shown = list.slice(0, MAX_ITEMS).map((x) => `- ${line(x)}\n`);
  return `${shown.join("")}${list.length > MAX_ITEMS ? `- … and ${list.length - MAX_ITEMS} more\n` : ""}`;
}

const caseName = (c: { suite: string; testId: string; target: string }) =>
  `${md.code(clip(`${c.suite}/${c.testId}`, 120))} on ${md.text(clip(c.target, 60))}`;

export function requestedBy(user: string, command: string, sha: string): string {
  return `_Requested by @${md.text(clip(user, 40))}: ${md.code(clip(command, 200))} on ${md.code(sha.slice(0, 7))}._\n\n`;
}

export interface QuarantineBlock {
  file: string;
  quarantined: {
    suite: string;
    testId: string;
    target: string;
    verdict: string;
    owner: string;
    expires: string;
    reason: string;
    stable: boolean;
  }[];
  expired: {
    suite: string;
    testId: string;
    target: string;
    verdict: string;
    owner: string;
    expires: string;
  }[];
}

export function quarantineSection(q: QuarantineBlock): string {
  let out = "";
  if (q.quarantined.length) {
    out += `**Quarantined** (${q.quarantined.length}, ${md.code(clip(q.file, 120))}): they ran, and do not count in the gate\n`;
    out += items(
      q.quarantined,
      (c) =>
        `${caseName(c)}: ${c.verdict} · owner ${md.text(clip(c.owner, 60))} · until ${md.text(c.expires)} · ${md.text(clip(c.reason, 200))}${c.stable ? " · **stable: passed every attempt here and in the baseline — the quarantine can be lifted**" : ""}`,
    );
    out += "\n";
  }
  if (q.expired.length) {
    out += `**Quarantine expired** (${q.expired.length}): these cases count in the gate again\n`;
    out += items(
      q.expired,
      (c) =>
        `${caseName(c)}: ${c.verdict} · the quarantine of ${md.text(clip(c.owner, 60))} expired on ${md.text(c.expires)}`,
    );
    out += "\n";
  }
  return out;
}

export interface SkippedBlock {
  suites: { name: string; evalPath: string; paths: string[] }[];
  /** The baseline's verdicts of the skipped suites' cases, carried over (not run again). */
  carried: { suite: string; testId: string; target: string; verdict: string }[];
  baselineSha: string | null;
}

export function skippedSection(s: SkippedBlock): string {
  if (s.suites.length === 0) return "";
  let out = `**Skipped** (${s.suites.length} suite${s.suites.length === 1 ? "" : "s"}): this pull request changes none of the files they depend on\n`;
  out += items(
    s.suites,
    (x) =>
      `**${md.text(clip(x.name, 60))}** (${md.code(clip(x.evalPath, 120))}): paths ${x.paths
        .slice(0, 10)
        .map((p) => md.code(clip(p, 80)))
        .join(", ")}`,
  );
  if (s.carried.length) {
    const from = s.baselineSha ? ` ${md.code(s.baselineSha.slice(0, 7))}` : "";
    out += `\nVerdicts carried over from the baseline${from} (not run again, not gating):\n`;
    out += items(s.carried, (c) => `${caseName(c)}: ${c.verdict} _(carried over)_`);
  }
  return `${out}\n`;
}

/** The whole comment when nothing ran: every suite was skipped. */
export function skippedComment(marker: string, reason: string, sections: readonly string[]): string {
  return `${marker}\n## ✅ evalgate — nothing to run\n\n${md.text(clip(reason, 500))}\n\n${sections.join("")}`;
}
