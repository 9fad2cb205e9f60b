/**
 * The CLI edge. Exit status: 0 gate passed, 1 gate failed, 2 invalid configuration or usage,
 * 3 internal error.
 */
import path from "node:path";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import type { RepeatSetting } from "../config/types.js";
import { ConfigError, EXIT, isDiskFull, UsageError } from "../errors.js";
// Light (node:fs and the error types): its agent list is the init command's choices.
import { INIT_AGENTS, type InitAgent } from "../init.js";
import { StreamLogger } from "../log.js";
import type { RunOptions } from "../pipeline/run.js";
import type { Progress } from "../report/console.js";
import { VERSION } from "../version.js";
import {
  CLI_NAMING,
  parseConcurrency,
  parsePositiveInt,
  parseRepeat,
  parseShard,
  splitList,
} from "./args.js";

// Each command loads what it uses when it runs (import() below), so `evalgate --version` and
// `--help` start as fast as commander does: the pipeline, renderers and scorers are most of the
// start-up time.

export interface CliIO {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Commander wants its own error type for a flag value it should report. */
function flag<T>(parse: (value: string, name: string) => T, name: string) {
  return (value: string): T => {
    try {
      return parse(value, name);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...splitList(value)];
}

function isCi(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.CI || env.GITHUB_ACTIONS);
}

async function readBundleArg(dir: string, cwd: string) {
  const { readBundleAs } = await import("../bundle/read.js");
  return readBundleAs(path.resolve(cwd, dir));
}

class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export async function main(argv: string[], io: Partial<CliIO> = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const cwd = io.cwd ?? process.cwd();
  const env = io.env ?? process.env;
  const logger = new StreamLogger(stdout, stderr);

  const program = new Command("evalgate")
    .description(
      "Evaluate coding agents: repeated attempts in fresh workspaces, gate policies, a run bundle.",
    )
    .version(VERSION, "-V, --version")
    .exitOverride()
    .configureOutput({ writeOut: (s) => stdout.write(s), writeErr: (s) => stderr.write(s) })
    .showHelpAfterError("(run evalgate --help for usage)");

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
    .option("--baseline <dir>", "compare with a baseline bundle (the base branch's run)")
    .option(
      "--shard <i/n>",
      "run shard I of N (merge the shards' bundles with evalgate merge)",
      flag(parseShard, "--shard"),
    )
    .action(async (paths: string[], o: Record<string, unknown>) => {
      const { runEvals } = await import("../pipeline/run.js");
      const { LineProgress, LiveProgress, SilentProgress } = await import("../report/console.js");
      const { renderCaseTable, renderRunFooter } = await import("../report/table.js");
      const { ChildProcessRunner, killLiveGroups } = await import("../sandbox/process.js");
      const { exitCodeOf, SignalInterrupt } = await import("../run/interrupt.js");
      const { repositoryRoot } = await import("../workspace/git.js");
      const json = Boolean(o.json);
      const progress: Progress = json
        ? new SilentProgress()
        : stdout.isTTY && !isCi(env)
          ? new LiveProgress(stdout)
          : new LineProgress(stdout);
      const opts: RunOptions = {
        cwd,
        projectRoot: await repositoryRoot(cwd),
        paths,
        targets: o.target as string[] | undefined,
        tests: o.test as string[] | undefined,
        tags: o.tag as string[] | undefined,
        repeat: o.repeat as RepeatSetting | undefined,
        concurrency: o.concurrency as number | undefined,
        out: o.out as string | undefined,
        workDir: o.workDir as string | undefined,
        keepWorkspaces: Boolean(o.keepWorkspaces),
        baseline: o.baseline as string | undefined,
        shard: o.shard as RunOptions["shard"],
        naming: CLI_NAMING,
      };
      const interrupt = new SignalInterrupt(killLiveGroups).install();
      let result: Awaited<ReturnType<typeof runEvals>>;
      try {
        result = await runEvals(opts, {
          runner: new ChildProcessRunner(),
          progress,
          logger: json ? new StreamLogger(stderr, stderr) : logger,
          interruption: interrupt,
        });
      } finally {
        interrupt.dispose();
      }
      const sig = interrupt.received;
      if (sig) {
        const tries = result.cases.flatMap((c) => c.tries);
        const done = tries.filter((t) => t.failureKind !== "cancelled").length;
        stderr.write(
          `evalgate: interrupted by ${sig}: agents stopped, workspaces removed, ${done} of ${tries.length} attempts finished; the partial bundle (status: ${result.summary.status}) is in ${result.bundleDir}\n`,
        );
        throw new Exit(exitCodeOf(sig));
      }
      if (json) stdout.write(`${JSON.stringify(result.summary, null, 2)}\n`);
      else {
        stdout.write(
          `\n${renderCaseTable(result.view.cases)}\n\n${renderRunFooter(result.view, result.bundleDir)}\n`,
        );
      }
      // A shard sees part of the cases (the footer says so): the gate is decided when they are merged.
      if (opts.shard) throw new Exit(EXIT.pass);
      throw new Exit(result.summary.gate.verdict === "pass" ? EXIT.pass : EXIT.fail);
    });

  program
    .command("init")
    .description("write a starter eval suite and .github/workflows/evals.yml (never overwrites a file)")
    .addOption(
      new Option("--agent <agent>", "the agent under test").choices(INIT_AGENTS).default("claude-code"),
    )
    .option("--dir <dir>", "the suite's folder", "evals")
    .action(async (o: { agent: InitAgent; dir: string }) => {
      const { initRepository, renderInit } = await import("../init.js");
      const { repositoryRoot } = await import("../workspace/git.js");
      const root = await repositoryRoot(cwd);
      stdout.write(renderInit(await initRepository({ root, cwd, agent: o.agent, dir: o.dir })));
      throw new Exit(EXIT.pass);
    });

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
    .action(async (paths: string[], o: Record<string, unknown>) => {
      const { repositoryRoot } = await import("../workspace/git.js");
      const projectRoot = await repositoryRoot(cwd);
      if (o.solvable) {
        const { checkSolvability } = await import("../pipeline/solvable.js");
        const { ChildProcessRunner } = await import("../sandbox/process.js");
        const { LineProgress, SilentProgress } = await import("../report/console.js");
        const { renderSolvabilityText, solvabilityJson } = await import("../report/solvability.js");
        const json = Boolean(o.json);
        const attempts = (o.attempts as number | undefined) ?? 1;
        const report = await checkSolvability(
          {
            cwd,
            projectRoot,
            paths,
            attempts,
            tests: o.test as string[] | undefined,
            tags: o.tag as string[] | undefined,
            concurrency: o.concurrency as number | undefined,
            ...(o.out ? { out: o.out as string } : {}),
            naming: CLI_NAMING,
          },
          {
            runner: new ChildProcessRunner(),
            progress: json ? new SilentProgress() : new LineProgress(stderr),
            logger: new StreamLogger(stderr, stderr),
          },
        );
        stdout.write(
          json
            ? `${JSON.stringify(solvabilityJson(report.tests, attempts, report.bundleDir), null, 2)}\n`
            : `${renderSolvabilityText(report.tests, attempts)}${report.bundleDir ? `bundle: ${report.bundleDir}\n` : ""}`,
        );
        throw new Exit(report.tests.every((t) => t.problems.length === 0) ? EXIT.pass : EXIT.fail);
      }
      const onlySolvable = ["attempts", "test", "tag", "concurrency", "out", "json"].filter(
        (k) => o[k] !== undefined,
      );
      if (onlySolvable.length > 0) {
        throw new UsageError(`--${onlySolvable[0]} only applies with --solvable`);
      }
      const { loadPlan } = await import("../config/plan.js");
      const plan = await loadPlan({ cwd, projectRoot, paths });
      for (const note of plan.notes) logger.info(`note: ${note}`);
      const tests = new Set(plan.cases.map((c) => `${c.identity.evalPath}/${c.identity.testId}`)).size;
      stdout.write(
        `ok: ${plan.roots.length} eval file${plan.roots.length === 1 ? "" : "s"}, ${tests} test${tests === 1 ? "" : "s"}, ${plan.cases.length} case${plan.cases.length === 1 ? "" : "s"}\n`,
      );
      throw new Exit(EXIT.pass);
    });

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
    .option("--limit <n>", "import at most n instances", flag(parsePositiveInt, "--limit"))
    .option("--filter <glob>", "import only the instances whose id matches")
    .action(async (format: string, sources: string[], o: Record<string, string | number | undefined>) => {
      const { runImport } = await import("../import/index.js");
      const { outcome, evalFile } = await runImport(format, {
        sources,
        cwd,
        out: o.out as string,
        ...(o.repos ? { repos: o.repos as string } : {}),
        ...(o.specs ? { specs: o.specs as string } : {}),
        ...(o.limit ? { limit: o.limit as number } : {}),
        ...(o.filter ? { filter: o.filter as string } : {}),
      });
      for (const p of outcome.problems)
        stderr.write(`skipped ${p.id} (${p.source}): ${p.message}. Fix: ${p.fix}\n`);
      const rel = path.relative(cwd, evalFile) || evalFile;
      stdout.write(
        `imported ${outcome.tests.length} test${outcome.tests.length === 1 ? "" : "s"} into ${rel}${outcome.problems.length ? `, skipped ${outcome.problems.length}` : ""} (report: ${path.join(path.dirname(rel), "IMPORT.md")})\nnext: evalgate validate --solvable ${rel}\n`,
      );
      if (outcome.tests.length === 0) throw new Exit(EXIT.usage);
      throw new Exit(outcome.problems.length ? EXIT.fail : EXIT.pass);
    });

  program
    .command("compare")
    .description("compare two bundles case by case; exits 1 on a regression the head's gate counts")
    .argument("<base>", "the baseline bundle folder")
    .argument("<head>", "the bundle to check")
    .addOption(
      new Option("--format <format>", "output format").choices(["markdown", "json"]).default("markdown"),
    )
    .action(async (basePath: string, headPath: string, o: { format: string }) => {
      const [base, head] = await Promise.all([readBundleArg(basePath, cwd), readBundleArg(headPath, cwd)]);
      const { unsealedNote } = await import("../bundle/read.js");
      for (const [b, shown] of [
        [base, basePath],
        [head, headPath],
      ] as const) {
        const note = unsealedNote(b, shown);
        if (note) stderr.write(`evalgate: note: ${note}\n`);
      }
      const { compareBundles, wireBundleComparison } = await import("../bundle/compare.js");
      const { renderComparisonMarkdown } = await import("../report/compare.js");
      const comparison = compareBundles(base, head);
      stdout.write(
        o.format === "json"
          ? `${JSON.stringify(wireBundleComparison(comparison), null, 2)}\n`
          : renderComparisonMarkdown(comparison),
      );
      throw new Exit(comparison.verdict === "pass" ? EXIT.pass : EXIT.fail);
    });

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
    .action(async (bundlePath: string, o: { format: string; out?: string }) => {
      const dir = path.resolve(cwd, bundlePath);
      const { writeFile } = await import("node:fs/promises");
      let text: string;
      if (o.format === "json") {
        const bundle = await readBundleArg(bundlePath, cwd);
        text = `${JSON.stringify({ summary: bundle.summary, rows: bundle.rows }, null, 2)}\n`;
      } else {
        const { bundleErrorAsUsage } = await import("../bundle/read.js");
        const { loadReportView } = await import("../pipeline/report-view.js");
        const view = await bundleErrorAsUsage(
          loadReportView(dir, { evidence: o.format === "html" ? "all" : "problems" }),
          // Name the folder as the user typed it.
          (reason) => reason.replaceAll(dir, bundlePath),
        );
        const { renderHtml } = await import("../report/html.js");
        const { renderJUnit } = await import("../report/junit.js");
        const { COMMENT_MAX_CHARS, renderComment } = await import("../report/comment.js");
        text =
          o.format === "html"
            ? renderHtml(view)
            : o.format === "junit"
              ? renderJUnit(view)
              : renderComment(view, { key: "default", maxChars: COMMENT_MAX_CHARS });
      }
      if (o.out) {
        await writeFile(path.resolve(cwd, o.out), text).catch((error: NodeJS.ErrnoException) => {
          throw new UsageError(`--out ${o.out}: cannot write the file (${error.code ?? error.message})`);
        });
      } else stdout.write(text);
      throw new Exit(EXIT.pass);
    });

  program
    .command("merge")
    .description(
      "merge the bundles of every shard of one run into one bundle, and decide the gate over all cases",
    )
    .argument("<bundles...>", "the shard bundle folders")
    .requiredOption("--out <dir>", "the merged bundle folder (new or empty)")
    .option("--baseline <dir>", "compare the merged cases with a baseline bundle")
    .option("--json", "print the merged summary.json on stdout")
    .action(async (bundles: string[], o: { out: string; baseline?: string; json?: boolean }) => {
      const { mergeBundles } = await import("../pipeline/merge.js");
      const { bundleErrorAsUsage } = await import("../bundle/read.js");
      const { newRunId } = await import("../pipeline/run.js");
      const { renderCaseTable, renderRunFooter } = await import("../report/table.js");
      const baseline = o.baseline ? await readBundleArg(o.baseline, cwd) : undefined;
      const merged = await bundleErrorAsUsage(
        mergeBundles({
          bundles: bundles.map((b) => path.resolve(cwd, b)),
          out: path.resolve(cwd, o.out),
          runId: newRunId(),
          version: VERSION,
          naming: CLI_NAMING,
          ...(baseline ? { baseline } : {}),
        }),
      );
      if (o.json) stdout.write(`${JSON.stringify(merged.summary, null, 2)}\n`);
      else
        stdout.write(
          `${renderCaseTable(merged.view.cases)}\n\n${renderRunFooter(merged.view, path.resolve(cwd, o.out))}\n`,
        );
      throw new Exit(merged.summary.gate.verdict === "pass" ? EXIT.pass : EXIT.fail);
    });

  try {
    await program.parseAsync(argv, { from: "user" });
    if (argv.length === 0) program.outputHelp();
    return EXIT.pass;
  } catch (error) {
    if (error instanceof Exit) return error.code;
    if (error instanceof CommanderError) {
      return error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        error.exitCode === 0
        ? EXIT.pass
        : EXIT.usage;
    }
    if (error instanceof ConfigError) {
      const n = error.problems.length;
      stderr.write(`evalgate: ${n} problem${n === 1 ? "" : "s"} in the eval files:\n`);
      for (const line of error.message.split("\n")) stderr.write(`  ${line}\n`);
      return EXIT.usage;
    }
    if (error instanceof UsageError) {
      stderr.write(`evalgate: ${error.message}\n`);
      return EXIT.usage;
    }
    if (isDiskFull(error)) {
      // The machine's state, not a bug: exit 2 like the other problems the user must fix first.
      const file = (error as NodeJS.ErrnoException).path;
      stderr.write(
        `evalgate: no space left on the disk${file ? ` for ${path.dirname(file)}` : ""}: free some space, or write to a folder on a disk with room\n`,
      );
      return EXIT.usage;
    }
    const e = error as Error;
    stderr.write(
      `evalgate: internal error: ${e.message}\n  This is a bug in evalgate; the bundle written so far was kept. Set EVALGATE_DEBUG=1 for details.\n`,
    );
    if (env.EVALGATE_DEBUG) stderr.write(`${e.stack}\n`);
    return EXIT.internal;
  }
}
