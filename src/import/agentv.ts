/**
 * `evalgate import agentv`: AgentV 4.x eval files → tests. What grades the workspace maps:
 * code-grader assertions become script scorers (fed AgentV's stdin JSON), an llm-grader with a
 * model an llm-judge, the workspace's template or single repository the seed, its before_* hooks
 * the setup, `execution.trials.count` the repeat. What grades the agent's reply or trace
 * (contains, regex, equals, is-json, tool-trajectory, latency, cost, ...) and LLM graders without
 * a judge model are listed in IMPORT.md, never dropped silently; a test left with nothing
 * evalgate can grade is skipped with the fix.
 */
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";
import { suggestSlug } from "../config/schema/values.js";
import { UsageError } from "../errors.js";
import { argvOf, localizeArgv, mapGraders } from "./agentv-graders.js";
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

interface Suite {
  file: string;
  shown: string;
  dir: string;
  doc: Json;
  slug: string;
  workspace: Json | undefined;
}

interface Case {
  suite: Suite;
  test: Json;
}

async function readYamlOrJson(file: string, shown: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(
      `cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  try {
    if (file.endsWith(".jsonl")) {
      return text
        .split(/\r?\n/)
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as unknown);
    }
    return parse(text) as unknown;
  } catch (error) {
    throw new UsageError(
      `${shown} is not valid ${file.endsWith(".jsonl") ? "JSONL" : "YAML"}: ${(error as Error).message.split("\n")[0]}`,
    );
  }
}

/** The text of AgentV's input: a string, or the messages' text and file blocks. */
async function inputText(input: unknown, dir: string, notes: string[]): Promise<string> {
  if (input === undefined || input === null) return "";
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return JSON.stringify(input, null, 2);
  const parts: string[] = [];
  for (const m of input) {
    if (!isObject(m)) continue;
    if (m.role === "assistant" || m.role === "tool") {
      notes.push(`an input message of role ${String(m.role)} (evalgate gives the agent one instruction)`);
      continue;
    }
    const content = m.content;
    if (typeof content === "string") parts.push(content);
    else if (Array.isArray(content)) {
      for (const c of content) {
        if (!isObject(c)) continue;
        if (c.type === "text" && typeof c.value === "string") parts.push(c.value);
        else if (c.type === "file" && typeof c.value === "string") {
          const abs = path.resolve(dir, c.value.replace(/^\//, ""));
          if (!existsSync(abs))
            throw new InstanceError(
              `input file ${c.value} does not exist`,
              `add ${c.value} beside the eval file`,
            );
          parts.push(`${c.value}:\n\n\`\`\`\n${(await readFile(abs, "utf8")).trimEnd()}\n\`\`\``);
        }
      }
    }
  }
  return parts.join("\n\n");
}

function evaluators(x: Json): Json[] {
  for (const k of ["assertions", "assert", "evaluators"])
    if (Array.isArray(x[k])) return (x[k] as unknown[]).filter(isObject);
  const exec = isObject(x.execution) ? x.execution : {};
  for (const k of ["assertions", "assert", "evaluators"])
    if (Array.isArray(exec[k])) return (exec[k] as unknown[]).filter(isObject);
  return [];
}

async function suitesOf(sources: string[], cwd: string): Promise<Suite[]> {
  const out: Suite[] = [];
  const slugs = new Set<string>();
  for (const src of sources) {
    const abs = path.resolve(cwd, src);
    const s = await stat(abs).catch(() => undefined);
    if (!s?.isFile()) throw new UsageError(`${src} is not a file: give AgentV eval files (*.eval.yaml)`);
    const doc = await readYamlOrJson(abs, src);
    if (!isObject(doc) || (doc.tests === undefined && doc.eval_cases === undefined)) {
      throw new UsageError(`${src} is not an AgentV eval file: it has no tests`);
    }
    let workspace: Json | undefined;
    if (typeof doc.workspace === "string") {
      const w = await readYamlOrJson(path.resolve(path.dirname(abs), doc.workspace), doc.workspace);
      if (!isObject(w)) throw new UsageError(`${src}: workspace file ${doc.workspace} is not a mapping`);
      workspace = w;
    } else if (isObject(doc.workspace)) workspace = doc.workspace;
    const base =
      suggestSlug(String(doc.name ?? path.basename(abs).replace(/\.(eval\.)?ya?ml$/, ""))) ?? "suite";
    let slug = base;
    for (let n = 2; slugs.has(slug); n++) slug = `${base}-${n}`;
    slugs.add(slug);
    out.push({ file: abs, shown: src, dir: path.dirname(abs), doc, slug, workspace });
  }
  return out;
}

async function casesOf(suite: Suite): Promise<Json[]> {
  const tests = suite.doc.tests ?? suite.doc.eval_cases;
  if (Array.isArray(tests)) return tests.filter(isObject);
  if (typeof tests === "string") {
    const list = await readYamlOrJson(path.resolve(suite.dir, tests), tests);
    if (!Array.isArray(list))
      throw new UsageError(`${suite.shown}: tests file ${tests} is not a list of tests`);
    return list.filter(isObject);
  }
  throw new UsageError(`${suite.shown}: tests is neither a list nor a file`);
}

/** Per-case workspace fields replace the suite's. */
function workspaceOf(suite: Suite, test: Json): Json {
  return { ...(suite.workspace ?? {}), ...(isObject(test.workspace) ? test.workspace : {}) };
}

async function seedAndSetup(
  ws: Json,
  suite: Suite,
  out: string,
  files: Record<string, OutputFile>,
  notes: string[],
) {
  const result: Json = {};
  const repos = Array.isArray(ws.repos) ? ws.repos.filter(isObject) : [];
  if (repos.length > 1)
    throw new InstanceError(
      `the workspace has ${repos.length} repositories; an evalgate workspace is one`,
      "keep one repository (or a template folder) per eval file",
    );
  if (repos.length === 1 && ws.template)
    throw new InstanceError("the workspace has both a template and a repository", "keep one of them");
  if (typeof ws.template === "string") {
    const abs = path.resolve(suite.dir, ws.template);
    if (!existsSync(abs))
      throw new InstanceError(
        `workspace template ${ws.template} does not exist`,
        `create ${ws.template} beside ${suite.shown}`,
      );
    files[`${out}/template`] = { copyFrom: abs };
    result.seed = { path: `${out}/template` };
  } else if (repos.length === 1) {
    const repo = repos[0]!;
    const source = isObject(repo.source) ? repo.source : {};
    const url =
      source.type === "git"
        ? String(source.url ?? "")
        : source.type === "local"
          ? path.resolve(suite.dir, String(source.path ?? ""))
          : "";
    if (!url)
      throw new InstanceError(
        "the workspace repository has no source url or path",
        "give source: { type: git, url } or { type: local, path }",
      );
    const checkout = isObject(repo.checkout) ? repo.checkout : {};
    result.seed = { git: { url, ...(typeof checkout.ref === "string" ? { ref: checkout.ref } : {}) } };
    if (typeof repo.path === "string" && !["", ".", "./"].includes(repo.path))
      notes.push(`the repository's path ${repo.path}: it is the workspace root here`);
    if (isObject(repo.clone)) notes.push("workspace.repos[0].clone (clone options)");
  } else result.seed = { empty: true };
  const hooks = isObject(ws.hooks) ? ws.hooks : {};
  const steps: string[][] = [];
  for (const k of ["before_all", "before_each"]) {
    const h = isObject(hooks[k]) ? (hooks[k] as Json) : undefined;
    if (!h) continue;
    const argv = argvOf(h.command ?? h.script);
    if (!argv) continue;
    steps.push(
      localizeArgv(
        argv,
        path.resolve(suite.dir, typeof h.cwd === "string" ? h.cwd : "."),
        `${out}/hooks`,
        files,
      ),
    );
  }
  for (const k of ["after_each", "after_all"])
    if (hooks[k]) notes.push(`workspace.hooks.${k} (evalgate starts every attempt from a fresh copy)`);
  if (steps.length === 1) result.setup = { command: steps[0] };
  else if (steps.length > 1) {
    const q = (a: string) => `'${a.replaceAll("'", `'\\''`)}'`;
    result.setup = { command: ["sh", "-ec", steps.map((s) => s.map(q).join(" ")).join("\n")] };
  }
  for (const k of ["mode", "isolation", "path"])
    if (ws[k] !== undefined) notes.push(`workspace.${k} (evalgate's workspaces are fresh per attempt)`);
  return result;
}

function agentvOutcome(opts: ImportOptions): ImportOutcome {
  return {
    format: "agentv",
    sources: opts.sources,
    tests: [],
    problems: [],
    mapping: [
      ["tests[].id", "test id"],
      ["input (string, or messages with text and file blocks)", "instruction"],
      ["criteria", "description; the rubric of an llm-grader that has a model"],
      ["workspace.template", "workspace.seed.path (copied)"],
      ["workspace.repos (one)", "workspace.seed.git (url or local path, checkout.ref)"],
      ["workspace.hooks.before_all / before_each", "workspace.setup.command"],
      [
        "code-grader (command)",
        "script scorer, fed AgentV's stdin JSON (input_text, criteria, expected_output_text, workspace_path); its files copied",
      ],
      ["llm-grader with model", "llm-judge (rubric: its prompt, else the criteria)"],
      ["weight, required", "weight (normalized to sum 1), required"],
      ["execution.trials.count", "repeat"],
    ],
    notes: [
      "AgentV tests have no reference solution: add `reference:` (a patch) to each test, then run `evalgate validate --solvable`.",
      "Code graders get an empty output_text: evalgate grades the workspace the agent leaves, not its reply.",
    ],
  };
}

/** The tests --filter and --limit select, suite by suite, each with its id and where it is. */
async function selectedCases(opts: ImportOptions): Promise<{ id: string; source: string; item: Case }[]> {
  const selection = new Selection(opts.filter, opts.limit);
  const items: { id: string; source: string; item: Case }[] = [];
  for (const suite of await suitesOf(opts.sources, opts.cwd)) {
    for (const [i, test] of (await casesOf(suite)).entries()) {
      const raw = typeof test.id === "string" && test.id ? test.id : `${suite.slug}-${i + 1}`;
      if (selection.take(raw))
        items.push({ id: raw, source: `${suite.shown} tests[${i}]`, item: { suite, test } });
    }
  }
  return items;
}

/** Explicit weights (a missing one counts 1) normalized to sum to 1 over several scorers. */
function normalizeWeights(scorers: Json[], weights: (number | undefined)[], notes: string[]): void {
  if (!weights.some((w) => w !== undefined) || scorers.length <= 1) return;
  const ws = weights.map((w) => w ?? 1);
  const sum = ws.reduce((a, b) => a + b, 0);
  scorers.forEach((s, i) => {
    s.weight = sum > 0 ? Number((ws[i]! / sum).toFixed(6)) : 1 / scorers.length;
  });
  notes.push("weights normalized to sum to 1");
}

/** The suite's input (unless the test skips the defaults), then the test's: the instruction. */
async function instructionOf(
  suite: Suite,
  test: Json,
  skipDefaults: boolean,
  notes: string[],
): Promise<string> {
  const instruction = [
    skipDefaults ? "" : await inputText(suite.doc.input, suite.dir, notes),
    await inputText(test.input, suite.dir, notes),
  ]
    .filter(Boolean)
    .join("\n\n");
  if (!instruction.trim())
    throw new InstanceError("no input", "give the test an input (the task for the agent)");
  return instruction;
}

async function caseTest({ suite, test }: Case, rawId: string, ids: Set<string>): Promise<ImportedTest> {
  const notes: string[] = [];
  const files: Record<string, OutputFile> = {};
  const id = testId(rawId, ids);
  const out = `agentv/${suite.slug}/${id}`;
  const exec = isObject(test.execution) ? test.execution : {};
  const suiteExec = isObject(suite.doc.execution) ? suite.doc.execution : {};
  const skipDefaults = exec.skip_defaults === true;
  const instruction = await instructionOf(suite, test, skipDefaults, notes);
  const criteria =
    typeof test.criteria === "string"
      ? test.criteria
      : typeof test.expected_outcome === "string"
        ? test.expected_outcome
        : undefined;
  const graders = [...evaluators(test), ...(skipDefaults ? [] : evaluators(suite.doc))];
  const { scorers, weights, unmapped } = mapGraders(graders, {
    instruction,
    criteria,
    expected: test.expected_output,
    metadata: test.metadata,
    suiteDir: suite.dir,
    suiteSlug: suite.slug,
    out,
    files,
    notes,
  });
  if (criteria && !scorers.some((s) => s.type === "llm-judge"))
    unmapped.push("criteria: graded by AgentV's default LLM grader, which has no judge model here");
  if (scorers.length === 0) {
    throw new InstanceError(
      `nothing evalgate can grade (${unmapped.join("; ") || "no assertions"})`,
      "add a code-grader assertion that checks the workspace, or give the llm-grader a model",
    );
  }
  notes.push(...unmapped.map((u) => `not mapped: ${u}`));
  normalizeWeights(scorers, weights, notes);
  const workspace = await seedAndSetup(workspaceOf(suite, test), suite, out, files, notes);
  const trials = isObject(exec.trials)
    ? exec.trials
    : isObject(suiteExec.trials)
      ? suiteExec.trials
      : undefined;
  const targets = exec.target ?? exec.targets ?? suiteExec.target ?? suiteExec.targets ?? suite.doc.target;
  if (targets)
    notes.push(
      `execution target(s) ${JSON.stringify(targets)}: AgentV targets are not carried; declare evalgate targets`,
    );
  if (trials?.strategy && trials.strategy !== "pass_at_k")
    notes.push(`trials.strategy ${String(trials.strategy)}: use gate.policy`);
  files[`${out}/instruction.md`] = { text: `${instruction.trimEnd()}\n` };
  const entry: Json = {
    id,
    ...(criteria ? { description: criteria } : id !== rawId ? { description: rawId } : {}),
    instruction_file: `${out}/instruction.md`,
    ...(typeof trials?.count === "number" && trials.count > 1 ? { repeat: trials.count } : {}),
    tags: [`suite:${suite.slug}`],
    workspace,
    scorers,
  };
  return { id, entry, files, notes };
}

export async function importAgentV(opts: ImportOptions): Promise<ImportOutcome> {
  const outcome = agentvOutcome(opts);
  const items = await selectedCases(opts);
  const ids = new Set<string>();
  await convertEach(items, (item, rawId) => caseTest(item, rawId, ids), outcome);
  return outcome;
}
