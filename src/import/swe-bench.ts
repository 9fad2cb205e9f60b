/**
 * `evalgate import swe-bench`: SWE-bench instances (JSONL or a JSON array) → tests: a git seed at
 * `base_commit`, the problem statement, the gold patch as the reference, the test patch applied
 * after the agent (the files it touches restored first, as SWE-bench's harness does), and a
 * `tests` scorer with FAIL_TO_PASS / PASS_TO_PASS. Each repository's setup and test command come
 * from the user's `--specs` file, since every repository runs its tests differently.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";
import { UsageError } from "../errors.js";
import { mirrorSeedUrl } from "./swe-bench-mirror.js";
import {
  convertEach,
  type ImportedTest,
  type ImportOptions,
  type ImportOutcome,
  InstanceError,
  Selection,
  testId,
} from "./write.js";

interface RepoSpec {
  setup?: string;
  test: string;
  report: string;
  report_format?: "junit" | "ctrf";
}

type Instance = Record<string, unknown>;

const REQUIRED = [
  "instance_id",
  "repo",
  "base_commit",
  "problem_statement",
  "patch",
  "test_patch",
  "FAIL_TO_PASS",
  "PASS_TO_PASS",
] as const;

/** Instances of a JSONL file or a JSON array; a line that is not JSON is a problem of its own. */
export async function readInstances(
  file: string,
  shown = file,
): Promise<{ items: { at: string; value: unknown }[]; bad: { at: string; message: string }[] }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const trimmed = text.trimStart();
  if (trimmed.startsWith("[")) {
    try {
      const arr = JSON.parse(trimmed) as unknown[];
      return { items: arr.map((value, i) => ({ at: `${shown}[${i}]`, value })), bad: [] };
    } catch (error) {
      throw new UsageError(`${shown} is not a JSON array: ${(error as Error).message}`);
    }
  }
  const items: { at: string; value: unknown }[] = [];
  const bad: { at: string; message: string }[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    try {
      items.push({ at: `${shown}:${i + 1}`, value: JSON.parse(line) });
    } catch (error) {
      bad.push({ at: `${shown}:${i + 1}`, message: `not JSON (${(error as Error).message})` });
    }
  });
  return { items, bad };
}

/** FAIL_TO_PASS and PASS_TO_PASS are lists, or JSON-encoded lists as the published files have them. */
function testList(inst: Instance, key: string): string[] {
  let v = inst[key];
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      throw new InstanceError(
        `${key} is a string that is not a JSON list`,
        `give ${key} as a list of test names`,
      );
    }
  }
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
    throw new InstanceError(`${key} is not a list of test names`, `give ${key} as a list of strings`);
  }
  return [...new Set((v as string[]).map((s) => s.trim()).filter(Boolean))];
}

/** Files a unified diff touches: [path, existed before]. */
export function patchFiles(patch: string): { file: string; isNew: boolean }[] {
  const out: { file: string; isNew: boolean }[] = [];
  for (const block of patch.split(/^diff --git /m).slice(1)) {
    const m = /^a\/(\S+) b\/(\S+)/.exec(block);
    if (!m) continue;
    out.push({ file: m[2]!, isNew: /^new file mode/m.test(block) || /^--- \/dev\/null/m.test(block) });
  }
  return out;
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

async function loadSpecs(file: string | undefined, cwd: string): Promise<Record<string, RepoSpec>> {
  if (!file) return {};
  const abs = path.resolve(cwd, file);
  let doc: unknown;
  try {
    doc = parse(await readFile(abs, "utf8"));
  } catch (error) {
    throw new UsageError(`--specs ${file}: ${(error as Error).message}`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new UsageError(`--specs ${file}: expected a mapping of owner/name to { setup, test, report }`);
  }
  for (const [repo, spec] of Object.entries(doc as Record<string, unknown>)) {
    const s = spec as Partial<RepoSpec> | null;
    if (!s || typeof s.test !== "string" || typeof s.report !== "string") {
      throw new UsageError(
        `--specs ${file}: ${repo} needs test (the test command) and report (the JUnit or CTRF report it writes), e.g. ${repo}: { setup: "pip install -e .", test: "pytest --junitxml=report.xml", report: report.xml }`,
      );
    }
    if (s.setup !== undefined && typeof s.setup !== "string")
      throw new UsageError(`--specs ${file}: ${repo}.setup must be a shell command`);
  }
  return doc as Record<string, RepoSpec>;
}

/** SWE-bench's published instance images: `swebench/sweb.eval.x86_64.<id>:latest`, `__` spelled `_1776_`. */
export const SWE_BENCH_IMAGES = "swebench/sweb.eval.x86_64.{id}:latest";

/** An instance's image from a template with `{id}` (lower case, `__` as `_1776_`, as Docker Hub names them). */
export function instanceImage(template: string, instanceId: string): string {
  return template.replaceAll("{id}", instanceId.toLowerCase().replaceAll("__", "_1776_"));
}

/** How SWE-bench's fields become evalgate's (IMPORT.md's table), and what --images adds. */
function sweBenchOutcome(opts: ImportOptions): ImportOutcome {
  return {
    format: "swe-bench",
    sources: opts.sources,
    tests: [],
    problems: [],
    mapping: [
      ["instance_id", "test id"],
      ["repo, base_commit", "workspace.seed.git (url, ref); a mirror under --repos when given"],
      ["problem_statement", "instruction"],
      ["patch", "reference (swe-bench/<id>/gold.patch)"],
      [
        "test_patch",
        "hidden verifier swe-bench/<id>/test.patch, applied by the scorer after the files it touches are restored",
      ],
      ["FAIL_TO_PASS, PASS_TO_PASS", "tests scorer fail_to_pass, pass_to_pass"],
      ["--specs: setup, test, report", "workspace.setup.command; the tests scorer's command and report"],
      ["version, environment_setup_commit, hints_text", "tags and description (not run)"],
      ...(opts.images
        ? ([["instance_id (--images)", `environment: { image: ${opts.images}, workdir: /testbed }`]] as [
            string,
            string,
          ][])
        : []),
    ],
    ...(opts.images
      ? {
          notes: [
            "Each test runs in its instance's image (docs/environments.md), with the workspace (a checkout of base_commit) mounted over the image's /testbed: an editable install there points at it; artefacts the image built inside /testbed (compiled extensions) must be rebuilt by the --specs setup.",
            "The --specs test command runs inside the image: activate its environment there (e.g. `. /opt/miniconda3/bin/activate testbed && pytest …`).",
          ],
        }
      : {}),
  };
}

/** The instances --filter and --limit select, in source order; an unreadable line is a problem. */
async function selectedInstances(
  opts: ImportOptions,
  outcome: ImportOutcome,
): Promise<{ id: string; source: string; item: Instance }[]> {
  const selection = new Selection(opts.filter, opts.limit);
  const items: { id: string; source: string; item: Instance }[] = [];
  for (const src of opts.sources) {
    const { items: found, bad } = await readInstances(path.resolve(opts.cwd, src), src);
    for (const b of bad)
      outcome.problems.push({
        id: "(unreadable)",
        source: b.at,
        message: b.message,
        fix: "write one JSON object per line",
      });
    for (const { at, value } of found) {
      const inst = (typeof value === "object" && value !== null ? value : {}) as Instance;
      const raw = typeof inst.instance_id === "string" ? inst.instance_id : `(no instance_id at ${at})`;
      if (!selection.take(raw)) continue;
      items.push({ id: raw, source: at, item: inst });
    }
  }
  return items;
}

/** An instance's fields once checked: every required one present, of its type. */
interface CheckedInstance {
  repo: string;
  base: string;
  patch: string;
  testPatch: string;
  f2p: string[];
  p2p: string[];
}

function checkedInstance(inst: Instance): CheckedInstance {
  const missing = REQUIRED.filter((k) => inst[k] === undefined || inst[k] === null || inst[k] === "");
  if (missing.length > 0) {
    throw new InstanceError(
      `missing ${missing.join(", ")}`,
      "every SWE-bench instance needs instance_id, repo, base_commit, problem_statement, patch, test_patch, FAIL_TO_PASS and PASS_TO_PASS",
    );
  }
  for (const k of ["repo", "base_commit", "problem_statement", "patch", "test_patch"] as const) {
    if (typeof inst[k] !== "string") throw new InstanceError(`${k} is not a string`, `give ${k} as a string`);
  }
  const f2p = testList(inst, "FAIL_TO_PASS");
  const p2p = testList(inst, "PASS_TO_PASS").filter((t) => !f2p.includes(t));
  if (f2p.length === 0)
    throw new InstanceError("FAIL_TO_PASS is empty", "list at least one test the gold patch makes pass");
  return {
    repo: inst.repo as string,
    base: inst.base_commit as string,
    patch: inst.patch as string,
    testPatch: inst.test_patch as string,
    f2p,
    p2p,
  };
}

/**
 * The tests scorer: the files the test patch touches restored to the base commit, the test patch
 * applied, then the repository's test command, as SWE-bench's harness does.
 */
function testsScorer(checked: CheckedInstance, spec: RepoSpec): Record<string, unknown> {
  const touched = patchFiles(checked.testPatch);
  const restore = touched.filter((t) => !t.isNew).map((t) => shellQuote(t.file));
  const created = touched.filter((t) => t.isNew).map((t) => shellQuote(t.file));
  const steps = [
    // By the commit's hash, not a ref the agent could move, and without git's replace objects.
    ...(restore.length
      ? [`GIT_NO_REPLACE_OBJECTS=1 git checkout -q ${checked.base} -- ${restore.join(" ")}`]
      : []),
    ...(created.length ? [`rm -f ${created.join(" ")}`] : []),
    "git apply --whitespace=nowarn .swebench/test.patch",
    "rm -rf .swebench",
    spec.test,
  ];
  return {
    type: "tests",
    run: steps.join(" && "),
    report: spec.report,
    ...(spec.report_format ? { report_format: spec.report_format } : {}),
    fail_to_pass: checked.f2p,
    ...(checked.p2p.length ? { pass_to_pass: checked.p2p } : {}),
  };
}

/** What every instance's conversion shares. */
interface SweBenchImport {
  opts: ImportOptions;
  specs: Record<string, RepoSpec>;
  reposDir: string | undefined;
  ids: Set<string>;
}

async function instanceTest(inst: Instance, rawId: string, im: SweBenchImport): Promise<ImportedTest> {
  const checked = checkedInstance(inst);
  const { repo, base } = checked;
  const spec = im.specs[repo];
  if (!spec) {
    throw new InstanceError(
      `no test command for ${repo}`,
      `add ${repo}: { setup: ..., test: ..., report: ... } to the --specs file`,
    );
  }
  let url = `https://github.com/${repo}.git`;
  const notes: string[] = [];
  if (im.reposDir) {
    const outDir = path.resolve(im.opts.cwd, im.opts.out);
    url = await mirrorSeedUrl(im.reposDir, outDir, repo, base, {
      patch: checked.patch,
      test_patch: checked.testPatch,
    });
  } else {
    notes.push(
      "the patches were not checked against base_commit (no --repos mirror): validate --solvable checks them",
    );
  }
  const id = testId(rawId, im.ids);
  const dir = `swe-bench/${id}`;
  const scorer = testsScorer(checked, spec);
  const tags = [`repo:${repo}`];
  if (typeof inst.version === "string" || typeof inst.version === "number")
    tags.push(`version:${inst.version}`);
  if (typeof inst.environment_setup_commit === "string" && inst.environment_setup_commit && !im.opts.images) {
    notes.push(
      `environment_setup_commit ${inst.environment_setup_commit.slice(0, 12)} is not used: the --specs setup prepares the environment`,
    );
  }
  const entry: Record<string, unknown> = {
    id,
    ...(id !== rawId ? { description: rawId } : {}),
    instruction_file: `${dir}/problem.md`,
    reference: `${dir}/gold.patch`,
    tags,
    workspace: {
      seed: { git: { url, ref: base } },
      ...(spec.setup ? { setup: { command: spec.setup } } : {}),
      verifiers: [{ from: `${dir}/test.patch`, to: ".swebench/test.patch" }],
    },
    scorers: [scorer],
  };
  // The instance's image: its environment as SWE-bench's harness built it, the repository at
  // /testbed, where evalgate mounts the workspace (a checkout of the same commit).
  if (im.opts.images)
    entry.environment = { image: instanceImage(im.opts.images, rawId), workdir: "/testbed" };
  const files: ImportedTest["files"] = {
    [`${dir}/problem.md`]: { text: `${(inst.problem_statement as string).trimEnd()}\n` },
    [`${dir}/gold.patch`]: { text: checked.patch },
    [`${dir}/test.patch`]: { text: checked.testPatch },
  };
  if (typeof inst.hints_text === "string" && inst.hints_text.trim()) {
    files[`${dir}/hints.md`] = { text: `${inst.hints_text.trimEnd()}\n` };
    notes.push(`hints_text kept in ${dir}/hints.md, not given to the agent`);
  }
  return { id, entry, files, notes };
}

export async function importSweBench(opts: ImportOptions): Promise<ImportOutcome> {
  const specs = await loadSpecs(opts.specs, opts.cwd);
  const reposDir = opts.repos ? path.resolve(opts.cwd, opts.repos) : undefined;
  const outcome = sweBenchOutcome(opts);
  const items = await selectedInstances(opts, outcome);
  const im: SweBenchImport = { opts, specs, reposDir, ids: new Set<string>() };
  await convertEach(items, (inst, rawId) => instanceTest(inst, rawId, im), outcome);
  return outcome;
}
