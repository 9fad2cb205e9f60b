/**
 * A scorer's shell line without shell syntax runs as an argv (no `/bin/sh -c` process), with
 * exactly the words the shell would have passed; anything else keeps the shell.
 */
import { execFileSync } from "node:child_process";
import { chmodSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { plainArgv } from "../../src/sandbox/commands.js";
import { withoutShell } from "../../src/scorers/process.js";
import { tempDir, writeFiles } from "../helpers.js";

const dir = tempDir();
writeFiles(dir, {
  "args.sh": '#!/bin/sh\nfor a in "$@"; do echo "[$a]"; done\n',
  "noshebang.sh": "echo hi\n",
  "bin/tool": "#!/bin/sh\necho tool\n",
});
for (const f of ["args.sh", "noshebang.sh", "bin/tool"]) chmodSync(path.join(dir, f), 0o755);
const PATH = `${path.join(dir, "bin")}:/usr/bin:/bin`;

describe("plainArgv", () => {
  it.each([
    ["npm test", ["npm", "test"]],
    ["  pytest -q tests/unit  ", ["pytest", "-q", "tests/unit"]],
    ["./args.sh --k=v a,b @x %y 1:2", ["./args.sh", "--k=v", "a,b", "@x", "%y", "1:2"]],
    ["./args.sh 'two words' 'it''s' x'y z'w", ["./args.sh", "two words", "its", "xy zw"]],
    ["./args.sh ''", ["./args.sh", ""]],
    // {EVAL_DIR}/check.sh, expanded: the path is quoted as a word of its own.
    ["'/evals/my dir/check.sh' -q", ["/evals/my dir/check.sh", "-q"]],
  ])("%s → argv", (line, argv) => {
    expect(plainArgv(line)).toEqual(argv);
    // The shell passes the same words.
    if (line.startsWith("./args.sh")) {
      const said = execFileSync("/bin/sh", ["-c", line], { cwd: dir, encoding: "utf8" });
      expect(said).toBe(
        argv
          .slice(1)
          .map((a) => `[${a}]\n`)
          .join(""),
      );
    }
  });

  it.each([
    "npm test && echo ok",
    "pytest | tee log",
    "echo $HOME",
    "ls *.py",
    "cat < f",
    "run > out",
    "a; b",
    'say "hi"',
    "x\\ y",
    "FOO=1 npm test",
    "cd sub",
    "exit 1",
    "test -f x",
    "~/bin/run",
    "run `id`",
    "a\nb",
    "a\tb",
    "run #comment",
    "run {a,b}",
    "",
  ])("%j keeps the shell", (line) => {
    expect(plainArgv(line)).toBeUndefined();
  });
});

describe("withoutShell", () => {
  it("runs a found program with #! or ELF directly", async () => {
    expect(await withoutShell({ shell: "./args.sh a 'b c'" }, dir, PATH)).toEqual({
      argv: ["./args.sh", "a", "b c"],
    });
    expect(await withoutShell({ shell: "tool x" }, dir, PATH)).toEqual({ argv: ["tool", "x"] });
    expect(await withoutShell({ shell: "ls -a" }, dir, PATH)).toEqual({ argv: ["ls", "-a"] });
  });

  it("keeps the shell for a script without #!, a missing program, or shell syntax", async () => {
    for (const shell of ["./noshebang.sh", "./missing.sh", "no-such-program-x", "ls | wc -l"]) {
      expect(await withoutShell({ shell }, dir, PATH)).toEqual({ shell });
    }
  });

  it("leaves an argv as it is", async () => {
    expect(await withoutShell({ argv: ["a", "b c"] }, dir, PATH)).toEqual({ argv: ["a", "b c"] });
  });
});
