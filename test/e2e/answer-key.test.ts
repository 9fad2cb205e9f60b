/**
 * The answer key is never in the agent's view (issue 26, point 3), nor in the view of the code the
 * scorers run for it (point 2), under the default isolation. The agent greps everything it can read,
 * and every repository's history it can find, for markers planted in the verifiers and references;
 * the code it leaves in its workspace does the same when a scorer runs it. Layouts, attacker first:
 *
 * - the eval file at the repository root, an earlier bundle under `.evalgate/results/`, a passed-
 *   through credentials file at the checkout root, `--work-dir .` (another attempt's installed
 *   verifier in the run's work folder). Before (checked by hand on the previous commit): the agent
 *   of test two found both references and both verifiers in the repository's `.git`, the old
 *   bundle's diff, and test one's installed verifier under the run's work folder; the scorers ran
 *   unsandboxed, with the whole machine in view;
 * - `evalgate init`'s layout with a credentials file at the checkout root. Before: init seeded the
 *   whole repository, so `evals/` with its reference patch was in every workspace (and in the
 *   workspace's `.git`), and the credentials file mounted the checkout with its `.git`; a verifier
 *   anywhere in that layout was refused by validate, with a hint naming where it already was.
 *
 * A scorer sees its own test's verifiers (they are in the workspace by design), nothing else.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { readJsonl, runCli, runCliAsync, sh, tempDir, writeFiles } from "../helpers.js";

const bwrap = await checkBwrap();
if (!bwrap.ok) console.warn(`SKIPPED the answer-key tests: ${bwrap.message} (.ci/run installs bubblewrap)`);

/** The probe: prints "FOUND <where>: <marker>" for every marker it can read, then "probe done". */
const PROBE = `#!/bin/sh
skip='-path /proc -o -path /sys -o -path /dev -o -path /usr -o -path /etc'
find / \\( $skip \\) -prune -o -type f -print 2>/dev/null | while IFS= read -r f; do
  grep -Io 'A[N]SWER-KEY [a-z-]*' "$f" 2>/dev/null | sed "s|^|FOUND $f: |"
done
find / \\( $skip \\) -prune -o -name .git -print 2>/dev/null | while IFS= read -r g; do
  git --git-dir="$g" log --all -p 2>/dev/null | grep -o 'A[N]SWER-KEY [a-z-]*' | sed "s|^|FOUND git $g: |"
done
echo "probe done"
`;

/** The agent: probes, then leaves the same probe in its workspace for the scorers to run. */
const AGENT = `#!/bin/sh
cat > probe.sh <<'EOF'
${PROBE}EOF
sh probe.sh
echo "creds: $(cat "$CREDS" 2>&1)"
`;

const markers = (text: string) =>
  [...text.matchAll(/^FOUND .*: (ANSWER-KEY [a-z-]+)$/gm)].map((m) => m[1]!).sort();

interface Row {
  test_id: string;
  runs: { dir: string }[];
}

function logs(out: string, id: string) {
  const row = readJsonl<Row>(path.join(out, "index.jsonl")).find((r) => r.test_id === id)!;
  const attempt = path.join(out, row.runs[0]!.dir);
  return {
    agent: readFileSync(path.join(attempt, "agent.log"), "utf8"),
    scorer: readFileSync(path.join(attempt, "scorers", "probe.log"), "utf8"),
  };
}

// The runner's own PATH holds nothing of these tests; a short one keeps the probe's walk short.
const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin" };

describe.skipIf(!bwrap.ok)("the answer key, from inside the agent and from inside a scorer", () => {
  it("eval file at the repository root, an earlier bundle, a credentials file, --work-dir .", async () => {
    const repo = tempDir("evalgate-key-");
    const test = (id: string) => `  - id: ${id}
    instruction: x
    reference: fixes/${id}.patch
    workspace: { verifiers: [{ from: verifiers/${id}, to: checks }] }
    scorers: [{ name: probe, type: command, run: "sh probe.sh" }]
`;
    writeFiles(repo, {
      "s.eval.yaml": `targets:
  - { name: agent, provider: command, command: ["./agents/agent.sh"], env_passthrough: [CREDS] }
concurrency: 1
workspace: { seed: { path: project } }
tests:
${test("one")}${test("two")}`,
      "agents/agent.sh": AGENT,
      "project/app.txt": "app\n",
      "verifiers/one/check.sh": "# ANSWER-KEY verifier-one\n",
      "verifiers/two/check.sh": "# ANSWER-KEY verifier-two\n",
      "fixes/one.patch": "ANSWER-KEY reference-one\n",
      "fixes/two.patch": "ANSWER-KEY reference-two\n",
      "creds.json": '{"token": "not a key"}\n',
      ".evalgate/results/old/t--agent/run-1/diff.patch": "+ANSWER-KEY old-bundle\n",
    });
    chmodSync(path.join(repo, "agents/agent.sh"), 0o755);
    sh("git init -q -b main . && git add -A && git commit -qm init", repo);
    const out = path.join(repo, "out");
    const res = await runCliAsync(
      ["run", "s.eval.yaml", "--out", out, "--work-dir", ".", "--keep-workspaces"],
      repo,
      { ...ENV, CREDS: path.join(repo, "creds.json") },
      300_000,
    );
    expect(res.code, res.stderr).toBeLessThan(2);
    for (const id of ["one", "two"]) {
      const { agent, scorer } = logs(out, id);
      expect(agent).toContain("probe done");
      expect(agent).toContain('creds: {"token": "not a key"}');
      expect(markers(agent), agent).toEqual([]);
      expect(scorer).toContain("probe done");
      // Its own verifier, installed in the workspace (and beside the eval file), and nothing else.
      expect(new Set(markers(scorer)), scorer).toEqual(new Set([`ANSWER-KEY verifier-${id}`]));
    }
  }, 360_000);

  it("evalgate init's layout, with a credentials file at the checkout root", async () => {
    const repo = tempDir("evalgate-key-");
    writeFiles(repo, {
      "package.json": '{"name": "tiny", "scripts": {"test": "true"}}\n',
      "index.js": "module.exports = 1;\n",
      "creds.json": '{"token": "not a key"}\n',
    });
    sh("git init -q -b main . && git add -A && git commit -qm init", repo);
    expect(runCli(["init", "--agent", "command"], repo).code).toBe(0);
    const file = path.join(repo, "evals/starter.eval.yaml");
    const suite = parse(readFileSync(file, "utf8"));
    suite.targets = [
      { name: "agent", provider: "command", command: ["./agent.sh"], env_passthrough: ["CREDS"] },
    ];
    delete suite.workspace.setup;
    suite.workspace.verifiers = [{ from: "verifiers/one", to: "checks" }];
    suite.tests[0].scorers = [{ name: "probe", type: "command", run: "sh probe.sh" }];
    writeFileSync(file, stringify(suite));
    writeFiles(repo, {
      "evals/agent.sh": AGENT,
      "evals/starter/fix.patch": "ANSWER-KEY reference-one\n",
      "evals/verifiers/one/check.sh": "# ANSWER-KEY verifier-one\n",
    });
    chmodSync(path.join(repo, "evals/agent.sh"), 0o755);
    sh("git add -A && git commit -qm evals", repo);
    const out = path.join(repo, "out");
    const res = await runCliAsync(
      ["run", "evals/", "--out", out],
      repo,
      { ...ENV, CREDS: path.join(repo, "creds.json") },
      300_000,
    );
    expect(res.code, res.stderr).toBeLessThan(2);
    const { agent, scorer } = logs(out, "example");
    expect(agent).toContain("probe done");
    expect(agent).toContain('creds: {"token": "not a key"}');
    expect(markers(agent), agent).toEqual([]);
    expect(scorer).toContain("probe done");
    expect(new Set(markers(scorer)), scorer).toEqual(new Set(["ANSWER-KEY verifier-one"]));
  }, 360_000);

  // A reference script reads what it applies from beside itself. Before: only the script was
  // masked, so the agent (and the code it left, run by the scorer) read solution/fix.txt. The
  // control: the reference still passes in `validate --solvable`, reading its folder.
  it("a reference script's own folder, with the files the script reads", async () => {
    const repo = tempDir("evalgate-key-");
    writeFiles(repo, {
      "s.eval.yaml": `targets: [{ name: agent, provider: command, command: ["./agents/agent.sh"] }]
concurrency: 1
workspace: { seed: { path: project } }
tests:
  - id: one
    instruction: x
    reference: { script: solution/solve.sh }
    scorers: [{ name: probe, type: command, run: "if [ -f probe.sh ]; then sh probe.sh; fi; grep -q solved answer.txt" }]
`,
      "agents/agent.sh": AGENT,
      "project/app.txt": "app\n",
      "solution/solve.sh": '#!/bin/sh\ncat "$(dirname "$0")/fix.txt" > answer.txt\n',
      "solution/fix.txt": "solved: ANSWER-KEY reference-data\n",
    });
    for (const f of ["agents/agent.sh", "solution/solve.sh"]) chmodSync(path.join(repo, f), 0o755);
    const out = path.join(repo, "out");
    const res = await runCliAsync(["run", "s.eval.yaml", "--out", out], repo, ENV, 300_000);
    expect(res.code, res.stderr).toBeLessThan(2);
    const { agent, scorer } = logs(out, "one");
    expect(agent).toContain("probe done");
    expect(markers(agent), agent).toEqual([]);
    expect(scorer).toContain("probe done");
    expect(markers(scorer), scorer).toEqual([]);
    const solvable = await runCliAsync(["validate", "--solvable", "s.eval.yaml"], repo, ENV, 300_000);
    expect(solvable.code, solvable.stdout + solvable.stderr).toBe(0);
  }, 360_000);
});
