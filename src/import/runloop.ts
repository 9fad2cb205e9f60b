/**
 * `evalgate import runloop`: scenarios as Runloop's scenario API returns them → tests. The
 * problem statement is the instruction, launch commands the setup, the scoring contract's
 * weighted scoring functions evalgate scorers with the same weights, `reference_output` the
 * reference (a diff is a patch; anything else is run as a script). A scoring function evalgate
 * cannot run (custom_scorer, an unknown type) keeps its scenario out, reported with the fix.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { AST_GREP_LANGUAGES } from "../config/schema/scorers.js";
import { suggestSlug } from "../config/schema/values.js";
import { UsageError } from "../errors.js";
import {
  convertEach,
  type ImportedTest,
  type ImportOptions,
  type ImportOutcome,
  InstanceError,
  type OutputFile,
  Selection,
  testId,
} from "./write.js";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A scenario, a list of them, or a list response (`{ scenarios: [...] }`). */
async function readScenarios(file: string, shown: string): Promise<unknown[]> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new UsageError(`${shown}: not a JSON scenario (${(error as Error).message})`);
  }
  if (Array.isArray(doc)) return doc;
  if (isObject(doc) && Array.isArray(doc.scenarios)) return doc.scenarios;
  return [doc];
}

const LANGS: Record<string, (typeof AST_GREP_LANGUAGES)[number]> = {
  ts: "typescript",
  js: "javascript",
  py: "python",
  golang: "go",
  rs: "rust",
};

/**
 * The working directory's absolute path in text becomes the workspace: {WORKSPACE} in commands
 * (evalgate expands it), "." in script files (scorers and references run in the workspace).
 */
function localize(text: string, workdir: string | undefined, to = "{WORKSPACE}"): string {
  if (!workdir || workdir === "/") return text;
  return text.split(workdir.replace(/\/+$/, "")).join(to);
}

function isDiff(text: string): boolean {
  return /^diff --git /m.test(text) || /^--- \S.*\n\+\+\+ \S/m.test(text);
}

/** A test command's JUnit or CTRF report, when the command names one (pytest, jest/vitest reporters). */
function reportOf(command: string): { report: string; report_format: "junit" | "ctrf" } | undefined {
  const junit = /--junit-?xml[= ](\S+)/.exec(command);
  if (junit) return { report: junit[1]!, report_format: "junit" };
  const ctrf = /--ctrf[= ](\S+)/.exec(command);
  if (ctrf) return { report: ctrf[1]!, report_format: "ctrf" };
  return undefined;
}

/** Where a scenario's scorers put their files and notes, and the folder their paths are inside. */
interface ScorerSink {
  workdir: string | undefined;
  dir: string;
  files: Record<string, OutputFile>;
  notes: string[];
}

function astGrepScorer(s: Json, at: string, base: Json, workdir: string | undefined): Json {
  const lang = String(s.lang ?? "").toLowerCase();
  const mapped = (AST_GREP_LANGUAGES as readonly string[]).includes(lang)
    ? (lang as (typeof AST_GREP_LANGUAGES)[number])
    : LANGS[lang];
  if (!mapped)
    throw new InstanceError(
      `${at}: ast_grep_scorer language "${s.lang ?? ""}" is not one evalgate searches`,
      `use one of ${AST_GREP_LANGUAGES.join(", ")}`,
    );
  if (typeof s.pattern !== "string" || !s.pattern)
    throw new InstanceError(`${at}: ast_grep_scorer has no pattern`, "give the pattern");
  let where = typeof s.search_directory === "string" ? s.search_directory : ".";
  if (workdir && path.posix.isAbsolute(where)) where = path.posix.relative(workdir, where) || ".";
  if (where.startsWith("..") || path.posix.isAbsolute(where)) {
    throw new InstanceError(
      `${at}: search_directory ${s.search_directory} is outside working_directory ${workdir ?? "(none)"}`,
      "give a folder inside the working directory",
    );
  }
  return {
    type: "ast-grep",
    ...base,
    pattern: s.pattern,
    lang: mapped,
    ...(where !== "." ? { path: where } : {}),
  };
}

/** A tests scorer when the command names its report, else a command scorer; test files as verifiers. */
function testBasedScorer(s: Json, at: string, base: Json, sink: ScorerSink): Json {
  const { workdir, dir, files, notes } = sink;
  if (typeof s.test_command !== "string" || !s.test_command.trim())
    throw new InstanceError(`${at}: test_based_scorer has no test_command`, "give the test command");
  const testFiles = Array.isArray(s.test_files) ? s.test_files.filter(isObject) : [];
  const run = localize(s.test_command, workdir);
  const rep = reportOf(run);
  const verifiers = testFiles.map((f, k) => {
    const p = String(f.file_path ?? "");
    const rel = workdir && path.posix.isAbsolute(p) ? path.posix.relative(workdir, p) : p;
    if (!rel || rel.startsWith("..") || path.posix.isAbsolute(rel)) {
      throw new InstanceError(
        `${at}.test_files[${k}].file_path "${p}" is outside the working directory`,
        "give a path inside the working directory",
      );
    }
    const from = `${dir}/tests/${rel}`;
    files[from] = { text: String(f.file_contents ?? "") };
    return { from, to: rel };
  });
  const scorer = rep ? { type: "tests", ...base, run, ...rep } : { type: "command", ...base, run };
  if (!rep)
    notes.push(
      `${at}: test_based_scorer graded by the exit status of its test command (it names no JUnit or CTRF report)`,
    );
  return { ...scorer, ...(verifiers.length ? { verifiers } : {}) };
}

function scorerOf(fn: Json, i: number, sink: ScorerSink): Record<string, unknown> {
  const { workdir, dir, files, notes } = sink;
  const s = isObject(fn.scorer) ? fn.scorer : {};
  const at = `scoring_function_parameters[${i}]`;
  const type = String(s.type ?? "");
  const name = typeof fn.name === "string" ? suggestSlug(fn.name) : undefined;
  if (typeof fn.weight !== "number" || fn.weight < 0 || fn.weight > 1) {
    throw new InstanceError(
      `${at}.weight is ${JSON.stringify(fn.weight)}`,
      "give each scoring function a weight in [0, 1]",
    );
  }
  const base = { ...(name ? { name } : {}), weight: fn.weight };
  switch (type) {
    case "ast_grep_scorer":
      return astGrepScorer(s, at, base, workdir);
    case "bash_script_scorer": {
      if (typeof s.bash_script !== "string" || !s.bash_script.trim())
        throw new InstanceError(`${at}: bash_script_scorer has no bash_script`, "give the script");
      const file = `${dir}/scorers/${name ?? `scorer-${i}`}.sh`;
      files[file] = { text: localize(s.bash_script, workdir, "."), executable: true };
      return { type: "script", ...base, run: ["bash", `{EVAL_DIR}/${file}`] };
    }
    case "python_script_scorer": {
      if (typeof s.python_script !== "string" || !s.python_script.trim())
        throw new InstanceError(`${at}: python_script_scorer has no python_script`, "give the script");
      const file = `${dir}/scorers/${name ?? `scorer-${i}`}.py`;
      files[file] = { text: localize(s.python_script, workdir, ".") };
      if (s.requirements_contents)
        notes.push(`${at}: requirements_contents not installed (install them in setup)`);
      // Runloop's python scorer prints a bare number; evalgate's script scorer reads score=N.
      return {
        type: "script",
        ...base,
        run: ["sh", "-c", `python3 "{EVAL_DIR}/${file}" | tail -n 1 | sed 's/^[[:space:]]*/score=/'`],
      };
    }
    case "command_scorer": {
      if (typeof s.command !== "string" || !s.command.trim())
        throw new InstanceError(`${at}: command_scorer has no command`, "give the command");
      return { type: "command", ...base, run: localize(s.command, workdir) };
    }
    case "test_based_scorer":
      return testBasedScorer(s, at, base, sink);
    case "custom_scorer":
      throw new InstanceError(
        `${at}: custom_scorer "${s.custom_scorer_type ?? ""}" runs only on Runloop`,
        "replace it with a bash_script_scorer or command_scorer, or drop it and rebalance the weights",
      );
    default:
      throw new InstanceError(
        `${at}: unknown scorer type "${type}"`,
        "use ast_grep_scorer, bash_script_scorer, python_script_scorer, command_scorer or test_based_scorer",
      );
  }
}

/** The scenario's scorers, their weights summing to 1 and their names distinct; verifiers apart. */
function weightedScorers(fns: Json[], sink: ScorerSink): { scorers: Json[]; verifiers: unknown[] } {
  const scorers = fns.map((fn, i) => scorerOf(fn, i, sink));
  const sum = scorers.reduce((a, s) => a + (s.weight as number), 0);
  if (Math.abs(sum - 1) > 1e-6) {
    throw new InstanceError(
      `the weights sum to ${sum}, not 1`,
      "make the scoring functions' weights sum to 1.0",
    );
  }
  const names = scorers.map((s) => s.name ?? s.type);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup)
    throw new InstanceError(
      `two scoring functions are named "${String(dup)}"`,
      "give each scoring function its own name",
    );
  // Verifiers belong to the test, not to one scorer.
  const verifiers = scorers.flatMap((s) => (s.verifiers as unknown[] | undefined) ?? []);
  for (const s of scorers) delete s.verifiers;
  return { scorers, verifiers };
}

function runloopOutcome(opts: ImportOptions): ImportOutcome {
  return {
    format: "runloop",
    sources: opts.sources,
    tests: [],
    problems: [],
    mapping: [
      ["name (or id)", "test id"],
      ["input_context.problem_statement", "instruction"],
      ["environment.launch_parameters.launch_commands", "workspace.setup.command (in an empty workspace)"],
      [
        "environment.working_directory",
        "the workspace: its absolute path in commands and scripts becomes {WORKSPACE}",
      ],
      ["scoring_function_parameters[].weight", "scorer weight (exactly)"],
      ["ast_grep_scorer (pattern, lang, search_directory)", "ast-grep scorer (pattern, lang, path)"],
      ["bash_script_scorer", "script scorer (prints score=N)"],
      ["python_script_scorer", "script scorer (its number becomes score=N)"],
      ["command_scorer", "command scorer"],
      [
        "test_based_scorer",
        "tests scorer when the command names a --junitxml / --ctrf report, else command; test_files as hidden verifiers",
      ],
      ["reference_output", "reference: a patch when it is a diff, else { script }"],
      ["metadata", "tags key:value"],
    ],
  };
}

/** The scenarios --filter and --limit select, in source order, each with its id and where it is. */
async function selectedScenarios(opts: ImportOptions): Promise<{ id: string; source: string; item: Json }[]> {
  const selection = new Selection(opts.filter, opts.limit);
  const items: { id: string; source: string; item: Json }[] = [];
  for (const src of opts.sources) {
    const list = await readScenarios(path.resolve(opts.cwd, src), src);
    list.forEach((sc, i) => {
      const obj = isObject(sc) ? sc : {};
      const raw =
        typeof obj.name === "string" && obj.name
          ? obj.name
          : typeof obj.id === "string"
            ? obj.id
            : `${path.basename(src)}#${i + 1}`;
      if (selection.take(raw))
        items.push({ id: raw, source: list.length > 1 ? `${src}[${i}]` : src, item: obj });
    });
  }
  return items;
}

/** What of the scenario's environment and context is kept beside the test, or only noted. */
function noteContext(sc: Json, env: Json, input: Json, sink: ScorerSink): void {
  const { dir, files, notes } = sink;
  for (const k of ["blueprint_id", "snapshot_id", "prebuilt_id"]) {
    if (env[k])
      notes.push(
        `environment.${k} ${String(env[k])} (a Runloop devbox image): the launch commands run on this machine in an empty workspace`,
      );
  }
  if (isObject(input.additional_context) && Object.keys(input.additional_context).length) {
    notes.push("input_context.additional_context kept in context.json, not given to the agent");
    files[`${dir}/context.json`] = { text: `${JSON.stringify(input.additional_context, null, 2)}\n` };
  }
  if (Array.isArray(sc.required_environment_variables) && sc.required_environment_variables.length) {
    notes.push(
      `required_environment_variables ${sc.required_environment_variables.join(", ")}: pass them with the target's env_passthrough`,
    );
  }
}

/** reference_output as the test's reference: a patch when it is a diff, else a script. */
function referenceOf(sc: Json, sink: ScorerSink): unknown {
  const { workdir, dir, files, notes } = sink;
  if (typeof sc.reference_output !== "string" || !sc.reference_output.trim()) {
    notes.push("no reference_output: validate --solvable cannot prove the scenario solvable");
    return undefined;
  }
  if (isDiff(sc.reference_output)) {
    files[`${dir}/reference.patch`] = {
      text: sc.reference_output.endsWith("\n") ? sc.reference_output : `${sc.reference_output}\n`,
    };
    return `${dir}/reference.patch`;
  }
  files[`${dir}/reference.sh`] = {
    text: `#!/bin/sh\nset -e\n${localize(sc.reference_output, workdir, ".")}\n`,
    executable: true,
  };
  notes.push("reference_output is not a diff: run as a shell script");
  return { script: `${dir}/reference.sh` };
}

async function scenarioTest(sc: Json, rawId: string, ids: Set<string>): Promise<ImportedTest> {
  const input = isObject(sc.input_context) ? sc.input_context : {};
  if (typeof input.problem_statement !== "string" || !input.problem_statement.trim()) {
    throw new InstanceError("no input_context.problem_statement", "give the scenario its problem statement");
  }
  const contract = isObject(sc.scoring_contract) ? sc.scoring_contract : {};
  const fns = Array.isArray(contract.scoring_function_parameters)
    ? contract.scoring_function_parameters.filter(isObject)
    : [];
  if (fns.length === 0)
    throw new InstanceError(
      "no scoring_contract.scoring_function_parameters",
      "give the scenario at least one scoring function",
    );
  const env = isObject(sc.environment)
    ? sc.environment
    : isObject(sc.environment_parameters)
      ? sc.environment_parameters
      : {};
  const workdir =
    typeof env.working_directory === "string" && env.working_directory ? env.working_directory : undefined;
  const id = testId(rawId, ids);
  const sink: ScorerSink = { workdir, dir: `runloop/${id}`, files: {}, notes: [] };
  const { scorers, verifiers } = weightedScorers(fns, sink);
  const launch =
    isObject(env.launch_parameters) && Array.isArray(env.launch_parameters.launch_commands)
      ? env.launch_parameters.launch_commands.filter((c): c is string => typeof c === "string")
      : [];
  noteContext(sc, env, input, sink);
  sink.files[`${sink.dir}/problem.md`] = { text: `${input.problem_statement.trimEnd()}\n` };
  const entry: Record<string, unknown> = {
    id,
    ...(id !== rawId ? { description: rawId } : {}),
    instruction_file: `${sink.dir}/problem.md`,
  };
  const reference = referenceOf(sc, sink);
  if (reference !== undefined) entry.reference = reference;
  const tags = isObject(sc.metadata) ? Object.entries(sc.metadata).map(([k, v]) => `${k}:${String(v)}`) : [];
  if (tags.length) entry.tags = tags;
  entry.workspace = {
    seed: { empty: true },
    ...(launch.length
      ? { setup: { command: ["sh", "-ec", launch.map((c) => localize(c, workdir)).join("\n")] } }
      : {}),
    ...(verifiers.length ? { verifiers } : {}),
  };
  entry.scorers = scorers;
  return { id, entry, files: sink.files, notes: sink.notes };
}

export async function importRunloop(opts: ImportOptions): Promise<ImportOutcome> {
  const outcome = runloopOutcome(opts);
  const items = await selectedScenarios(opts);
  const ids = new Set<string>();
  await convertEach(items, (sc, rawId) => scenarioTest(sc, rawId, ids), outcome);
  return outcome;
}
