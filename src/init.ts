/**
 * `evalgate init`: a starter suite for the current repository and the workflow that runs it. It
 * never overwrites a file, so running it again changes nothing.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "./errors.js";

export const INIT_AGENTS = ["claude-code", "codex", "gemini-cli", "command"] as const;
export type InitAgent = (typeof INIT_AGENTS)[number];

export interface InitOptions {
  /** The repository root (where `.github/workflows/` goes). */
  root: string;
  /** The folder the user ran `init` in (`--dir` is relative to it). */
  cwd: string;
  agent: InitAgent;
  /** The suite's folder, default `evals`. */
  dir: string;
}

export interface InitFile {
  /** Path relative to the repository root, with `/`. */
  path: string;
  /** false: a file was already there and was kept as it was. */
  written: boolean;
}

export interface InitResult {
  files: InitFile[];
  /** What the starter suite runs as the scorer (undefined: none could be told). */
  testCommand?: string;
  /** The three commands to run next. */
  next: string[];
  /** Things the user should do by hand (init never edits an existing file). */
  notes: string[];
}

/** The repository's own test command and setup, told from its files. */
interface Project {
  kind: "npm" | "python" | "go" | "cargo" | "unknown";
  test?: string;
  setup?: string;
  /** Dependency and build folders a workspace's start commit should leave out. */
  ignore: string[];
}

async function detectProject(root: string): Promise<Project> {
  const has = (f: string) => existsSync(path.join(root, f));
  if (has("package.json")) {
    let scripts: Record<string, unknown> = {};
    try {
      const pkg = JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as {
        scripts?: Record<string, unknown>;
      };
      scripts = pkg.scripts ?? {};
    } catch {
      // An unreadable package.json: no test command to offer.
    }
    const setup = has("package-lock.json") || has("npm-shrinkwrap.json") ? "npm ci" : "npm install";
    const test = typeof scripts.test === "string" ? "npm test" : undefined;
    return { kind: "npm", setup, ...(test ? { test } : {}), ignore: ["node_modules/"] };
  }
  if (has("pyproject.toml") || has("setup.py") || has("pytest.ini") || has("tox.ini") || has("setup.cfg")) {
    return { kind: "python", test: "pytest", ignore: [".venv/", "__pycache__/", ".pytest_cache/"] };
  }
  if (has("go.mod")) return { kind: "go", test: "go test ./...", ignore: [] };
  if (has("Cargo.toml")) return { kind: "cargo", test: "cargo test", ignore: ["target/"] };
  return { kind: "unknown", ignore: [] };
}

/** A YAML string scalar, quoted. */
const q = (s: string) => JSON.stringify(s);

function targetYaml(agent: InitAgent): string {
  switch (agent) {
    case "claude-code":
      return `  - name: claude
    provider: claude-code # needs claude on PATH (npm i -g @anthropic-ai/claude-code)
    model: sonnet
    env_passthrough: [ANTHROPIC_API_KEY]
    timeout: 20m`;
    case "codex":
      return `  - name: codex
    provider: codex # needs codex on PATH (npm i -g @openai/codex)
    env_passthrough: [CODEX_API_KEY]
    timeout: 20m`;
    case "gemini-cli":
      return `  - name: gemini
    provider: gemini-cli # needs gemini on PATH (npm i -g @google/gemini-cli)
    env_passthrough: [GEMINI_API_KEY]
    timeout: 20m`;
    case "command":
      return `  - name: my-agent
    provider: command
    # Your agent's command line: {PROMPT_FILE} is the task, {WORKSPACE} the repository to change.
    command: ${q('echo \'replace this command with your agent, e.g. ["node", "agent.mjs", "{PROMPT_FILE}"]\' >&2; exit 1')}
    timeout: 20m`;
  }
}

function evalYaml(
  project: Project,
  agent: InitAgent,
  seedPath: string,
  exclude: string[],
  schemaPath: string,
  patchPath: string,
): string {
  const scorer = project.test
    ? `      # The repository's own tests: the attempt passes when they pass after the agent's change.
      - { name: tests, type: command, run: ${q(project.test)}, required: true }`
    : `      # evalgate init could not tell this repository's test command: put it here.
      - { name: tests, type: command, run: ${q("echo 'replace with your test command' >&2; exit 1")}, required: true }`;
  const setup = project.setup
    ? `\n  setup: { command: ${q(project.setup)} } # runs before the agent; never part of the graded diff`
    : "";
  return `# yaml-language-server: $schema=${schemaPath}
#
# A starter suite written by evalgate init. Describe a real bug of this repository in the
# instruction, put its known-good fix in starter/fix.patch (git diff > ${patchPath}),
# then: evalgate validate --solvable (the fix passes, no change fails).
name: starter

targets:
${targetYaml(agent)}

# Agents are not deterministic: 3 attempts per test, up to 10 for a test whose result is still
# unclear. A test passes when its success rate is at least 0.5, decided with a stated error of 5 %;
# against main's history a significant drop blocks the merge (docs/gate.md: the figures, measured).
repeat: { min: 3, max: 10 }

gate:
  policy: attempt_success_rate_at_least
  min_rate: 0.5
  regressions: fail # a significant drop against main's recent runs blocks the merge

workspace:
  # Every attempt starts from a fresh copy of this repository, without .git, .evalgate and the
  # evals (they hold the answer key: the agent must never see the fix or the hidden tests).
  seed: { path: ${q(seedPath)}, exclude: [${exclude.map(q).join(", ")}] }${setup}

tests:
  - id: example
    instruction: |
      Describe one bug of this repository here, the way you would to a colleague: what is wrong,
      where, and what "fixed" means. The agent gets this text as its task.
    reference: starter/fix.patch
    scorers:
${scorer}
`;
}

const FIX_PLACEHOLDER = `This file stands for the known-good fix of the example test: replace it with a patch,
for example by fixing the bug on a branch and running

    git diff > PATH

evalgate validate --solvable applies it and checks that the test passes with it and fails without.
`;

const AGENT_INSTALL: Record<InitAgent, { install?: string; secret?: string }> = {
  "claude-code": { install: "npm install -g @anthropic-ai/claude-code", secret: "ANTHROPIC_API_KEY" },
  codex: { install: "npm install -g @openai/codex", secret: "CODEX_API_KEY" },
  "gemini-cli": { install: "npm install -g @google/gemini-cli", secret: "GEMINI_API_KEY" },
  command: {},
};

function workflowYaml(agent: InitAgent, evalsDir: string): string {
  const { install, secret } = AGENT_INSTALL[agent];
  const installStep = install
    ? `      - name: Install the agent
        run: ${install}
`
    : `      # Install or build your agent here, so that the target's command can run.
`;
  const env = secret
    ? `        env:
          ${secret}: \${{ secrets.${secret} }}
`
    : "";
  return `# Written by evalgate init. Evals on every pull request, in the merge queue, and on main (whose
# bundles are the baselines pull requests are compared with). Make the job "evals" a required check.
name: evals

on:
  pull_request:
  merge_group: # a required check must also run in the merge queue
  push:
    branches: [main] # main's runs keep the baseline bundles fresh

permissions:
  contents: read
  pull-requests: write # the sticky comment
  actions: read # baseline: auto downloads main's bundle artifact

concurrency:
  group: evals-\${{ github.event.pull_request.number || github.ref }}
  cancel-in-progress: true

jobs:
  evals:
    runs-on: ubuntu-latest
    timeout-minutes: 60
    steps:
      - uses: actions/checkout@v4
        with:
          persist-credentials: false # keep the job's token out of .git/config, where agents could read it
      - uses: actions/setup-node@v4
        with:
          node-version: 24
${installStep}      - uses: OWNER/evalgate@v1
        with:
          evals: ${evalsDir}
          comment: always
          baseline: auto
${env}`;
}

/** Writes the starter files that do not exist yet; never overwrites one. */
export async function initRepository(opts: InitOptions): Promise<InitResult> {
  if (!(INIT_AGENTS as readonly string[]).includes(opts.agent)) {
    throw new UsageError(`--agent ${opts.agent}: use one of ${INIT_AGENTS.join(", ")}`);
  }
  const root = path.resolve(opts.root);
  const dir = path.resolve(opts.cwd, opts.dir);
  const relDir = path.relative(root, dir);
  if (relDir.startsWith("..") || path.isAbsolute(relDir)) {
    throw new UsageError(`--dir ${opts.dir}: the suite's folder must be inside the repository (${root})`);
  }
  const posixDir = relDir.split(path.sep).join("/") || ".";
  const project = await detectProject(root);
  const seed = path.relative(dir, root).split(path.sep).join("/") || ".";
  // The suite's folder is left out of the seed (docs/decisions/0187); at the root, its own files.
  // Installed dependencies stay out too: setup installs them in the start tree (issue 29: 76 MB of
  // node_modules copied for every run).
  const installed = project.ignore.map((i) => i.replace(/\/+$/, "")).filter((i) => !i.includes("*"));
  const exclude = [...(posixDir === "." ? ["starter.eval.yaml", "starter"] : [posixDir]), ...installed];
  const schema = schemaRef(root, dir);

  const contents: [string, string][] = [
    [
      path.join(dir, "starter.eval.yaml"),
      evalYaml(project, opts.agent, seed, exclude, schema, `${posixDir}/starter/fix.patch`),
    ],
    [
      path.join(dir, "starter", "fix.patch"),
      FIX_PLACEHOLDER.replace("PATH", `${posixDir}/starter/fix.patch`),
    ],
    [path.join(root, ".gitignore"), `${[".evalgate/", ...project.ignore].join("\n")}\n`],
    [path.join(root, ".github", "workflows", "evals.yml"), workflowYaml(opts.agent, `${posixDir}/`)],
  ];
  const files: InitFile[] = [];
  for (const [file, text] of contents) {
    await mkdir(path.dirname(file), { recursive: true });
    let written = true;
    try {
      // wx: refuse to replace anything, even a file made since the check.
      await writeFile(file, text, { flag: "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      written = false;
    }
    files.push({ path: path.relative(root, file).split(path.sep).join("/"), written });
  }
  const ignore = files.find((f) => f.path === ".gitignore");
  const notes: string[] = [];
  if (ignore && !ignore.written) {
    const text = await readFile(path.join(root, ".gitignore"), "utf8").catch(() => "");
    if (!/^\/?\.evalgate\/?$/m.test(text)) {
      notes.push("add .evalgate/ to .gitignore: run bundles are written there and should not be committed");
    }
  }
  return {
    files,
    notes,
    ...(project.test ? { testCommand: project.test } : {}),
    next: [
      `npx evalgate validate --solvable ${posixDir}/`,
      `npx evalgate run ${posixDir}/`,
      `git add ${posixDir} .github/workflows/evals.yml .gitignore && git commit -m "Add evalgate evals"`,
      ...(await placeholders(root, files)),
    ],
  };
}

/** The schema an editor reads: the installed package's, when evalgate is installed here. */
function schemaRef(root: string, dir: string): string {
  const local = path.join(root, "node_modules", "evalgate", "schema", "eval.schema.json");
  if (existsSync(local)) return path.relative(dir, local).split(path.sep).join("/");
  return "https://raw.githubusercontent.com/OWNER/evalgate/v1/schema/eval.schema.json";
}

/** Each OWNER placeholder in a file init wrote, with the command that fills it. */
async function placeholders(root: string, files: readonly InitFile[]): Promise<string[]> {
  const out: string[] = [];
  for (const f of files) {
    if (!f.written) continue;
    const text = await readFile(path.join(root, f.path), "utf8");
    if (!text.includes("OWNER/evalgate")) continue;
    out.push(
      `replace OWNER in ${f.path} with the GitHub owner of the evalgate repository you install from: sed -i 's|OWNER/evalgate|YOUR-OWNER/evalgate|' ${f.path}`,
    );
  }
  return out;
}

/** What `init` prints: each file written or kept, then the next three commands. */
export function renderInit(result: InitResult): string {
  const lines = result.files.map(
    (f) => `${f.written ? "wrote" : "kept "} ${f.path}${f.written ? "" : " (exists)"}`,
  );
  if (result.files.every((f) => !f.written)) lines.push("nothing to do: every file exists");
  if (!result.testCommand) {
    lines.push("note: could not tell this repository's test command; put it in the tests scorer");
  }
  for (const n of result.notes) lines.push(`note: ${n}`);
  lines.push("", "next:", ...result.next.map((c, i) => `  ${i + 1}. ${c}`));
  return `${lines.join("\n")}\n`;
}
