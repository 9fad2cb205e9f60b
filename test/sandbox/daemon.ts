/** A daemon-leaving agent for tests of containment, and a way to find its processes. */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Live (non-zombie) processes whose command line holds `tag`, seen from evalgate's namespace. */
export function processesWith(tag: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      if (cmd.includes(tag) && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z") out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * An agent that leaves a daemon: double fork + setsid, environment cleared, stdio closed (or, with
 * `hold`, stdout kept), which after `delay` seconds writes `forged` into `target`. Its command line
 * carries `tag`, so the test can find it whatever its pid namespace.
 */
export function daemonAgent(dir: string, target: string, tag: string, delay = 2, hold = false): string {
  const script = path.join(dir, "daemon-agent.sh");
  writeFileSync(
    script,
    // The agent exits only once the daemon is in its own session (it says so with a marker file):
    // otherwise the agent's exit could come first and the group kill take the daemon-to-be along,
    // and a test of what survives without containment would pass or fail by the scheduler's whim.
    `#!/bin/sh
up=$(mktemp -u /tmp/evalgate-up.XXXXXX)
( env -i setsid /bin/sh -c ': > "$2"; ${hold ? "" : "exec </dev/null >/dev/null 2>&1; "}sleep ${delay}; echo forged > "$1"' "${tag}" "${target}" "$up" & )
i=0
while [ ! -e "$up" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
rm -f "$up"
echo agent done
exit 0
`,
    { mode: 0o755 },
  );
  return script;
}

export const newTag = () => `evalgate-daemon-${randomBytes(4).toString("hex")}`;
