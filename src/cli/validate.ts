/**
 * `evalgate validate`: every problem of every eval file at once, running nothing; with
 * `--solvable`, the proof that each test can be solved (cli/solvable.ts).
 */
import type { RepeatSetting } from "../config/types.js";
import { EXIT, UsageError } from "../errors.js";
import { checkedPlan } from "../pipeline/plan.js";
import { repositoryRoot } from "../workspace/git.js";
import { CLI_NAMING } from "./args.js";
import type { CommandIO } from "./io.js";
import { cliQuarantine, type QuarantineFlag } from "./quarantine.js";

export interface ValidateFlags {
  solvable?: boolean;
  attempts?: RepeatSetting;
  test?: string[];
  tag?: string[];
  concurrency?: number;
  out?: string;
  json?: boolean;
  quarantine?: QuarantineFlag;
}

/** The flags that mean something only with --solvable. */
const SOLVABLE_ONLY = ["attempts", "test", "tag", "concurrency", "out", "json"] as const;

export async function validateCommand(paths: string[], o: ValidateFlags, io: CommandIO): Promise<number> {
  const projectRoot = await repositoryRoot(io.cwd);
  if (o.solvable) {
    // Loaded only here: the solvability check runs agents and scorers, a plain validate does not.
    const { solvableCommand } = await import("./solvable.js");
    return solvableCommand(paths, o, projectRoot, io);
  }
  const given = SOLVABLE_ONLY.filter((k) => o[k] !== undefined);
  if (given.length > 0) throw new UsageError(`--${given[0]} only applies with --solvable`);
  // The quarantine file is checked first: a mistake there is reported even when the eval files are fine.
  const quarantine = await cliQuarantine(o.quarantine, io.cwd, projectRoot);
  const plan = await checkedPlan({ cwd: io.cwd, projectRoot, paths, naming: CLI_NAMING });
  for (const note of plan.notes) io.logger.info(`note: ${note}`);
  for (const e of quarantine?.entries ?? []) {
    const names = (c: (typeof plan.cases)[number]) => ({
      suite: c.suite,
      test_id: c.identity.testId,
      target: c.target.name,
    });
    if (!e.expired && !plan.cases.some((c) => e.matches(names(c))))
      io.logger.info(
        `note: ${quarantine!.file}:${e.line ?? "?"}: ${e.case}${e.target ? ` on ${e.target}` : ""} matches no case of these eval files`,
      );
  }
  const tests = new Set(plan.cases.map((c) => `${c.identity.evalPath}/${c.identity.testId}`)).size;
  const files = plan.roots.length;
  io.stdout.write(
    `ok: ${files} eval file${files === 1 ? "" : "s"}, ${tests} test${tests === 1 ? "" : "s"}, ${plan.cases.length} case${plan.cases.length === 1 ? "" : "s"}\n`,
  );
  return EXIT.pass;
}
