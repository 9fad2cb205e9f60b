/**
 * sandbox: auto (the default), for real: an agent's daemon cannot forge the bundle and is dead when
 * the run ends; a daemon holding the agent's stdout does not hold the run; the agent cannot write
 * the start tree, other attempts, the bundle, the repository or $GITHUB_OUTPUT, nor read evalgate's
 * environment. With isolation forced away, summary.json and the comment say so (and the same agent
 * does all of the above, which shows the checks can fail).
 */
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { runCliAsync, tempDir, writeFiles } from "../helpers.js";
import { newTag, processesWith } from "../sandbox/daemon.js";

const bwrap = await checkBwrap();
if (!bwrap.ok)
  console.warn(`SKIPPED the default-isolation tests: ${bwrap.message} (.ci/run installs bubblewrap)`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A project whose one target runs `agent` (a shell script) with the default sandbox. */
function project(agent: string, opts: { repeat?: number; agentTimeout?: string } = {}): string {
  const dir = tempDir("evalgate-iso-");
  writeFiles(dir, {
    "project/a.txt": "a\n",
    "agents/agent.sh": agent,
    "s.eval.yaml": `name: iso
targets:
  - { name: agent, provider: command, command: ["./agents/agent.sh"] }
repeat: ${opts.repeat ?? 1}
concurrency: 2
timeouts: { agent: ${opts.agentTimeout ?? "60s"} }
gate: { min_case_pass_rate: 1 }
workspace: { seed: { path: project } }
tests:
  - { id: t, instruction: x, scorers: [{ type: file, path: a.txt, contains: never-there }] }
`,
  });
  chmodSync(path.join(dir, "agents/agent.sh"), 0o755);
  return dir;
}

function findNamed(dir: string, name: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => path.basename(f) === name);
}

describe.skipIf(!bwrap.ok)("sandbox: auto", () => {
  for (const level of ["default", "subreaper"] as const) {
    it(`${level}: a double-forked setsid daemon that clears its env and closes stdio cannot forge the bundle, and is dead when the run ends`, async () => {
      const tag = newTag();
      const dir = tempDir("evalgate-iso-");
      const out = path.join(dir, "bundle");
      const forge = `exec </dev/null >/dev/null 2>&1; sleep 3; echo '{"gate":{"verdict":"pass"}}' > "$1/summary.json"; echo "gate passed" > "$1/comment.md"`;
      const p = project(`#!/bin/sh
( env -i setsid /bin/sh -c '${forge}' ${tag} ${out} & )
echo fixed > a.txt
exit 0
`);
      const env = level === "default" ? {} : { EVALGATE_ISOLATION: level };
      const res = await runCliAsync(["run", p, "--out", out], dir, env);
      expect(res.code, res.stderr + res.stdout).toBe(1);
      const before = readFileSync(path.join(out, "summary.json"), "utf8");
      const comment = readFileSync(path.join(out, "comment.md"), "utf8");
      expect(processesWith(tag)).toEqual([]);
      await sleep(4500);
      expect(readFileSync(path.join(out, "summary.json"), "utf8")).toBe(before);
      expect(readFileSync(path.join(out, "comment.md"), "utf8")).toBe(comment);
      const summary = JSON.parse(before);
      expect(summary.gate.verdict).toBe("fail");
      expect(summary.isolation.level).toBe(level === "default" ? "bwrap" : "subreaper");
    });
  }

  for (const level of ["default", "none"] as const) {
    it(`${level}: a daemon holding the agent's stdout does not keep the run past the agent's timeout`, async () => {
      const tag = newTag();
      const p = project(
        `#!/bin/sh
( setsid /bin/sh -c 'sleep 300' ${tag} & )
sleep 300
`,
        { agentTimeout: "3s" },
      );
      const started = Date.now();
      const res = await runCliAsync(["run", p, "--out", path.join(p, "out")], p, {
        ...(level === "none" ? { EVALGATE_ISOLATION: "none" } : {}),
      });
      const elapsed = Date.now() - started;
      const survivors = processesWith(tag);
      for (const pid of survivors) process.kill(pid, "SIGKILL");
      expect(res.code, res.stderr + res.stdout).toBe(1);
      expect(elapsed).toBeLessThan(60_000);
      const row = JSON.parse(readFileSync(path.join(p, "out/index.jsonl"), "utf8").split("\n")[0]!);
      expect(row.verdict).not.toBe("pass");
      if (level === "default") expect(survivors).toEqual([]);
    });
  }

  it("default: setup and scorer commands that leave daemons holding their output neither hold the run nor outlive it", async () => {
    const tag = newTag();
    const daemon = `( setsid /bin/sh -c 'sleep 300' ${tag} & ); echo started`;
    const dir = tempDir("evalgate-iso-");
    writeFiles(dir, {
      "project/a.txt": "a\n",
      "s.eval.yaml": `name: iso
targets: [{ name: ref, provider: reference }]
workspace: { seed: { path: project }, setup: { command: "${daemon}" } }
tests:
  - id: t
    instruction: x
    reference: fix.patch
    scorers: [{ type: command, run: "${daemon}" }]
`,
      "fix.patch": "",
    });
    const started = Date.now();
    const res = await runCliAsync(["run", ".", "--out", "out"], dir);
    const survivors = processesWith(tag);
    for (const pid of survivors) process.kill(pid, "SIGKILL");
    expect([0, 1], res.stderr + res.stdout).toContain(res.code);
    expect(Date.now() - started).toBeLessThan(60_000);
    // Both commands ran and started their daemons, which are gone now.
    const logs = [
      ...findNamed(path.join(dir, "out"), "setup.log"),
      ...findNamed(path.join(dir, "out"), "command.log"),
    ];
    expect(logs.map((f) => readFileSync(path.join(dir, "out", f), "utf8"))).toEqual([
      "started\n",
      "started\n",
    ]);
    expect(survivors).toEqual([]);
  });

  /** An agent that tries to write everything of the run it can find, and to read evalgate's env. */
  function attacker(work: string, out: string, ghOutput: string, repo: string): string {
    return `#!/bin/sh
sleep 1
own=$(dirname "$PWD")
for d in $(find ${work} -type d 2>/dev/null); do
  case "$d" in "$own"|"$own"/*) continue;; esac
  ( echo pwned > "$d/pwned" ) 2>/dev/null && echo "written $d"
done
( echo pwned >> ${ghOutput} ) 2>/dev/null && echo "written GITHUB_OUTPUT"
( echo pwned > ${out}/pwned ) 2>/dev/null && echo "written bundle"
( echo pwned > ${repo}/pwned ) 2>/dev/null && echo "written repository"
cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -q '^EVALGATE_TEST_MARK=evalgate-own' && echo "read evalgate env"
echo probe done
exit 0
`;
  }

  async function attack(env: NodeJS.ProcessEnv) {
    const dir = tempDir("evalgate-iso-");
    const work = path.join(dir, "work");
    const out = path.join(dir, "bundle");
    const ghOutput = path.join(dir, "github_output");
    writeFileSync(ghOutput, "");
    const p = project("", { repeat: 2 });
    writeFileSync(path.join(p, "agents/agent.sh"), attacker(work, out, ghOutput, p));
    const res = await runCliAsync(["run", p, "--out", out, "--work-dir", work, "--keep-workspaces"], dir, {
      GITHUB_OUTPUT: ghOutput,
      EVALGATE_TEST_MARK: "evalgate-own",
      ...env,
    });
    const logs = findNamed(out, "agent.log").map((f) => readFileSync(path.join(out, f), "utf8"));
    return {
      res,
      logs: logs.join("\n"),
      planted: [...findNamed(work, "pwned"), ...findNamed(out, "pwned"), ...findNamed(p, "pwned")],
      ghOutput: readFileSync(ghOutput, "utf8"),
      summary: JSON.parse(readFileSync(path.join(out, "summary.json"), "utf8")),
      comment: readFileSync(path.join(out, "comment.md"), "utf8"),
    };
  }

  it("default: the agent cannot write the start tree, another attempt, the bundle, the repository or $GITHUB_OUTPUT, nor read evalgate's environment", async () => {
    const r = await attack({});
    expect(r.res.code, r.res.stderr + r.res.stdout).toBe(1);
    expect(r.logs.match(/probe done/g)).toHaveLength(2);
    // What the agent believes it wrote went to its private /tmp (these paths lie under /tmp here):
    // the real files are checked below.
    expect(r.logs).not.toContain("written bundle");
    expect(r.logs).not.toContain("written repository");
    expect(r.logs).not.toContain("read evalgate env");
    expect(r.planted).toEqual([]);
    expect(r.ghOutput).toBe("");
    expect(r.summary.isolation).toEqual({
      level: "bwrap",
      reason: null,
      targets: [{ name: "agent", level: "bwrap", reason: null }],
    });
    expect(r.comment).not.toContain("Isolation:");
  });

  it("isolation forced away: summary.json says isolation none and why, the comment and console say so, and the same agent gets through", async () => {
    const r = await attack({ EVALGATE_ISOLATION: "none" });
    expect(r.summary.isolation.level).toBe("none");
    expect(r.summary.isolation.reason).toContain("EVALGATE_ISOLATION=none");
    expect(r.comment).toContain("**Isolation: none**");
    expect(r.comment).toContain("leave processes running");
    expect(r.res.stderr + r.res.stdout).toMatch(
      /isolation: none for agent: .*Why: .*EVALGATE_ISOLATION=none/,
    );
    // What the isolation stops, shown happening without it:
    expect(r.logs).toContain("written GITHUB_OUTPUT");
    expect(r.logs).toContain("written bundle");
    expect(r.logs).toContain("read evalgate env");
    expect(r.planted.length).toBeGreaterThan(0);
  });

  it("bubblewrap missing: auto falls back to the next level and names the reason", async () => {
    const r = await attack({ EVALGATE_BWRAP: "/nonexistent/bwrap" });
    expect(["pid-namespace", "subreaper", "none"]).toContain(r.summary.isolation.level);
    expect(r.summary.isolation.reason).toContain("EVALGATE_BWRAP names /nonexistent/bwrap");
    expect(r.comment).toContain(`**Isolation: ${r.summary.isolation.level}**`);
    if (r.summary.isolation.level === "pid-namespace") expect(r.logs).not.toContain("read evalgate env");
  });
});
