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

/**
 * `@login` of the person a reply answers: a ping they expect. A GitHub login is letters, digits and
 * hyphens; anything else in the payload is shown as text.
 */
function mention(login: string): string {
  return /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(login) ? `@${login}` : md.text(clip(login, 40));
}

/** The list of commands (`/evalgate help`, and under a mistaken command). */
export const COMMAND_HELP = [
  "`/evalgate run` — run the evals on this pull request's head commit",
  "`/evalgate run --repeat N` — with N attempts per case (`MIN..MAX`: adaptive, stop once the verdict is clear)",
  "`/evalgate run --test GLOB --target NAME --tag T` — only some cases (each may be given more than once)",
  "`/evalgate help` — this list",
].join("\n");

/**
 * The bot's replies to a `/evalgate` comment. Everything from the comment or the payload (the
 * command line, the parse error that quotes it, a repository name, an access level) is escaped as
 * agent output is: no link, ping, HTML or markdown of the commenter's reaches the reply.
 */
export const commandReply = {
  help: (): string => `evalgate commands:\n\n${COMMAND_HELP}`,
  notWriter: (login: string, level: string): string =>
    `${mention(login)} only people with write access to this repository can run evalgate (you have ${md.text(clip(level, 40))} access). Nothing was run.`,
  invalid: (login: string, command: string, error: string): string =>
    `${mention(login)} ${md.code(clip(command, 300))}: ${md.text(clip(error, 300))}.\n\n${COMMAND_HELP}`,
  fork: (login: string, headRepo: string | null, recipe: string): string =>
    `${mention(login)} this pull request comes from a fork (${headRepo ? md.code(clip(headRepo, 140)) : "a deleted repository"}): a command would run its code with this repository's secrets and write token, so evalgate does not. Its evals run under \`pull_request\` without secrets; to get their comment, use the two-workflow recipe in ${md.text(recipe)}.`,
};

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
  /** Entries left out because they are not valid (a file already on the base branch), with why. */
  ignored: { line: number | null; message: string }[];
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
  if (q.ignored.length) {
    out += `**Quarantine entries ignored** (${q.ignored.length}, ${md.code(clip(q.file, 120))}): not valid, so they quarantine nothing; fix them in the file\n`;
    out += items(
      q.ignored,
      (p) => `${p.line !== null ? `line ${p.line}: ` : ""}${md.text(clip(p.message.split("\n")[0]!, 300))}`,
    );
    out += "\n";
  }
  return out;
}

/** The quarantine as the console shows it after the case table (evalgate run). */
export function quarantineText(q: QuarantineBlock): string {
  const lines: string[] = [];
  const name = (c: { suite: string; testId: string; target: string }) =>
    `${c.suite}/${c.testId} on ${c.target}`;
  if (q.quarantined.length) {
    lines.push(`Quarantined (${q.quarantined.length}, ${q.file}): they ran, and do not count in the gate`);
    for (const c of q.quarantined)
      lines.push(
        `  ${name(c)}: ${c.verdict} · owner ${c.owner} · until ${c.expires} · ${clip(c.reason, 200)}${c.stable ? " · stable: the quarantine can be lifted" : ""}`,
      );
  }
  if (q.expired.length) {
    lines.push(`Quarantine expired (${q.expired.length}): these cases count in the gate again`);
    for (const c of q.expired) lines.push(`  ${name(c)}: ${c.verdict} · expired on ${c.expires}`);
  }
  if (q.ignored.length) {
    lines.push(`Quarantine entries ignored (${q.ignored.length}, ${q.file}):`);
    for (const p of q.ignored)
      lines.push(`  ${p.line !== null ? `line ${p.line}: ` : ""}${p.message.split("\n")[0]}`);
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
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

/** Where a comment written without a run links to: the commit it is about and the workflow run. */
export interface StepLinks {
  /** The commit the step was about (the PR's head). */
  sha: string;
  runUrl?: string;
  runLabel?: string;
}

function stepLine(l: StepLinks): string {
  const run = l.runUrl ? ` · ${md.link(l.runLabel ?? "the workflow run", l.runUrl)}` : "";
  return `${l.sha ? `on ${md.code(l.sha.slice(0, 7))}` : ""}${run}`;
}

/**
 * The whole comment when no evals ran (labels, paths): why, on which commit, and the run link, so a
 * reader never takes an earlier report, or a green check, for this commit's result.
 */
export function skippedComment(
  marker: string,
  reason: string,
  links: StepLinks,
  sections: readonly string[],
  hint?: string,
): string {
  return `${marker}\n## ⏭️ evalgate — nothing to run\n\nNo evals ran ${stepLine(links)}: ${md.text(clip(reason, 500))}.${hint ? ` ${md.text(clip(hint, 300))}` : ""}\n\n${sections.join("")}`;
}

/**
 * The whole comment when the step ended in an error: the earlier report (maybe a green one) is
 * replaced, so that nothing beside the red check claims a result for this commit.
 */
export function errorComment(
  marker: string,
  kind: "configuration error" | "internal error",
  message: string,
  links: StepLinks,
): string {
  const what =
    kind === "configuration error"
      ? "the evals did not run, and nothing is gated until this is fixed"
      : "evalgate failed; this is a bug in evalgate";
  return `${marker}\n## ❌ evalgate — ${kind}\n\n${what.charAt(0).toUpperCase()}${what.slice(1)} (${stepLine(links)}):\n\n${md.fence(clip(message, 8000))}`;
}

/** Which run `baseline: auto` compared with, the newer runs it skipped and why, how the suites fit. */
export function baselineSection(b: { used?: string; skipped: string[]; fit?: string } | undefined): string {
  if (!b || (b.skipped.length === 0 && !b.fit)) return "";
  const parts: string[] = [];
  if (b.used) parts.push(`compared with ${md.text(clip(b.used, 120))}`);
  if (b.skipped.length)
    parts.push(
      `newer runs skipped: ${b.skipped
        .slice(0, 5)
        .map((x) => md.text(clip(x, 300)))
        .join("; ")}${b.skipped.length > 5 ? `; and ${b.skipped.length - 5} more` : ""}`,
    );
  if (b.fit) parts.push(md.text(clip(b.fit, 400)));
  return `_Baseline: ${parts.join(". ")}._\n\n`;
}
