/**
 * What `evalgate import harbor` reads of a task's Dockerfile (WORKDIR, COPY/ADD of task files, RUN
 * steps), and the wrapper that gives a task run on this machine (`--host`) its container's paths.
 */
import path from "node:path";

export const IN_TASK = `#!/usr/bin/env bash
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
# Inside evalgate's own sandbox (setup and scorers run under bubblewrap) a new /proc cannot be
# mounted: the task then shares the sandbox's process view, which is already its own.
proc=(--unshare-pid --proc /proc)
bwrap --unshare-user --unshare-pid --proc /proc --ro-bind / / true 2>/dev/null || proc=(--ro-bind /proc /proc)
args=(--die-with-parent --unshare-user "\${proc[@]}" --unshare-ipc --unshare-uts --dev /dev --tmpfs /tmp)
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

export interface Dockerfile {
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
