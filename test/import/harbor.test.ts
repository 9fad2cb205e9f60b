/**
 * `evalgate import harbor` through the real CLI: Harbor task folders written in the test (task.toml,
 * instruction.md, environment/Dockerfile, tests/test.sh writing a reward file or a CTRF report,
 * solution/solve.sh); the imported suite must pass `validate --solvable`.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runCli, tempDir, writeFiles } from "../helpers.js";

const DOCKERFILE = `FROM python:3.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends curl
WORKDIR /app
COPY src/ /app/
COPY data.txt ./data/
RUN echo "built" > /app/.built && \\
    chmod 644 /app/data/data.txt
`;

function tasks(dir: string): void {
  writeFiles(dir, {
    // A reward-file verifier that checks files at the container's paths.
    "tasks/greet/task.toml": `version = "1.0"\n\n[task]\nname = "acme/greet"\nkeywords = ["shell", "easy"]\n\n[metadata]\ncategory = "programming"\ndifficulty = "easy"\n\n[verifier]\ntimeout_sec = 120.0\n\n[agent]\ntimeout_sec = 600.0\n\n[environment]\ncpus = 1\nmemory_mb = 2048\n`,
    "tasks/greet/instruction.md": 'Fix /app/greet.sh so that it prints "hello, world".\n',
    "tasks/greet/environment/Dockerfile": DOCKERFILE,
    "tasks/greet/environment/src/greet.sh": '#!/bin/sh\necho "hello, wrld"\n',
    "tasks/greet/environment/data.txt": "42\n",
    "tasks/greet/tests/test.sh": `#!/bin/bash\ncd /app\nif [ "$(sh /app/greet.sh)" = "hello, world" ] && [ -f /app/.built ] && [ "$(cat /app/data/data.txt)" = 42 ]; then\n  echo 1 > /logs/verifier/reward.txt\nelse\n  echo 0 > /logs/verifier/reward.txt\nfi\n`,
    "tasks/greet/solution/solve.sh": "#!/bin/bash\nset -e\nsed -i 's/wrld/world/' /app/greet.sh\n",
    // A verifier that writes a CTRF report, as Harbor's pytest template does with pytest-json-ctrf.
    "tasks/sum/task.toml": `version = "1.0"\n[verifier]\ntimeout_sec = 60\n`,
    "tasks/sum/instruction.md": "Write /app/sum.py so that `python3 /app/sum.py 2 3` prints 5.\n",
    "tasks/sum/environment/Dockerfile": "FROM python:3.12\nWORKDIR /app\n",
    "tasks/sum/tests/test.sh": "#!/bin/bash\npython3 /tests/check.py /logs/verifier/ctrf.json\n",
    "tasks/sum/tests/check.py": `import json, subprocess, sys

def run(args):
    try:
        return subprocess.run(["python3", "/app/sum.py", *args], capture_output=True, text=True).stdout.strip()
    except Exception as e:
        return str(e)

tests = []
for name, args, want in [("test_small", ["2", "3"], "5"), ("test_negative", ["-2", "1"], "-1")]:
    got = run(args)
    ok = got == want
    tests.append({"name": "tests/test_outputs.py::" + name, "status": "passed" if ok else "failed",
                  "duration": 1, **({} if ok else {"message": f"expected {want}, got {got!r}"})})
json.dump({"reportFormat": "CTRF", "specVersion": "0.0.0", "results": {"tool": {"name": "pytest"},
           "summary": {"tests": len(tests)}, "tests": tests}}, open(sys.argv[1], "w"))
`,
    "tasks/sum/solution/solve.sh": `#!/bin/bash\ncat > /app/sum.py <<'PY'\nimport sys\nprint(sum(int(a) for a in sys.argv[1:]))\nPY\n`,
    // Broken tasks: each is reported, the rest imports.
    "tasks/no-verifier/task.toml": 'version = "1.0"\n',
    "tasks/no-verifier/instruction.md": "Do something.\n",
    "tasks/bad-toml/task.toml": "version = \n",
    "tasks/bad-toml/instruction.md": "x\n",
    "tasks/bad-toml/tests/test.sh": "exit 0\n",
    "tasks/missing-copy/instruction.md": "x\n",
    "tasks/missing-copy/tests/test.sh": "exit 0\n",
    "tasks/missing-copy/environment/Dockerfile": "FROM x\nWORKDIR /app\nCOPY app.py /app/app.py\n",
  });
}

describe("evalgate import harbor", () => {
  it("imports task folders that pass validate --solvable, reporting broken tasks and what it could not carry", () => {
    const dir = tempDir();
    tasks(dir);
    const r = runCli(["import", "harbor", "tasks", "--out", "suite", "--host"], dir);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain("imported 2 tests into suite/harbor.eval.yaml, skipped 3");
    expect(r.stderr).toContain(
      "skipped no-verifier (tasks/no-verifier): no tests/test.sh. Fix: add the verifier's entry point tests/test.sh",
    );
    expect(r.stderr).toContain("skipped bad-toml (tasks/bad-toml): task.toml is not valid TOML");
    expect(r.stderr).toContain(
      "skipped missing-copy (tasks/missing-copy): the Dockerfile copies app.py, which is not in environment",
    );

    const yaml = readFileSync(path.join(dir, "suite/harbor.eval.yaml"), "utf8");
    expect(yaml).toContain("script: harbor/greet/reference.sh");
    expect(yaml).toContain("report_format: ctrf");
    expect(yaml).toContain("timeout: 600");
    const md = readFileSync(path.join(dir, "suite/IMPORT.md"), "utf8");
    expect(md).toContain("Dockerfile FROM python:3.12-slim");
    expect(md).toContain(
      "Dockerfile RUN apt-get update && apt-get install -y --no-install-recommends curl (installs system packages",
    );
    expect(md).toContain("[environment] cpus, memory_mb (container resources)");

    const s = runCli(["validate", "--solvable", "suite", "--json"], dir);
    expect(s.code, s.stdout + s.stderr).toBe(0);
    const report = JSON.parse(s.stdout) as { results: unknown[] };
    expect(report.results).toMatchObject([
      { test_id: "greet", reference: { passed: 1 }, noop: { passed: 0 } },
      { test_id: "sum", reference: { passed: 1 }, noop: { passed: 0 } },
    ]);
  });

  it("keeps each task's container by default: its Dockerfile, WORKDIR, resources and a verifier run inside it", () => {
    // before: FROM and the package installs were dropped ("not carried") and the task ran on the runner.
    const dir = tempDir();
    tasks(dir);
    expect(runCli(["import", "harbor", "tasks/greet", "tasks/sum", "--out", "suite"], dir).code).toBe(0);
    const file = parse(readFileSync(path.join(dir, "suite/harbor.eval.yaml"), "utf8")) as {
      tests: Record<string, unknown>[];
    };
    const [greet, sum] = file.tests;
    expect(greet).toMatchObject({
      environment: {
        build: { dockerfile: "harbor/greet/environment/Dockerfile", context: "harbor/greet/environment" },
        workdir: "/app",
      },
      resources: { cpus: 1, memory: "2048MiB" },
      workspace: {
        seed: { path: "harbor/greet/workspace" },
        setup: {
          command: ["sh", "-ec", expect.stringMatching(/^echo "built" > \/app\/\.built && +chmod 644/)],
        },
        verifiers: [
          { from: "harbor/greet/tests", to: ".harbor/tests" },
          { from: "_harbor/verify.sh", to: ".harbor/verify.sh" },
        ],
      },
      scorers: [{ type: "script", run: ["sh", ".harbor/verify.sh", "--reward"], timeout: 120 }],
      reference: { script: "harbor/greet/reference.sh" },
    });
    expect(sum).toMatchObject({
      scorers: [{ type: "tests", run: ["sh", ".harbor/verify.sh"], report_format: "ctrf" }],
    });
    // The build context is the task's environment folder, as Harbor builds it.
    expect(existsSync(path.join(dir, "suite/harbor/greet/environment/src/greet.sh"))).toBe(true);
    const md = readFileSync(path.join(dir, "suite/IMPORT.md"), "utf8");
    expect(md).not.toContain("Dockerfile FROM");
    expect(md).toContain("environment: build");
    const v = runCli(["validate", "suite"], dir, { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` });
    // An engine on this machine makes it valid; without one, each test is named.
    if (v.code !== 0)
      expect(v.stderr).toMatch(/test "greet" runs in an environment .* but no container engine/);
  });

  it("an agent that plants a reward file and its own verifier still fails", () => {
    const dir = tempDir();
    tasks(dir);
    expect(runCli(["import", "harbor", "tasks/greet", "--out", "suite", "--host"], dir).code).toBe(0);
    writeFiles(dir, {
      "agent.sh":
        "#!/bin/sh\nmkdir -p .harbor/logs/verifier .harbor/tests\necho 1 > .harbor/logs/verifier/reward.txt\nprintf 'echo 1 > /logs/verifier/reward.txt\\n' > .harbor/tests/test.sh\n",
    });
    const evalFile = path.join(dir, "suite/harbor.eval.yaml");
    writeFiles(dir, {
      "suite/harbor.eval.yaml": readFileSync(evalFile, "utf8").replace(
        "  - name: noop\n    provider: noop",
        `  - name: agent\n    provider: command\n    command: ["sh", "${path.join(dir, "agent.sh")}"]`,
      ),
    });
    const run = runCli(["run", "suite", "--out", "b"], dir);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout + run.stderr).toContain("script: score 0 (passes at 1)");
  });

  it("grades a partial CTRF result by its failing test, and a missing reference script is a config error", () => {
    const dir = tempDir();
    tasks(dir);
    expect(runCli(["import", "harbor", "tasks/sum", "--out", "suite", "--host"], dir).code).toBe(0);
    // An agent that handles positive numbers only.
    writeFiles(dir, {
      "agent.sh": `#!/bin/sh\nprintf 'import sys\\nprint(abs(sum(int(a) for a in sys.argv[1:])))\\n' > sum.py\n`,
    });
    const evalFile = path.join(dir, "suite/harbor.eval.yaml");
    const text = readFileSync(evalFile, "utf8");
    writeFiles(dir, {
      "suite/harbor.eval.yaml": text.replace(
        "  - name: noop\n    provider: noop",
        `  - name: agent\n    provider: command\n    command: ["sh", "${path.join(dir, "agent.sh")}"]`,
      ),
    });
    const run = runCli(["run", "suite", "--out", "b"], dir);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout + run.stderr).toContain(
      "1 of 2 tests failed: tests/test_outputs.py::test_negative (expected -1, got '1')",
    );

    writeFiles(dir, {
      "suite/harbor.eval.yaml": text.replace("script: harbor/sum/reference.sh", "script: harbor/sum/gone.sh"),
    });
    const bad = runCli(["validate", "suite"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "tests[0].reference.script: reference script suite/harbor/sum/gone.sh does not exist",
    );
  });
});

describe("evalgate import --out", () => {
  it("refuses a folder that is not empty, as run --out does; an empty one is fine", () => {
    const dir = tempDir();
    tasks(dir);
    writeFiles(dir, { "suite/keep.txt": "mine\n", afile: "x\n" });
    const r = runCli(["import", "harbor", "tasks/greet", "--out", "suite", "--host"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--out suite exists and is not empty");
    expect(r.stderr).toContain("give a new folder, or remove this one");
    expect(r.stderr).not.toContain("    at ");
    expect(readFileSync(path.join(dir, "suite/keep.txt"), "utf8")).toBe("mine\n");
    expect(existsSync(path.join(dir, "suite/harbor.eval.yaml"))).toBe(false);

    // A second import into the same folder would mix two imports: refused too.
    expect(runCli(["import", "harbor", "tasks/greet", "--out", "fresh", "--host"], dir).code).toBe(0);
    const again = runCli(["import", "harbor", "tasks/sum", "--out", "fresh", "--host"], dir);
    expect(again.code).toBe(2);
    expect(readFileSync(path.join(dir, "fresh/harbor.eval.yaml"), "utf8")).toContain("greet");
    expect(readFileSync(path.join(dir, "fresh/harbor.eval.yaml"), "utf8")).not.toContain("id: sum");

    const file = runCli(["import", "harbor", "tasks/greet", "--out", "afile", "--host"], dir);
    expect(file.code).toBe(2);
    expect(file.stderr).toContain("--out afile is a file, not a folder");

    mkdirSync(path.join(dir, "empty"));
    expect(runCli(["import", "harbor", "tasks/greet", "--out", "empty", "--host"], dir).code).toBe(0);
    expect(existsSync(path.join(dir, "empty/harbor.eval.yaml"))).toBe(true);
  });
});
