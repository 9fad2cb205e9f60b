/**
 * docs/threat-model.md, cell by cell: at each isolation level one run whose agent tries what the
 * level-dependent rows forbid, and leaves code that its scorer runs to try the rest. What it manages
 * must be exactly what the table (src/sandbox/threat-model.ts) says the level leaves open: every
 * "no" is seen happening, every "yes" is seen holding. The level-independent rows have tests of
 * their own (named in docs/threat-model.md): kill -9, git configuration, .gitattributes and the
 * --out lock in levels.test.ts, the report in scorer-sandbox.test.ts, the held run in isolation.test.ts.
 */
import { chmodSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import type { IsolationLevel } from "../../src/sandbox/isolation.js";
import { openRows, THREAT_MODEL } from "../../src/sandbox/threat-model.js";
import { readJsonl, runCliAsync, sh, tempDir, writeFiles } from "../helpers.js";
import { newTag, processesWith } from "../sandbox/daemon.js";

const bwrap = await checkBwrap();
const root = process.getuid?.() === 0;

const PROBE = `import fs from "node:fs";
import net from "node:net";
const env = process.env;
const read = (f) => { try { return fs.readFileSync(f, "utf8"); } catch { return ""; } };
const write = (f) => { try { fs.writeFileSync(f, "pwned"); return true; } catch { return false; } };
const key = read(env.REPO + "/fixes/t.patch").includes("ANSWER-KEY") ? "read" : "hidden";
console.log("answer key: " + key);
console.log("outside: " + (write(env.OUTSIDE + "/" + process.argv[2]) ? "written" : "refused"));
await new Promise((done) => {
  const s = net.connect(Number(env.PORT), "127.0.0.1");
  s.setTimeout(5000, () => { console.log("network: timeout"); s.destroy(); done(); });
  s.on("connect", () => { console.log("network: connected"); s.destroy(); done(); });
  s.on("error", (e) => { console.log("network: " + e.code); done(); });
});
`;

const AGENT = (tag: string) => `#!/bin/sh
cat > probe.mjs <<'EOF'
${PROBE}EOF
node probe.mjs agent
( setsid /bin/sh -c 'sleep 300' ${tag} & )
for d in "$WORK"/baselines/*/tree "$OUT" "$REPO"; do ( echo pwned > "$d/pwned" ) 2>/dev/null; done
cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -q '^EVALGATE_TEST_MARK=evalgate-own' && echo "environ: read"
echo "agent done"
`;

function project(tag: string): string {
  const dir = tempDir("evalgate-threat-");
  const pass = "env_passthrough: [REPO, OUTSIDE, PORT, WORK, OUT]";
  writeFiles(dir, {
    "project/a.txt": "a\n",
    "agents/agent.sh": AGENT(tag),
    "fixes/t.patch": "ANSWER-KEY reference\n",
    "s.eval.yaml": `targets:
  - { name: agent, provider: command, command: ["./agents/agent.sh"], sandbox: { type: auto, network: false }, ${pass} }
workspace: { seed: { path: project } }
tests:
  - id: t
    instruction: x
    reference: fixes/t.patch
    scorers: [{ name: probe, type: command, run: "node probe.mjs scorer", ${pass} }]
`,
  });
  chmodSync(path.join(dir, "agents/agent.sh"), 0o755);
  sh("git init -q -b main . && git add -A && git commit -qm init", dir);
  return dir;
}

const LEVELS: IsolationLevel[] = ["bwrap", "pid-namespace", "subreaper", "none"];
const CHECKED = [
  "survivors",
  "run-files",
  "environ",
  "answer-key-agent",
  "network",
  "answer-key-scorers",
  "scorer-files",
  "commands-network",
];

describe("the threat model, level by level", async () => {
  const server = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  const port = String((server.address() as AddressInfo).port);

  for (const level of LEVELS) {
    const can = level === "bwrap" ? bwrap.ok : level === "pid-namespace" ? root : true;
    it.skipIf(!can)(
      `${level}: the agent and its scorer manage exactly what the table leaves open`,
      async () => {
        const tag = newTag();
        const dir = project(tag);
        const outside = tempDir("evalgate-outside-");
        const out = path.join(dir, "bundle");
        const work = path.join(dir, "work");
        const res = await runCliAsync(
          ["run", "s.eval.yaml", "--out", out, "--work-dir", work, "--keep-workspaces"],
          dir,
          {
            REPO: dir,
            OUTSIDE: outside,
            PORT: port,
            WORK: work,
            OUT: out,
            EVALGATE_TEST_MARK: "evalgate-own",
            ...(level === "bwrap" ? {} : { EVALGATE_ISOLATION: level }),
          },
          300_000,
        );
        const survivors = processesWith(tag);
        for (const pid of survivors) process.kill(pid, "SIGKILL");
        expect(res.code, res.stderr).toBeLessThan(2);
        const row = readJsonl<{ runs: { dir: string }[] }>(path.join(out, "index.jsonl"))[0]!;
        const attempt = path.join(out, row.runs[0]!.dir);
        const agent = readFileSync(path.join(attempt, "agent.log"), "utf8");
        const scorer = readFileSync(path.join(attempt, "scorers", "probe.log"), "utf8");
        expect(agent).toContain("agent done");
        const baselines = path.join(work, "baselines");
        const planted = [
          existsSync(path.join(out, "pwned")),
          existsSync(path.join(dir, "pwned")),
          ...readdirSync(baselines).map((k) => existsSync(path.join(baselines, k, "tree", "pwned"))),
        ];
        // true: the promise held.
        const kept: Record<string, boolean> = {
          survivors: survivors.length === 0,
          "run-files": !planted.includes(true),
          environ: !agent.includes("environ: read"),
          "answer-key-agent": agent.includes("answer key: hidden"),
          network: !agent.includes("network: connected"),
          "answer-key-scorers": scorer.includes("answer key: hidden"),
          "scorer-files": scorer.includes("outside: refused") && !existsSync(path.join(outside, "scorer")),
          "commands-network": !scorer.includes("network: connected"),
        };
        const table = Object.fromEntries(
          THREAT_MODEL.filter((r) => CHECKED.includes(r.id)).map((r) => [r.id, r.keeps[level]]),
        );
        expect(kept, `${agent}\n${scorer}`).toEqual(table);
        // summary.json says which promises the run did not keep, as the console and the comment do.
        const summary = JSON.parse(readFileSync(path.join(out, "summary.json"), "utf8"));
        const open = openRows(level).map((r) => r.open);
        expect(summary.isolation.gaps ?? []).toEqual(open);
        const comment = readFileSync(path.join(out, "comment.md"), "utf8");
        for (const o of open) expect(comment).toContain(o.replace(/\(.*$/, "").trim());
        if (level !== "bwrap") expect(res.stderr + res.stdout).toContain(`isolation: ${level} for agent:`);
      },
      360_000,
    );
  }
});
