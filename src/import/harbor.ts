/**
 * `evalgate import harbor`: Harbor / Terminal-Bench task folders (task.toml, instruction.md,
 * environment/Dockerfile, tests/test.sh, solution/solve.sh) → tests. By default each test keeps the
 * task's container as its `environment:` (harbor-environment.ts): the Dockerfile built, WORKDIR the
 * workspace's mount point, the verifier run inside it. With `--host`, the task runs on this machine
 * instead, its paths given back by a generated wrapper (`_harbor/in-task.sh`, bubblewrap). Either
 * way /tests is the hidden tests, /solution the solution and /logs a folder of the workspace where
 * the verifier writes its reward or CTRF report.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { UsageError } from "../errors.js";
import { type Dockerfile, IN_TASK, readDockerfile } from "./harbor-dockerfile.js";
import {
  harborEnvironment,
  harborResources,
  hostReferenceSh,
  referenceSh,
  VERIFY_SH,
} from "./harbor-environment.js";
import { solutionWriter } from "./harbor-solution.js";
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

async function isTask(dir: string): Promise<boolean> {
  return existsSync(path.join(dir, "task.toml")) || existsSync(path.join(dir, "instruction.md"));
}

/** The task folders of the sources: a task folder, or a folder of task folders. */
async function taskFolders(sources: string[], cwd: string): Promise<string[]> {
  const out: string[] = [];
  for (const src of sources) {
    const abs = path.resolve(cwd, src);
    const s = await stat(abs).catch(() => undefined);
    if (!s?.isDirectory())
      throw new UsageError(`${src} is not a folder: give Harbor task folders, or folders of them`);
    if (await isTask(abs)) {
      out.push(abs);
      continue;
    }
    const kids = (await readdir(abs, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => path.join(abs, d.name));
    const tasks: string[] = [];
    for (const k of kids.sort()) if (await isTask(k)) tasks.push(k);
    if (tasks.length === 0) throw new UsageError(`${src} has no task.toml, and no folder of it has one`);
    out.push(...tasks);
  }
  return out;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : undefined;
}

const MAPPING_BOTH: [string, string][] = [
  ["task folder name (or [task].name)", "test id"],
  ["instruction.md", "instruction_file"],
  ["Dockerfile COPY/ADD of task files into WORKDIR", "the seed folder harbor/<id>/workspace"],
  ["tests/", "hidden verifier .harbor/tests (the task's /tests), after the agent"],
  [
    "tests/test.sh writing a CTRF report",
    "tests scorer, report .harbor/logs/verifier/ctrf.json (report_format: ctrf)",
  ],
  ["tests/test.sh writing reward.txt / reward.json", "script scorer: score = the reward"],
  ["[agent].timeout_sec, [verifier].timeout_sec", "test timeout, scorer timeout"],
  ["[task].keywords, [metadata].category, difficulty", "tags"],
];

const MAPPING_ENVIRONMENT: [string, string][] = [
  [
    "environment/Dockerfile (or [environment].docker_image)",
    "environment: build (the task's environment folder is the context), or image",
  ],
  ["Dockerfile WORKDIR", "environment.workdir: where the workspace is mounted"],
  [
    "Dockerfile RUN (plain shell)",
    "in the image, and again as workspace.setup.command (WORKDIR is the mounted workspace)",
  ],
  ["[environment] cpus, memory(_mb), storage(_mb)", "resources: cpus, memory, disk"],
  [
    "solution/",
    "reference: { script: harbor/<id>/reference.sh } (holds the solution's text files, runs solve.sh in the container)",
  ],
];

const MAPPING_HOST: [string, string][] = [
  [
    "environment/Dockerfile WORKDIR",
    "the path the workspace is given to the task's scripts (_harbor/in-task.sh)",
  ],
  ["Dockerfile RUN (plain shell)", "workspace.setup.command, run through in-task.sh"],
  [
    "solution/",
    "reference: { script: harbor/<id>/reference.sh } (holds the solution's text files, runs solve.sh in the task's paths)",
  ],
];

export async function importHarbor(opts: ImportOptions): Promise<ImportOutcome> {
  const host = opts.host === true;
  const outcome: ImportOutcome = {
    format: "harbor",
    sources: opts.sources,
    tests: [],
    problems: [],
    mapping: [...MAPPING_BOTH, ...(host ? MAPPING_HOST : MAPPING_ENVIRONMENT)],
    shared: host
      ? { "_harbor/in-task.sh": { text: IN_TASK, executable: true } }
      : { "_harbor/verify.sh": { text: VERIFY_SH, executable: true } },
    notes: host
      ? [
          "The task's scripts run under bubblewrap (`_harbor/in-task.sh`), so the runner needs `bwrap` and unprivileged user namespaces (docs/isolation.md).",
          "The agent works in the workspace itself: the instruction's paths under the task's WORKDIR refer to it.",
        ]
      : [
          "Each test runs in its task's container (docs/environments.md): the runner needs Docker, or Podman with runc.",
          "The workspace is mounted at the task's WORKDIR, so what the Dockerfile puts there comes from the seed (its COPYs) and the setup (its plain RUN steps again); everything else of the image is as built.",
          "The agent CLI must be in the image, or the target must run it another way (docs/environments.md: agents in environments).",
        ],
  };
  const selection = new Selection(opts.filter, opts.limit);
  const ids = new Set<string>();
  const items: { id: string; source: string; item: string }[] = [];
  for (const dir of await taskFolders(opts.sources, opts.cwd)) {
    const name = path.basename(dir);
    if (selection.take(name))
      items.push({ id: name, source: path.relative(opts.cwd, dir) || ".", item: dir });
  }
  await convertEach(items, (dir, rawId) => convertTask(dir, testId(rawId, ids), rawId, host), outcome);
  return outcome;
}

type Toml = Record<string, Record<string, unknown>>;

/** task.toml (when there is one), checked with instruction.md and tests/test.sh. */
async function readTask(dir: string, notes: string[]): Promise<Toml> {
  let toml: Toml = {};
  if (existsSync(path.join(dir, "task.toml"))) {
    try {
      toml = parseToml(await readFile(path.join(dir, "task.toml"), "utf8")) as Toml;
    } catch (error) {
      throw new InstanceError(
        `task.toml is not valid TOML: ${(error as Error).message.split("\n")[0]}`,
        "correct task.toml",
      );
    }
  } else notes.push("no task.toml: default timeouts");
  if (!existsSync(path.join(dir, "instruction.md")))
    throw new InstanceError("no instruction.md", "write the task's instruction to instruction.md");
  if (!existsSync(path.join(dir, "tests", "test.sh")))
    throw new InstanceError("no tests/test.sh", "add the verifier's entry point tests/test.sh");
  return toml;
}

/** The Dockerfile's COPYs into WORKDIR, as files of the seed folder; whether there was any. */
async function seedFiles(
  dir: string,
  dockerfile: string | undefined,
  docker: Dockerfile,
  out: string,
  files: Record<string, OutputFile>,
  notes: string[],
  host: boolean,
): Promise<boolean> {
  const envDir = dockerfile ? path.dirname(dockerfile) : dir;
  let seeded = false;
  for (const c of docker.copies) {
    const rel = path.posix.relative(docker.workdir, c.to.replace(/\/$/, "")) || ".";
    const from = path.resolve(envDir, c.from);
    if (!existsSync(from))
      throw new InstanceError(
        `the Dockerfile copies ${c.from}, which is not in ${path.relative(dir, envDir) || "."}`,
        `add ${c.from} to the task's environment folder`,
      );
    if (rel.startsWith("..") || path.isAbsolute(rel)) {
      // In its container, the image has it; on this machine it is lost.
      if (host) notes.push(`Dockerfile COPY ${c.from} ${c.to} (outside WORKDIR ${docker.workdir})`);
      continue;
    }
    const isDir = (await stat(from)).isDirectory();
    const target = !isDir && c.to.endsWith("/") ? path.posix.join(rel, path.basename(c.from)) : rel;
    files[path.posix.join(`${out}/workspace`, target)] = { copyFrom: from };
    seeded = true;
  }
  return seeded;
}

/** The scorer that runs tests/test.sh: a tests scorer for a CTRF report, else the reward as a script's score. */
function scorerOf(toml: Toml, testText: string, workdir: string, host: boolean): Record<string, unknown> {
  const verifier = (toml.verifier ?? {}) as Record<string, unknown>;
  const envPairs = Object.entries((verifier.env ?? {}) as Record<string, unknown>).map(
    ([k, v]) => `${k}=${String(v)}`,
  );
  const envPrefix = envPairs.length ? ["env", ...envPairs] : [];
  const ctrf = /ctrf/i.test(testText);
  const run = host
    ? [
        ...envPrefix,
        "bash",
        "{EVAL_DIR}/_harbor/in-task.sh",
        workdir,
        ...(ctrf ? [] : ["--reward"]),
        "--",
        "bash",
        "/tests/test.sh",
      ]
    : [...envPrefix, "sh", ".harbor/verify.sh", ...(ctrf ? [] : ["--reward"])];
  const scorer: Record<string, unknown> = ctrf
    ? { type: "tests", run, report: ".harbor/logs/verifier/ctrf.json", report_format: "ctrf" }
    : { type: "script", run };
  const timeout = num(verifier.timeout_sec);
  if (timeout) scorer.timeout = Math.ceil(timeout);
  return scorer;
}

function tagsOf(toml: Toml): string[] {
  const task = (toml.task ?? {}) as Record<string, unknown>;
  const meta = (toml.metadata ?? {}) as Record<string, unknown>;
  return [
    ...(Array.isArray(task.keywords) ? task.keywords.map(String) : []),
    ...(typeof meta.category === "string" ? [`category:${meta.category}`] : []),
    ...(typeof meta.difficulty === "string" ? [`difficulty:${meta.difficulty}`] : []),
  ];
}

/**
 * The test's reference: the task's solve.sh, run in the task's paths. Its solution folder is
 * written out of the script (which evalgate masks from agents) where it can be, else copied beside it.
 */
async function referenceOf(
  dir: string,
  out: string,
  workdir: string,
  host: boolean,
  files: Record<string, OutputFile>,
  notes: string[],
): Promise<string | undefined> {
  if (!existsSync(path.join(dir, "solution", "solve.sh"))) return undefined;
  const written = await solutionWriter(path.join(dir, "solution"));
  const writer = "lines" in written ? written.lines : undefined;
  if (!writer) {
    files[`${out}/solution`] = { copyFrom: path.join(dir, "solution") };
    notes.push(
      `solution/ is copied beside reference.sh (${(written as { why: string }).why}), where an agent that reads the eval file's folder can find it`,
    );
  }
  files[`${out}/reference.sh`] = {
    text: host ? hostReferenceSh(workdir, writer) : referenceSh(writer),
    executable: true,
  };
  return `${out}/reference.sh`;
}

async function convertTask(dir: string, id: string, rawId: string, host: boolean): Promise<ImportedTest> {
  const notes: string[] = [];
  const toml = await readTask(dir, notes);
  const out = `harbor/${id}`;
  const files: Record<string, OutputFile> = {
    [`${out}/instruction.md`]: { copyFrom: path.join(dir, "instruction.md") },
    [`${out}/tests`]: { copyFrom: path.join(dir, "tests") },
  };
  const dockerfile = ["environment/Dockerfile", "Dockerfile"]
    .map((f) => path.join(dir, f))
    .find((f) => existsSync(f));
  const docker = readDockerfile(dockerfile ? await readFile(dockerfile, "utf8") : "");
  const envToml = (toml.environment ?? {}) as Record<string, unknown>;
  const entry: Record<string, unknown> = {
    id,
    ...(id !== rawId ? { description: rawId } : {}),
    instruction_file: `${out}/instruction.md`,
  };
  if (host) {
    if (!dockerfile) notes.push("no environment/Dockerfile: an empty workspace, WORKDIR /app");
    notes.push(...docker.notCarried.map((n) => `Dockerfile ${n}`));
    const limits = Object.keys(envToml).filter((k) => k !== "build_timeout_sec");
    if (limits.length) notes.push(`[environment] ${limits.join(", ")} (container resources)`);
  } else {
    const env = harborEnvironment({
      out,
      ...(dockerfile ? { dockerfile } : {}),
      copies: docker.copies.map((c) => c.from),
      workdir: docker.workdir,
      ...(typeof envToml.docker_image === "string" ? { dockerImage: envToml.docker_image } : {}),
      notes,
    });
    Object.assign(files, env.files);
    if (env.environment) entry.environment = env.environment;
    const resources = harborResources(envToml, notes);
    if (Object.keys(resources).length > 0) entry.resources = resources;
    if (
      existsSync(path.join(dir, "environment", "docker-compose.yaml")) ||
      existsSync(path.join(dir, "environment", "docker-compose.yml"))
    ) {
      notes.push("environment/docker-compose.yaml (a compose environment's other services are not carried)");
    }
  }
  const seeded = await seedFiles(dir, dockerfile, docker, out, files, notes, host);
  const workspace: Record<string, unknown> = {
    seed: seeded ? { path: `${out}/workspace` } : { empty: true },
    verifiers: [
      { from: `${out}/tests`, to: ".harbor/tests" },
      ...(host ? [] : [{ from: "_harbor/verify.sh", to: ".harbor/verify.sh" }]),
    ],
  };
  if (docker.runs.length > 0) {
    const inTask = host ? ["bash", "{EVAL_DIR}/_harbor/in-task.sh", docker.workdir, "--"] : [];
    workspace.setup = { command: [...inTask, "sh", "-ec", docker.runs.join("\n")] };
  }
  const testText = await readFile(path.join(dir, "tests", "test.sh"), "utf8");
  if (host && /\b(apt-get|apk|yum|dnf)\b/.test(testText)) {
    notes.push(
      "tests/test.sh installs system packages, which fails outside the container: install them on the runner",
    );
  }
  const reference = await referenceOf(dir, out, docker.workdir, host, files, notes);
  if (reference) entry.reference = { script: reference };
  else
    notes.push("no solution/solve.sh: no reference, so validate --solvable cannot prove the task solvable");
  const tags = tagsOf(toml);
  if (tags.length) entry.tags = tags;
  const agentTimeout = num(((toml.agent ?? {}) as Record<string, unknown>).timeout_sec);
  if (agentTimeout) entry.timeout = Math.ceil(agentTimeout);
  entry.workspace = workspace;
  entry.scorers = [scorerOf(toml, testText, docker.workdir, host)];
  return { id, entry, files, notes };
}
