/**
 * `evalgate validate`: every problem of every eval file at once, running nothing; with
 * `--solvable`, the proof that each test can be solved (cli/solvable.ts).
 */
import type { Plan, RepeatSetting } from "../config/types.js";
import { EXIT, UsageError } from "../errors.js";
import { openExam } from "../pipeline/exam.js";
import { checkedPlan } from "../pipeline/plan.js";
import { repositoryRoot } from "../workspace/git.js";
import { CLI_NAMING, examRequest } from "./args.js";
import type { CommandIO } from "./io.js";

export interface ValidateFlags {
  solvable?: boolean;
  attempts?: RepeatSetting;
  test?: string[];
  tag?: string[];
  concurrency?: number;
  out?: string;
  json?: boolean;
  examFrom?: string;
}

/** The flags that mean something only with --solvable. */
const SOLVABLE_ONLY = ["attempts", "test", "tag", "concurrency", "out", "json"] as const;

export async function validateCommand(paths: string[], o: ValidateFlags, io: CommandIO): Promise<number> {
  const projectRoot = await repositoryRoot(io.cwd);
  if (o.solvable && o.examFrom !== undefined)
    throw new UsageError(
      "--exam-from does not apply with --solvable: the solvability check runs each test as written",
    );
  if (o.solvable) {
    // Loaded only here: the solvability check runs agents and scorers, a plain validate does not.
    const { solvableCommand } = await import("./solvable.js");
    return solvableCommand(paths, o, projectRoot, io);
  }
  const given = SOLVABLE_ONLY.filter((k) => o[k] !== undefined);
  if (given.length > 0) throw new UsageError(`--${given[0]} only applies with --solvable`);
  const exam = o.examFrom ? await openExam(projectRoot, examRequest(o.examFrom), io.logger) : undefined;
  try {
    const plan = await checkedPlan({
      cwd: io.cwd,
      projectRoot,
      paths,
      naming: CLI_NAMING,
      ...(exam ? { exam } : {}),
    });
    for (const note of plan.notes) io.logger.info(`note: ${note}`);
    for (const tip of plan.tips ?? []) io.logger.info(`tip: ${tip}`);
    const tests = new Set(plan.cases.map((c) => `${c.identity.evalPath}/${c.identity.testId}`)).size;
    const files = plan.roots.length;
    io.stdout.write(
      `ok: ${files} eval file${files === 1 ? "" : "s"}, ${tests} test${tests === 1 ? "" : "s"}, ${plan.cases.length} case${plan.cases.length === 1 ? "" : "s"}\n`,
    );
    if (exam) io.stdout.write(examLines(plan));
    return EXIT.pass;
  } finally {
    await exam?.close();
  }
}

/** What `--exam-from` found: the cases the working tree proposes, changes or removes, and its file changes. */
function examLines(plan: Plan): string {
  const lines = [`exam from ${plan.exam?.ref} (${plan.exam?.sha.slice(0, 7)}):`];
  for (const f of plan.exam?.files ?? [])
    lines.push(`  ${f.evalPath}: ${f.change}${f.changes.length ? ` (${f.changes.join("; ")})` : ""}`);
  const seen = new Set<string>();
  for (const c of plan.cases) {
    const key = `${c.identity.evalPath}/${c.identity.testId}`;
    if (!c.exam || seen.has(key)) continue;
    seen.add(key);
    const what = c.exam.changes.length ? `: ${c.exam.changes.join(", ")}` : "";
    lines.push(`  ${c.suite}/${c.identity.testId}: ${c.exam.status}${what}`);
  }
  if (lines.length === 1) lines.push("  the working tree changes nothing of it");
  return `${lines.join("\n")}\n`;
}
