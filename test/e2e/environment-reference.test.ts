/**
 * The reference in a case's environment (issue 30): `validate --solvable` of a Harbor task imported
 * with its Dockerfile, and the verifier calibration's reference run, in the case's image. The task
 * needs `exam-tool`, a program only the image has (test/environment/images.ts): its solution and
 * its verifier both call it, so either one run on the runner fails.
 *
 * Before: `evalgate validate --solvable` stopped with `target "reference" (provider reference)
 * cannot run in an environment yet`, and the calibration of a case in an environment ran the
 * reference script on the runner (exam-tool: not found, so it calibrated on the start tree).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { busyboxImage, testEngine } from "../environment/images.js";
import { readJson, readJsonl, runCliAsync, tempDir, writeFiles } from "../helpers.js";

const { engine } = await testEngine();

/** A Harbor task whose image adds exam-tool; solve.sh and test.sh both need it. */
function harborTask(dir: string, base: string): void {
  writeFiles(dir, {
    "tasks/greet/task.toml": `version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n\n[agent]\ntimeout_sec = 120.0\n\n[environment]\nmemory_mb = 256\n`,
    "tasks/greet/instruction.md": 'Fix /app/greet.sh so that it prints "hello, world".\n',
    "tasks/greet/environment/Dockerfile": `FROM ${base}\nCOPY exam-tool /usr/local/bin/exam-tool\nRUN chmod 755 /usr/local/bin/exam-tool\nWORKDIR /app\nCOPY src/ /app/\n`,
    "tasks/greet/environment/exam-tool": '#!/bin/sh\necho "exam-tool ran: $*"\n',
    "tasks/greet/environment/src/greet.sh": '#!/bin/sh\necho "hello, wrld"\n',
    "tasks/greet/tests/test.sh": `#!/bin/sh
cd /app
if exam-tool verify >/dev/null && [ "$(sh /app/greet.sh)" = "hello, world" ] && grep -q "exam-tool ran: solve" /app/solved.txt; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
`,
    // The answer key: the marker is what an agent looking for it would find.
    "tasks/greet/solution/solve.sh": `#!/bin/sh\n# the-answer-key\nset -e\nsed -i 's/wrld/world/' /app/greet.sh\nexam-tool solve > /app/solved.txt\n`,
  });
}

describe.skipIf(!engine)(
  "a Harbor task with a Dockerfile, validated in its environment (real engine)",
  () => {
    let dir: string;
    beforeAll(async () => {
      dir = tempDir("evalgate-envref-");
      harborTask(dir, await busyboxImage(engine!));
    }, 300_000);

    it("imports and passes validate --solvable: the reference and the verifier run in the image", async () => {
      const imported = await runCliAsync(["import", "harbor", "tasks", "--out", "suite"], dir);
      expect(imported.code, imported.stderr).toBe(0);
      const yaml = readFileSync(path.join(dir, "suite/harbor.eval.yaml"), "utf8");
      expect(yaml).toContain("dockerfile: harbor/greet/environment/Dockerfile");
      expect(yaml).toContain("script: harbor/greet/reference.sh");

      const s = await runCliAsync(
        ["validate", "--solvable", "suite", "--json", "--out", "check"],
        dir,
        {},
        600_000,
      );
      expect(s.stderr).not.toMatch(/cannot run in an environment/);
      expect(s.code, s.stdout + s.stderr).toBe(0);
      const report = JSON.parse(s.stdout) as { results: unknown[] };
      expect(report.results).toMatchObject([
        { test_id: "greet", solvable: true, reference: { attempts: 1, passed: 1 }, noop: { passed: 0 } },
      ]);
      // The reference's attempt ran in the image, recorded by digest, and its solution used the image's program.
      const rows = readJsonl<{ target: string; runs: { dir: string }[] }>(
        path.join(dir, "check/index.jsonl"),
      );
      const ref = rows.find((r) => r.target === "reference")!;
      const result = readJson<{ status: string; environment: { workdir: string; digest: string } }>(
        path.join(dir, "check", ref.runs[0]!.dir, "result.json"),
      );
      expect(result.status).toBe("passed");
      expect(result.environment).toMatchObject({
        workdir: "/app",
        digest: expect.stringMatching(/^sha256:/),
      });
      const patch = readFileSync(path.join(dir, "check", ref.runs[0]!.dir, "diff.patch"), "utf8");
      expect(patch).toContain("+exam-tool ran: solve");
    }, 600_000);

    it("keeps the task's solution out of the agent's sight in its container", async () => {
      // before: the importer copied solution/ beside reference.sh; only the script was masked, so
      // the agent read solve.sh under /evalgate (the eval file's folder, read-only).
      const evalFile = path.join(dir, "suite/harbor.eval.yaml");
      const peek = `grep -rl the-answer-ke[y] /evalgate /app 2>/dev/null | tr '\\n' ' ' | sed 's/^/found: /' > /app/peek.txt; echo >> /app/peek.txt`;
      writeFiles(dir, {
        "suite/harbor.eval.yaml": readFileSync(evalFile, "utf8").replace(
          "  - name: noop\n    provider: noop",
          `  - name: peek\n    provider: command\n    command: ["sh", "-c", ${JSON.stringify(peek)}]`,
        ),
      });
      const r = await runCliAsync(["run", "suite", "--out", "peeked"], dir, {}, 600_000);
      const rows = readJsonl<{ target: string; runs: { dir: string }[] }>(
        path.join(dir, "peeked/index.jsonl"),
      );
      expect(
        rows.map((row) => row.target),
        r.stderr,
      ).toEqual(["peek"]);
      const patch = readFileSync(path.join(dir, "peeked", rows[0]!.runs[0]!.dir, "diff.patch"), "utf8");
      expect(patch).toContain("peek.txt");
      expect(patch).not.toContain("the-answer-key");
      expect(patch).not.toMatch(/found: \S/);
    }, 600_000);
  },
);

/** A verifier that passes, fails, passes… in one workspace: regrading it disagrees, so it is calibrated. */
const FLAKY_CHECK = "exam-tool check >/dev/null && if [ -e .turn ]; then rm .turn; exit 1; fi; touch .turn";

describe.skipIf(!engine)(
  "the verifier calibration's reference runs in the case's image (real engine)",
  () => {
    let out: string;
    let dir: string;
    beforeAll(async () => {
      const base = await busyboxImage(engine!);
      dir = tempDir("evalgate-envcal-");
      writeFiles(dir, {
        "env/Containerfile": `FROM ${base}\nCOPY exam-tool /usr/local/bin/exam-tool\nRUN chmod 755 /usr/local/bin/exam-tool\nWORKDIR /app\n`,
        "env/exam-tool": '#!/bin/sh\necho "exam-tool ran: $*"\n',
        "project/main.txt": "start\n",
        // The reference needs the image's program: on the runner it cannot apply.
        "refs/solve.sh": "#!/bin/sh\nset -e\nexam-tool solve > solved.txt\n",
        "c.eval.yaml": `name: calibration
environment: { build: { dockerfile: env/Containerfile } }
targets:
  - { name: agent, provider: command, command: ["sh", "-c", "exam-tool agent > solved.txt"] }
workspace: { seed: { path: project } }
gate: { min_case_pass_rate: 0 }
tests:
  - id: flaky-verifier
    instruction: write solved.txt
    reference: { script: refs/solve.sh }
    verify_repeats: 2
    scorers:
      - { name: solved, type: command, run: "grep -q 'exam-tool ran' solved.txt" }
      - { name: flaky, type: command, run: "${FLAKY_CHECK}" }
`,
      });
      out = path.join(dir, "out");
      const run = await runCliAsync(
        ["run", ".", "--out", out, "--work-dir", path.join(dir, "work")],
        dir,
        {},
        600_000,
      );
      if (!run.stdout.includes("index.jsonl") && run.code > 1) console.error(run.stdout, run.stderr);
    }, 600_000);

    it("applies the reference script in the image and calibrates on it", () => {
      const rows = readJsonl<{ runs: { dir: string }[] }>(path.join(out, "index.jsonl"));
      const result = readJson<{
        failure_kind: string | null;
        verify: { calibration?: { on: string; note?: string } } | null;
      }>(path.join(out, rows[0]!.runs[0]!.dir, "result.json"));
      expect(result.verify?.calibration).toMatchObject({ on: "reference" });
      expect(result.verify?.calibration?.note).toBeUndefined();
      expect(result.failure_kind).toBe("verifier_flake");
      const log = readFileSync(path.join(out, rows[0]!.runs[0]!.dir, "calibration", "reference.log"), "utf8");
      expect(log).not.toMatch(/not found/);
    });
  },
);

describe.skipIf(!engine)("a reference patch in an environment (real engine)", () => {
  it("is applied by evalgate to the mounted workspace; the image's scorer sees it", async () => {
    // before: validate --solvable refused the case ("cannot run in an environment yet").
    const base = await busyboxImage(engine!);
    const dir = tempDir("evalgate-envpatch-");
    writeFiles(dir, {
      "env/Containerfile": `FROM ${base}\nCOPY exam-tool /usr/local/bin/exam-tool\nRUN chmod 755 /usr/local/bin/exam-tool\nWORKDIR /app\n`,
      "env/exam-tool": '#!/bin/sh\necho "exam-tool ran: $*"\n',
      "project/greet.txt": "hello, wrld\n",
      "fix.patch":
        "diff --git a/greet.txt b/greet.txt\n--- a/greet.txt\n+++ b/greet.txt\n@@ -1 +1 @@\n-hello, wrld\n+hello, world\n",
      "p.eval.yaml": `name: patch
environment: { build: { dockerfile: env/Containerfile } }
targets: [{ name: noop, provider: noop }]
workspace: { seed: { path: project } }
tests:
  - id: greet
    instruction: fix the greeting
    reference: fix.patch
    scorers: [{ name: fixed, type: command, run: "exam-tool check && grep -q 'hello, world' greet.txt && test $(pwd) = /app" }]
`,
    });
    const s = await runCliAsync(["validate", "--solvable", ".", "--json"], dir, {}, 600_000);
    expect(s.code, s.stdout + s.stderr).toBe(0);
    expect((JSON.parse(s.stdout) as { results: unknown[] }).results).toMatchObject([
      { test_id: "greet", solvable: true, reference: { passed: 1 }, noop: { passed: 0 } },
    ]);
  }, 600_000);
});
