/**
 * The sandbox explains itself (issue 29, point 3), with real bubblewrap: a pyenv-style shim on PATH
 * that execs its manager under a fake `~/.pyenv` works (the manager's root is shown read-only), and
 * a program reached through a link out of what the sandbox shows fails with a message that says
 * the sandbox may have caused it, names the path and gives the fix.
 */
import { readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";

const check = await checkBwrap();
if (!check.ok) console.warn(`SKIPPED the sandbox explanation tests: ${check.message}`);

interface Row {
  verdict: string;
  runs: { status: string; failure_kind: string | null; result_path: string }[];
}

function evalFile(dir: string, agentLine: string, sandbox: string): void {
  writeFiles(dir, {
    "app/answer.txt": "wrong\n",
    "a.eval.yaml": `name: shims
targets: [{ name: bot, provider: command, command: ["sh", "-c", "${agentLine}"], sandbox: ${sandbox} }]
workspace: { seed: { path: app } }
tests:
  - { id: answer, instruction: "write right", scorers: [{ type: file, path: answer.txt, contains: right }] }
`,
  });
}

describe.skipIf(!check.ok)("the sandbox and programs reached through shims and links", () => {
  it("a pyenv-style shim that execs a hidden manager works under bubblewrap", () => {
    // before: the shims folder was shown (it is on PATH), ~/.pyenv/libexec was not: exit 127.
    const dir = tempDir();
    const root = path.join(dir, "home/.pyenv");
    writeFiles(root, {
      "shims/python3": `#!/bin/sh\nexport PYENV_ROOT="${root}"\nexec "${root}/libexec/pyenv" exec "python3" "$@"\n`,
      "libexec/pyenv": `#!/bin/sh\nshift\nprog="$1"; shift\nexec "$PYENV_ROOT/versions/3.12.0/bin/$prog" "$@"\n`,
      "versions/3.12.0/bin/python3": "#!/bin/sh\necho right\n",
    });
    sh("chmod +x shims/python3 libexec/pyenv versions/3.12.0/bin/python3", root);
    evalFile(dir, "python3 > answer.txt", "bwrap");
    const r = runCli(["run", "--out", "b"], dir, { PATH: `${root}/shims:${process.env.PATH}` });
    const row = readJsonl<Row>(path.join(dir, "b/index.jsonl"))[0]!;
    expect(row.verdict, r.stdout + r.stderr).toBe("pass");
  });

  it("a program linked out of what the sandbox shows fails naming the path and the fix", () => {
    // before: "the agent exited with status 127: sh: 1: tool: not found", no word of the sandbox.
    const dir = tempDir();
    writeFiles(dir, { "opt/tool/bin/tool": "#!/bin/sh\necho right\n" });
    sh("chmod +x opt/tool/bin/tool && mkdir bin", dir);
    symlinkSync(path.join(dir, "opt/tool/bin/tool"), path.join(dir, "bin/tool"));
    evalFile(dir, "tool > answer.txt", "bwrap");
    const r = runCli(["run", "--out", "b"], dir, { PATH: `${dir}/bin:${process.env.PATH}` });
    const row = readJsonl<Row>(path.join(dir, "b/index.jsonl"))[0]!;
    expect(row.runs[0]!.failure_kind).toBe("agent_exit");
    const real = path.join(dir, "opt/tool/bin");
    const result = readFileSync(path.join(dir, "b", row.runs[0]!.result_path), "utf8");
    expect(r.stdout).toContain(
      "the agent exited with status 127: evalgate: the sandbox may have caused this",
    );
    expect(JSON.parse(result).message).toContain(
      `the sandbox may have caused this: ${real}/tool (${dir}/bin/tool is a link to it) exists on this machine but is not shown inside the sandbox; fix: add ${real} to the target's \`sandbox: { read_only: [...] }\``,
    );
    // The fix works: the folder listed in read_only, the same agent passes.
    evalFile(dir, "tool > answer.txt", `{ type: bwrap, read_only: [opt/tool/bin] }`);
    runCli(["run", "--out", "c"], dir, { PATH: `${dir}/bin:${process.env.PATH}` });
    expect(readJsonl<Row>(path.join(dir, "c/index.jsonl"))[0]!.verdict).toBe("pass");
  });
});
