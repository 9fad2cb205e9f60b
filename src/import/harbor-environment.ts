/**
 * `evalgate import harbor` keeping the task's container (the default; `--host` for the older
 * mapping onto this machine under bubblewrap): the task's Dockerfile is built (or its
 * `docker_image` pulled) as the test's `environment:`, with WORKDIR as the workspace's mount point,
 * the task's [environment] resources, and the verifier run inside the container, where
 * `.harbor/verify.sh` gives it the paths Harbor's scripts use (/tests, /logs, /solution).
 */
import path from "node:path";
import type { OutputFile } from "./write.js";

/** Run inside the task's container, at the workspace (WORKDIR): the verifier with Harbor's paths. */
export const VERIFY_SH = `#!/bin/sh
# Written by \`evalgate import harbor\`. Runs the task's verifier inside its container: /tests is
# the hidden tests (copied to .harbor/tests after the agent), /logs the folder .harbor/logs of the
# workspace. usage: sh .harbor/verify.sh [--reward]
#   --reward: afterwards print the verifier's reward (/logs/verifier/reward.txt or reward.json) as
#             score=R, for evalgate's script scorer.
ws=$(pwd)
mkdir -p "$ws/.harbor/logs/verifier" "$ws/.harbor/logs/agent"
rm -f "$ws/.harbor/logs/verifier/reward.txt" "$ws/.harbor/logs/verifier/reward.json"
for p in tests logs; do
  rm -rf "/$p" 2>/dev/null
  ln -s "$ws/.harbor/$p" "/$p" || { echo "verify.sh: cannot make /$p (the container does not run as root)" >&2; exit 2; }
done
if command -v bash >/dev/null 2>&1; then bash /tests/test.sh; else sh /tests/test.sh; fi
status=$?
[ "$1" = --reward ] || exit $status
if [ -f /logs/verifier/reward.txt ]; then
  echo "score=$(tr -d ' \\t\\r\\n' < /logs/verifier/reward.txt)"
elif [ -f /logs/verifier/reward.json ]; then
  r=$(tr -d '\\n' < /logs/verifier/reward.json | sed -n 's/.*"reward"[[:space:]]*:[[:space:]]*\\([-0-9.eE+]*\\).*/\\1/p')
  if [ -z "$r" ]; then echo "reward.json has no \\"reward\\" number" >&2; exit 1; fi
  echo "score=$r"
else
  echo "the verifier (exit $status) wrote no /logs/verifier/reward.txt or reward.json" >&2
  exit 1
fi
`;

/**
 * The task's solution, run inside its container: /solution is the solution folder, written out of
 * this script into its TMPDIR (`writer`), else the folder `solution` beside the script.
 */
export function referenceSh(writer?: string): string {
  const solution = writer
    ? `sol="\${TMPDIR:-/tmp}/evalgate-solution-$$"
rm -rf "$sol" && mkdir -p "$sol" || exit 2
${writer}
`
    : `sol="$(cd "$(dirname "$0")" && pwd)/solution"
`;
  return `#!/bin/sh
# Written by \`evalgate import harbor\`: runs the task's solution/solve.sh inside its container, with
# /solution the task's solution and /logs the workspace's .harbor/logs.
${solution}mkdir -p .harbor/logs/agent
rm -rf /solution /logs 2>/dev/null
ln -s "$sol" /solution && ln -s "$PWD/.harbor/logs" /logs || { echo "reference.sh: cannot make /solution (the container does not run as root)" >&2; exit 2; }
if command -v bash >/dev/null 2>&1; then exec bash /solution/solve.sh; else exec sh /solution/solve.sh; fi
`;
}

/** The task's solution run on this machine, in the task's paths (`evalgate import harbor --host`). */
export function hostReferenceSh(workdir: string, writer?: string): string {
  const solution = writer
    ? `sol="\${TMPDIR:-/tmp}/evalgate-solution-$$"
rm -rf "$sol" && mkdir -p "$sol" || exit 2
${writer}
`
    : `sol="$here/solution"
`;
  return `#!/bin/sh
# Runs the task's solution/solve.sh in the task's paths (written by evalgate import harbor).
here=$(cd "$(dirname "$0")" && pwd)
${solution}exec bash "$here/../../_harbor/in-task.sh" ${workdir} --solution "$sol" -- bash /solution/solve.sh
`;
}

/** A Harbor size ("4G", "512M", or a number in the key's unit) as an eval file's size. */
export function harborSize(value: unknown, unitIfNumber: "MiB"): string | undefined {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return `${value}${unitIfNumber}`;
  if (typeof value !== "string") return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT])i?B?\s*$/i.exec(value);
  if (!m) return undefined;
  // Docker's and Harbor's K, M, G are binary units; an eval file's largest unit is GiB.
  const unit = m[2]!.toUpperCase();
  return unit === "T" ? `${Number(m[1]) * 1024}GiB` : `${m[1]}${unit}iB`;
}

/** `resources:` from a task.toml's [environment]: cpus, memory(_mb), storage(_mb). */
export function harborResources(env: Record<string, unknown>, notes: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof env.cpus === "number" && env.cpus > 0) out.cpus = env.cpus;
  const memory = harborSize(env.memory_mb, "MiB") ?? harborSize(env.memory, "MiB");
  if (memory) out.memory = memory;
  const disk = harborSize(env.storage_mb, "MiB") ?? harborSize(env.storage, "MiB");
  if (disk) out.disk = disk;
  for (const k of ["gpus", "gpu_types", "tpu"])
    if (env[k] !== undefined) notes.push(`[environment] ${k} (accelerators are not carried)`);
  if (env.allow_internet === false) {
    notes.push(
      "[environment] allow_internet = false: give the target sandbox.network: false, or { allow: [its model's API host] } (evalgate sets the network per target, not per test)",
    );
  }
  return out;
}

export interface HarborEnvironment {
  /** The test's `environment:`. */
  environment?: Record<string, unknown>;
  /** Files to write: the task's environment folder, the scripts. */
  files: Record<string, OutputFile>;
}

/**
 * The test's environment: the task's Dockerfile (its folder copied as the build context), else
 * task.toml's `docker_image`. A compose file is not carried.
 */
export function harborEnvironment(opts: {
  out: string;
  dockerfile?: string;
  /** The files the Dockerfile copies (relative to its folder): the build context of a root Dockerfile. */
  copies: string[];
  workdir: string;
  dockerImage?: string;
  notes: string[];
}): HarborEnvironment {
  const files: Record<string, OutputFile> = {};
  const context = `${opts.out}/environment`;
  if (opts.dockerfile) {
    const envDir = path.dirname(opts.dockerfile);
    if (path.basename(envDir) === "environment") files[context] = { copyFrom: envDir };
    else {
      // A Dockerfile at the task's root: its context is the task, tests and solution included, so
      // only what it copies goes into the context evalgate builds.
      files[`${context}/${path.basename(opts.dockerfile)}`] = { copyFrom: opts.dockerfile };
      for (const c of opts.copies) files[path.posix.join(context, c)] = { copyFrom: path.resolve(envDir, c) };
    }
    return {
      environment: {
        build: { dockerfile: `${context}/${path.basename(opts.dockerfile)}`, context },
        workdir: opts.workdir,
      },
      files,
    };
  }
  if (opts.dockerImage) return { environment: { image: opts.dockerImage, workdir: opts.workdir }, files };
  opts.notes.push("no environment/Dockerfile and no docker_image: runs on the runner's own system");
  return { files };
}
