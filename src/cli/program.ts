/**
 * The CLI's surface: every command with its arguments, flags and help, as commander parses them.
 * Each command's work lives in its own file, loaded when that command runs (import() below), so
 * `evalgate --help` and a mistyped flag cost no more start-up than commander itself: the pipeline,
 * renderers and scorers are most of the start-up time.
 */
import { Command, InvalidArgumentError, Option } from "commander";
import { parseConcurrency, parsePositiveInt, parseRepeat, parseShard, splitList } from "../config/options.js";
// Light (node:fs and the error types): its agent list is the init command's choices.
import { INIT_AGENTS } from "../init.js";
import { VERSION } from "../version.js";
import type { CalibrateFlags } from "./calibrate.js";
import type { CompareFlags } from "./compare.js";
import type { HistoryFlags } from "./history.js";
import type { ImportFlags } from "./import.js";
import type { InitFlags } from "./init.js";
import type { CommandIO } from "./io.js";
import type { MergeFlags } from "./merge.js";
import type { ReportFlags } from "./report.js";
import type { RunFlags } from "./run.js";
import type { ValidateFlags } from "./validate.js";

/** A flag's value parser as commander wants it: a bad value is commander's own error type. */
function flag<T>(parse: (value: string, name: string) => T, name: string) {
  return (value: string): T => {
    try {
      return parse(value, name);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
}

/** A repeatable flag of paths (kept whole: a path may hold a comma). */
function collectPaths(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** A repeatable flag whose each value may also be a comma-separated list. */
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...splitList(value)];
}

/** Receives the exit status of the command that ran. */
type Exit = (status: number) => void;

/**
 * The program; `exit` receives the exit status of the command that ran. Errors (a user's mistake or
 * a bug) are thrown to main.ts, which maps them.
 */
export function cliProgram(io: CommandIO, exit: Exit): Command {
  const program = new Command("evalgate")
    .description(
      "Evaluate coding agents: repeated attempts in fresh workspaces, gate policies, a run bundle.",
    )
    .version(VERSION, "-V, --version")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError("(run evalgate --help for usage)");
  declareRun(program, io, exit);
  declareAuthoring(program, io, exit);
  declareComparing(program, io, exit);
  declareBundleCommands(program, io, exit);
  return program;
}

/** `run`: the eval files → a bundle and the gate's exit status. */
function declareRun(program: Command, io: CommandIO, exit: Exit): void {
  program
    .command("run")
    .description("run the eval files under PATH (default: the current folder) and write a run bundle")
    .argument("[paths...]", "eval files, folders or globs")
    .option("--target <name>", "run only this target (repeatable, or comma-separated)", collect)
    .option("--test <glob>", "run only tests whose id (or suite/id) matches (repeatable)", collect)
    .option("--tag <tag>", "run only tests with this tag (repeatable)", collect)
    .option(
      "--repeat <n>",
      "attempts per (test, target), overriding the eval files: N, or MIN..MAX for adaptive attempts",
      flag(parseRepeat, "--repeat"),
    )
    .option(
      "--concurrency <n>",
      "attempts at once (default: the eval files' setting, else CPU count)",
      flag(parseConcurrency, "--concurrency"),
    )
    .option("--out <dir>", "the bundle folder (default: .evalgate/results/<run_id>)")
    .option(
      "--work-dir <dir>",
      "scratch folder for workspaces (default: $RUNNER_TEMP or the system temp folder)",
    )
    .option("--keep-workspaces", "keep each attempt's workspace for inspection")
    .option("--json", "print summary.json on stdout instead of the progress and table")
    .option(
      "--baseline <dir>",
      "compare with the base branch's runs: a bundle, or a folder of bundles (repeatable: pooled into each case's history)",
      collectPaths,
    )
    .option(
      "--shard <i/n>",
      "run shard I of N (merge the shards' bundles with evalgate merge)",
      flag(parseShard, "--shard"),
    )
    .option(
      "--exam-from <ref>",
      "read the exam (tests, scorers, verifiers, gate) from this commit, the targets from the working tree, as the action judges a pull request by its base",
    )
    .option(
      "--quarantine <file>",
      "the quarantine file: its cases run and are reported but do not gate (default: the repository's .evalgate/quarantine.yaml)",
    )
    .option("--no-quarantine", "gate every case, whatever the quarantine file says")
    .action(async (paths: string[], o: RunFlags) =>
      exit(await (await import("./run.js")).runCommand(paths, o, io)),
    );
}

/** The commands that write or check eval files: init, validate, import. */
function declareAuthoring(program: Command, io: CommandIO, exit: Exit): void {
  program
    .command("init")
    .description("write a starter eval suite and .github/workflows/evals.yml (never overwrites a file)")
    .addOption(
      new Option("--agent <agent>", "the agent under test").choices(INIT_AGENTS).default("claude-code"),
    )
    .option("--dir <dir>", "the suite's folder", "evals")
    .action(async (o: InitFlags) => exit(await (await import("./init.js")).initCommand(o, io)));

  program
    .command("validate")
    .description(
      "check eval files without running anything (every problem of every file); with --solvable, prove every test can be solved",
    )
    .argument("[paths...]", "eval files, folders or globs")
    .option("--solvable", "run each test's reference patch (must pass) and no change (must fail)")
    .option(
      "--attempts <n>",
      "with --solvable: attempts of each (default 1)",
      flag(parseRepeat, "--attempts"),
    )
    .option(
      "--test <glob>",
      "with --solvable: only tests whose id (or suite/id) matches (repeatable)",
      collect,
    )
    .option("--tag <tag>", "with --solvable: only tests with this tag (repeatable)", collect)
    .option("--concurrency <n>", "with --solvable: attempts at once", flag(parseConcurrency, "--concurrency"))
    .option("--out <dir>", "with --solvable: keep the bundle of the check here (default: not kept)")
    .option("--json", "with --solvable: print the report as JSON")
    .option(
      "--exam-from <ref>",
      "read the exam from this commit and the targets from the working tree; list what the working tree proposes, changes or removes",
    )
    .option(
      "--quarantine <file>",
      "the quarantine file: checked with the eval files (default: the repository's .evalgate/quarantine.yaml)",
    )
    .option("--no-quarantine", "do not check the quarantine file")
    .action(async (paths: string[], o: ValidateFlags) =>
      exit(await (await import("./validate.js")).validateCommand(paths, o, io)),
    );

  program
    .command("import")
    .description(
      "turn task sets into eval files: swe-bench | harbor | runloop | agentv; writes <format>.eval.yaml, its files and IMPORT.md",
    )
    .argument("<format>", "swe-bench, harbor, runloop or agentv")
    .argument(
      "<sources...>",
      "instance files (swe-bench, runloop), task folders (harbor) or eval files (agentv)",
    )
    .requiredOption("--out <dir>", "the folder to write")
    .option("--repos <dir>", "swe-bench: local mirrors of the repositories, as <dir>/owner/name")
    .option("--specs <file>", "swe-bench: owner/name → { setup, test, report } of each repository")
    .option(
      "--images [template]",
      "swe-bench: run each instance in its image (default swebench/sweb.eval.x86_64.{id}:latest)",
    )
    .option(
      "--host",
      "harbor: run the tasks on this machine under bubblewrap instead of in their containers (environment:)",
    )
    .option("--limit <n>", "import at most n instances", flag(parsePositiveInt, "--limit"))
    .option("--filter <glob>", "import only the instances whose id matches")
    .action(async (format: string, sources: string[], o: ImportFlags) =>
      exit(await (await import("./import.js")).importCommand(format, sources, o, io)),
    );
}

/** The commands that weigh runs against each other: compare, history, calibrate. */
function declareComparing(program: Command, io: CommandIO, exit: Exit): void {
  program
    .command("compare")
    .description("compare two bundles case by case; exits 1 on a regression the head's gate counts")
    .argument("<base>", "the baseline bundle folder")
    .argument("<head>", "the bundle to check")
    .addOption(
      new Option("--format <format>", "output format").choices(["markdown", "json"]).default("markdown"),
    )
    .action(async (base: string, head: string, o: CompareFlags) =>
      exit(await (await import("./compare.js")).compareCommand(base, head, o, io)),
    );

  program
    .command("history")
    .description(
      "each case's success rate over the base branch's runs: the history a run pools as its baseline",
    )
    .argument("<bundles...>", "bundles of the base branch's runs, or folders holding several")
    .option("--test <glob>", "only tests whose id (or suite/id) matches (repeatable)", collect)
    .option("--target <name>", "only this target (repeatable, or comma-separated)", collect)
    .option("--json", "print the history as JSON (schema evalgate.history/v1)")
    .action(async (bundles: string[], o: HistoryFlags) =>
      exit(await (await import("./history.js")).historyCommand(bundles, o, io)),
    );

  program
    .command("calibrate")
    .description(
      "A/A runs on an unchanged commit: each case's rate, interval, whether it can gate, the repeat it needs",
    )
    .argument("[paths...]", "eval files, folders or globs")
    .option("--runs <n>", "runs of the suite (default 5)", flag(parsePositiveInt, "--runs"))
    .option(
      "--out <dir>",
      "the folder of the runs' bundles, run-1 … run-N, new or empty (default .evalgate/calibrate); usable as a run's baseline",
    )
    .option(
      "--repeat <n>",
      "attempts per (test, target) in each run, overriding the eval files: N, or MIN..MAX",
      flag(parseRepeat, "--repeat"),
    )
    .option("--test <glob>", "only tests whose id (or suite/id) matches (repeatable)", collect)
    .option("--tag <tag>", "only tests with this tag (repeatable)", collect)
    .option("--target <name>", "only this target (repeatable, or comma-separated)", collect)
    .option("--concurrency <n>", "attempts at once", flag(parseConcurrency, "--concurrency"))
    .option("--json", "print the calibration as JSON (schema evalgate.calibrate/v1)")
    .action(async (paths: string[], o: CalibrateFlags) =>
      exit(await (await import("./calibrate.js")).calibrateCommand(paths, o, io)),
    );
}

/** The commands over a run's bundles: report, merge. */
function declareBundleCommands(program: Command, io: CommandIO, exit: Exit): void {
  program
    .command("report")
    .description(
      "render a bundle: the PR comment (markdown), report.html (html), junit.xml (junit) or summary.json with its rows (json)",
    )
    .argument("<bundle>", "the bundle folder")
    .addOption(
      new Option("--format <format>", "output format")
        .choices(["markdown", "html", "junit", "json"])
        .default("markdown"),
    )
    .option("--out <file>", "write to FILE instead of stdout")
    .action(async (bundle: string, o: ReportFlags) =>
      exit(await (await import("./report.js")).reportCommand(bundle, o, io)),
    );

  program
    .command("merge")
    .description(
      "merge the bundles of every shard of one run into one bundle, and decide the gate over all cases",
    )
    .argument("<bundles...>", "the shard bundle folders")
    .requiredOption("--out <dir>", "the merged bundle folder (new or empty)")
    .option(
      "--baseline <dir>",
      "compare the merged cases with the base branch's runs: a bundle or a folder of bundles (repeatable)",
      collectPaths,
    )
    .option("--json", "print the merged summary.json on stdout")
    .option(
      "--quarantine <file>",
      "the quarantine file: its cases run and are reported but do not gate (default: the repository's .evalgate/quarantine.yaml)",
    )
    .option("--no-quarantine", "gate every case, whatever the quarantine file says")
    .action(async (bundles: string[], o: MergeFlags) =>
      exit(await (await import("./merge.js")).mergeCommand(bundles, o, io)),
    );
}
