/**
 * `evalgate import harbor`: Harbor / Terminal-Bench task folders (task.toml, instruction.md,
 * environment/Dockerfile, tests/test.sh, solution/solve.sh) → tests. The container cannot be built
 * here, so its paths are given back by a generated wrapper (`_harbor/in-task.sh`, bubblewrap):
 * the Dockerfile's WORKDIR is the workspace, /tests the hidden tests, /solution the solution and
 * /logs a folder of the workspace where the verifier writes its reward or CTRF report.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
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

const IN_TASK = `#!/usr/bin/env bash
# Written by \`evalgate import harbor\`. Runs a command of a Harbor task where the paths of its
# container exist, under bubblewrap: WORKDIR (the Dockerfile's) is the current folder (the
# workspace), /tests the hidden tests copied to .harbor/tests, /solution the task's solution and
# /logs the folder .harbor/logs. The rest of the system is this machine's, read-only.
# usage: in-task.sh WORKDIR [--solution DIR] [--reward] -- COMMAND...
#   --reward: afterwards print the verifier's reward (/logs/verifier/reward.txt or reward.json)
#             as score=R, for evalgate's script scorer.
set -uo pipefail
workdir=$1; shift
solution=""; reward=0
while [ $# -gt 0 ]; do
  case $1 in
    --solution) solution=$(cd "$2" && pwd); shift 2 ;;
    --reward) reward=1; shift ;;
    --) shift; break ;;
    *) echo "in-task.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
ws=$(pwd)
if ! command -v bwrap >/dev/null; then
  echo "in-task.sh: bubblewrap (bwrap) gives the task its container paths ($workdir, /tests, /logs): install it (apt-get install bubblewrap)" >&2
  exit 2
fi
mkdir -p "$ws/.harbor/logs/verifier" "$ws/.harbor/logs/agent"
rm -f "$ws/.harbor/logs/verifier/reward.txt" "$ws/.harbor/logs/verifier/reward.json"
top=/\${workdir#/}; top=\${top%%/*}
args=(--die-with-parent --unshare-user --unshare-pid --unshare-ipc --unshare-uts --proc /proc --dev /dev --tmpfs /tmp)
for entry in /*; do
  case $entry in /proc|/dev|/tmp|/tests|/solution|/logs|"$top") continue ;; esac
  if [ -L "$entry" ]; then args+=(--symlink "$(readlink "$entry")" "$entry")
  elif [ -d "$entry" ]; then args+=(--ro-bind "$entry" "$entry"); fi
done
[ -n "\${HOME:-}" ] && [ -d "$HOME" ] && args+=(--bind "$HOME" "$HOME")
args+=(--bind "$ws" "$ws" --bind "$ws" "$workdir" --bind "$ws/.harbor/logs" /logs)
[ -d "$ws/.harbor/tests" ] && args+=(--ro-bind "$ws/.harbor/tests" /tests)
[ -n "$solution" ] && args+=(--ro-bind "$solution" /solution)
bwrap "\${args[@]}" --chdir "$workdir" -- "$@"
status=$?
[ $reward = 1 ] || exit $status
if [ -f "$ws/.harbor/logs/verifier/reward.txt" ]; then
  echo "score=$(tr -d ' \\t\\r\\n' < "$ws/.harbor/logs/verifier/reward.txt")"
elif [ -f "$ws/.harbor/logs/verifier/reward.json" ]; then
  node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const v = typeof r.reward === "number" ? r.reward : Object.values(r).filter((x) => typeof x === "number"); if (Array.isArray(v) && v.length !== 1) { console.error("reward.json has no single reward"); process.exit(1); } console.log("score=" + (Array.isArray(v) ? v[0] : v));' "$ws/.harbor/logs/verifier/reward.json"
else
  echo "the verifier (exit $status) wrote no /logs/verifier/reward.txt or reward.json" >&2
  exit 1
fi
`;

interface Dockerfile {
  workdir: string;
  copies: { from: string; to: string }[];
  runs: string[];
  notCarried: string[];
}

/** What of a Dockerfile can run here: WORKDIR, local COPY/ADD into it, plain-shell RUN steps. */
export function readDockerfile(text: string): Dockerfile {
  const out: Dockerfile = { workdir: "/app", copies: [], runs: [], notCarried: [] };
  const logical = text.replace(/\\\r?\n/g, " ").split(/\r?\n/);
  let sawWorkdir = false;
  for (const raw of logical) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(\w+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, instr, rest] = [m[0], m[1]!.toUpperCase(), m[2]!.trim()];
    if (instr === "WORKDIR") {
      out.workdir = path.posix.resolve(out.workdir, rest);
      sawWorkdir = true;
    } else if (instr === "COPY" || instr === "ADD") {
      const parts = rest.split(/\s+/).filter((p) => !p.startsWith("--"));
      const to = parts.pop() ?? "";
      // A destination ending in / is a folder: Docker copies the file into it.
      const dest = path.posix.resolve(out.workdir, to) + (to.endsWith("/") && to !== "/" ? "/" : "");
      if (rest.includes("--from=") || parts.some((p) => /^https?:/.test(p))) {
        out.notCarried.push(`${instr} ${rest} (not a file of the task)`);
        continue;
      }
      for (const from of parts) out.copies.push({ from, to: dest });
    } else if (instr === "RUN") {
      const cmd = rest.startsWith("[") ? (JSON.parse(rest) as string[]).join(" ") : rest;
      if (/\b(apt-get|apt|apk|yum|dnf|useradd|adduser)\b/.test(cmd)) {
        out.notCarried.push(`RUN ${cmd} (installs system packages or users: prepare the runner instead)`);
      } else out.runs.push(cmd);
    } else if (instr === "FROM") {
      out.notCarried.push(`FROM ${rest} (the image: the commands run on this machine's system)`);
    } else if (instr === "ENV") {
      out.notCarried.push(`ENV ${rest}`);
    } else if (!["CMD", "ENTRYPOINT", "LABEL", "EXPOSE", "ARG", "USER", "SHELL"].includes(instr)) {
      out.notCarried.push(`${instr} ${rest}`);
    }
  }
  if (!sawWorkdir) out.notCarried.push("no WORKDIR: /app assumed");
  return out;
}

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

export async function importHarbor(opts: ImportOptions): Promise<ImportOutcome> {
  const outcome: ImportOutcome = {
    format: "harbor",
    sources: opts.sources,
    tests: [],
    problems: [],
    mapping: [
      ["task folder name (or [task].name)", "test id"],
      ["instruction.md", "instruction_file"],
      [
        "environment/Dockerfile WORKDIR",
        "the path the workspace is given to the task's scripts (_harbor/in-task.sh)",
      ],
      ["Dockerfile COPY/ADD of task files", "the seed folder harbor/<id>/workspace"],
      ["Dockerfile RUN (plain shell)", "workspace.setup.command, run through in-task.sh"],
      ["tests/", "hidden verifier .harbor/tests (the task's /tests), after the agent"],
      [
        "tests/test.sh writing a CTRF report",
        "tests scorer, report .harbor/logs/verifier/ctrf.json (report_format: ctrf)",
      ],
      ["tests/test.sh writing reward.txt / reward.json", "script scorer: score = the reward"],
      [
        "solution/solve.sh",
        "reference: { script: harbor/<id>/reference.sh } (runs solve.sh in the task's paths)",
      ],
      ["[agent].timeout_sec, [verifier].timeout_sec", "test timeout, scorer timeout"],
      ["[task].keywords, [metadata].category, difficulty", "tags"],
    ],
    shared: { "_harbor/in-task.sh": { text: IN_TASK, executable: true } },
    notes: [
      "The task's scripts run under bubblewrap (`_harbor/in-task.sh`), so the runner needs `bwrap` and unprivileged user namespaces (docs/isolation.md).",
      "The agent works in the workspace itself: the instruction's paths under the task's WORKDIR refer to it.",
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
  await convertEach(
    items,
    async (dir, rawId): Promise<ImportedTest> => {
      const notes: string[] = [];
      let toml: Record<string, Record<string, unknown>> = {};
      if (existsSync(path.join(dir, "task.toml"))) {
        try {
          toml = parseToml(await readFile(path.join(dir, "task.toml"), "utf8")) as typeof toml;
        } catch (error) {
          throw new InstanceError(
            `task.toml is not valid TOML: ${(error as Error).message.split("\n")[0]}`,
            "correct task.toml",
          );
        }
      } else notes.push("no task.toml: default timeouts");
      if (!existsSync(path.join(dir, "instruction.md")))
        throw new InstanceError("no instruction.md", "write the task's instruction to instruction.md");
      const testSh = path.join(dir, "tests", "test.sh");
      if (!existsSync(testSh))
        throw new InstanceError("no tests/test.sh", "add the verifier's entry point tests/test.sh");
      const id = testId(rawId, ids);
      const out = `harbor/${id}`;
      const files: Record<string, OutputFile> = {
        [`${out}/instruction.md`]: { copyFrom: path.join(dir, "instruction.md") },
        [`${out}/tests`]: { copyFrom: path.join(dir, "tests") },
      };
      const dockerfile = ["environment/Dockerfile", "Dockerfile"]
        .map((f) => path.join(dir, f))
        .find((f) => existsSync(f));
      const docker = dockerfile ? readDockerfile(await readFile(dockerfile, "utf8")) : readDockerfile("");
      if (!dockerfile) notes.push("no environment/Dockerfile: an empty workspace, WORKDIR /app");
      notes.push(...docker.notCarried.map((n) => `Dockerfile ${n}`));
      const envDir = dockerfile ? path.dirname(dockerfile) : dir;
      let seeded = false;
      for (const c of docker.copies) {
        const rel = path.posix.relative(docker.workdir, c.to.replace(/\/$/, "")) || ".";
        if (rel.startsWith("..") || path.isAbsolute(rel)) {
          notes.push(`Dockerfile COPY ${c.from} ${c.to} (outside WORKDIR ${docker.workdir})`);
          continue;
        }
        const from = path.resolve(envDir, c.from);
        if (!existsSync(from))
          throw new InstanceError(
            `the Dockerfile copies ${c.from}, which is not in ${path.relative(dir, envDir) || "."}`,
            `add ${c.from} to the task's environment folder`,
          );
        const isDir = (await stat(from)).isDirectory();
        const target = !isDir && c.to.endsWith("/") ? path.posix.join(rel, path.basename(c.from)) : rel;
        files[path.posix.join(`${out}/workspace`, target)] = { copyFrom: from };
        seeded = true;
      }
      const inTask = (workdirArgs: string[]) => [
        "bash",
        "{EVAL_DIR}/_harbor/in-task.sh",
        docker.workdir,
        ...workdirArgs,
        "--",
      ];
      const workspace: Record<string, unknown> = {
        seed: seeded ? { path: `${out}/workspace` } : { empty: true },
        verifiers: [{ from: `${out}/tests`, to: ".harbor/tests" }],
      };
      if (docker.runs.length > 0) {
        workspace.setup = { command: [...inTask([]), "sh", "-ec", docker.runs.join("\n")] };
      }
      const verifier = (toml.verifier ?? {}) as Record<string, unknown>;
      const agent = (toml.agent ?? {}) as Record<string, unknown>;
      const envPairs = Object.entries((verifier.env ?? {}) as Record<string, unknown>).map(
        ([k, v]) => `${k}=${String(v)}`,
      );
      const envPrefix = envPairs.length ? ["env", ...envPairs] : [];
      const testText = await readFile(testSh, "utf8");
      if (/\b(apt-get|apk|yum|dnf)\b/.test(testText)) {
        notes.push(
          "tests/test.sh installs system packages, which fails outside the container: install them on the runner",
        );
      }
      const scorerTimeout = num(verifier.timeout_sec);
      const scorer: Record<string, unknown> = /ctrf/i.test(testText)
        ? {
            type: "tests",
            run: [...envPrefix, ...inTask([]), "bash", "/tests/test.sh"],
            report: ".harbor/logs/verifier/ctrf.json",
            report_format: "ctrf",
          }
        : { type: "script", run: [...envPrefix, ...inTask(["--reward"]), "bash", "/tests/test.sh"] };
      if (scorerTimeout) scorer.timeout = Math.ceil(scorerTimeout);
      const entry: Record<string, unknown> = {
        id,
        ...(id !== rawId ? { description: rawId } : {}),
        instruction_file: `${out}/instruction.md`,
      };
      if (existsSync(path.join(dir, "solution", "solve.sh"))) {
        files[`${out}/solution`] = { copyFrom: path.join(dir, "solution") };
        files[`${out}/reference.sh`] = {
          text: `#!/bin/sh\n# Runs the task's solution/solve.sh in the task's paths (written by evalgate import harbor).\nhere=$(cd "$(dirname "$0")" && pwd)\nexec bash "$here/../../_harbor/in-task.sh" ${docker.workdir} --solution "$here/solution" -- bash /solution/solve.sh\n`,
          executable: true,
        };
        entry.reference = { script: `${out}/reference.sh` };
      } else
        notes.push(
          "no solution/solve.sh: no reference, so validate --solvable cannot prove the task solvable",
        );
      const task = (toml.task ?? {}) as Record<string, unknown>;
      const meta = (toml.metadata ?? {}) as Record<string, unknown>;
      const tags = [
        ...(Array.isArray(task.keywords) ? task.keywords.map(String) : []),
        ...(typeof meta.category === "string" ? [`category:${meta.category}`] : []),
        ...(typeof meta.difficulty === "string" ? [`difficulty:${meta.difficulty}`] : []),
      ];
      if (tags.length) entry.tags = tags;
      const agentTimeout = num(agent.timeout_sec);
      if (agentTimeout) entry.timeout = Math.ceil(agentTimeout);
      const envToml = (toml.environment ?? {}) as Record<string, unknown>;
      const limits = Object.keys(envToml).filter((k) => k !== "build_timeout_sec");
      if (limits.length) notes.push(`[environment] ${limits.join(", ")} (container resources)`);
      entry.workspace = workspace;
      entry.scorers = [scorer];
      return { id, entry, files, notes };
    },
    outcome,
  );
  return outcome;
}
