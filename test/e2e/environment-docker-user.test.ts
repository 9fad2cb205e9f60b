/**
 * evalgate as a normal user against a rootful Docker daemon, as on GitHub-hosted runners (the user
 * `runner` in the `docker` group): containers run as root, so what they write into the workspace is
 * root's, and evalgate gives the writable mounts back to its own user after each process
 * (`chownAfter`, src/environment/engine.ts). A root-owned, owner-only folder the agent leaves must
 * still be captured in the diff, scored, and deletable by the user afterwards.
 *
 * Runs in the Docker lane (scripts/docker-lane.sh) only: it needs a rootful Docker engine and root
 * here to add the user (`useradd`) and run the CLI as that user (`runuser`). Elsewhere it skips and
 * says why.
 *
 * Before (chownAfter switched off, checked by hand): the verdict still passed, but `out/` stayed
 * root's with mode 700, so git could not read it and diff.patch silently lacked out/deep/f.txt; the
 * assertion on the patch failed.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findProgram } from "../../src/sandbox/commands.js";
import { busyboxImage, testEngine } from "../environment/images.js";
import { CLI, readJson, readJsonl, tempDir, writeFiles } from "../helpers.js";

const { engine } = await testEngine();
const USER = "evalgate-docker-user";

function whyNot(): string | undefined {
  if (!engine) return "no container engine";
  if (engine.kind !== "docker") return `the engine is ${engine.kind} (set EVALGATE_CONTAINER=docker)`;
  if (engine.rootless) return "the Docker daemon is rootless";
  if (process.getuid?.() !== 0) return "the tests do not run as root (useradd, runuser)";
  for (const p of ["useradd", "runuser"])
    if (!findProgram(p, `${process.env.PATH}:/usr/sbin:/sbin`)) return `${p} is not installed`;
  return undefined;
}
const why = whyNot();
if (why && engine?.kind === "docker") console.warn(`skipping the non-root Docker test: ${why}`);

/** The user, in the group that owns the daemon's socket (so it may use it, as `runner` does). */
function ensureUser(socketGroup: string): { uid: number; gid: number } {
  const sbin = `${process.env.PATH}:/usr/sbin:/sbin`;
  if (spawnSync("id", ["-u", USER]).status !== 0) {
    execFileSync("useradd", ["--no-create-home", "--shell", "/bin/sh", USER], { env: { PATH: sbin } });
  }
  execFileSync("usermod", ["-a", "-G", socketGroup, USER], { env: { PATH: sbin } });
  const id = (flag: string) => Number(execFileSync("id", [flag, USER], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/** What the agent leaves: a root-owned folder only its owner may enter, and a root-owned file. */
const AGENT = `mkdir -p out/deep && echo made > out/deep/f.txt && chmod 700 out out/deep && id -u > uid.txt && echo edited > main.txt`;

describe.skipIf(why !== undefined)("evalgate as a normal user with rootful Docker (real daemon)", () => {
  it("captures and scores what a root container left in the workspace, and leaves a folder the user can delete", async () => {
    const socket = (engine!.env.DOCKER_HOST ?? "unix:///var/run/docker.sock").replace(/^unix:\/\//, "");
    const group = execFileSync("stat", ["-c", "%G", socket], { encoding: "utf8" }).trim();
    const { uid, gid } = ensureUser(group);
    const image = await busyboxImage(engine!);
    const dir = tempDir("evalgate-docker-user-");
    writeFiles(dir, {
      "evals/project/main.txt": "start\n",
      "evals/e.eval.yaml": JSON.stringify({
        name: "docker-user",
        environment: { image },
        targets: [{ name: "root-writer", provider: "command", command: ["sh", "-c", AGENT] }],
        workspace: { seed: { path: "project" } },
        tests: [
          {
            id: "root-files",
            instruction: "leave root's files",
            scorers: [
              { name: "as-root", type: "command", run: 'test "$(cat uid.txt)" = 0' },
              { name: "deep", type: "command", run: "grep -qx made out/deep/f.txt" },
            ],
          },
        ],
      }),
    });
    execFileSync("chown", ["-R", `${uid}:${gid}`, dir]);
    const out = path.join(dir, "out");
    const work = path.join(dir, "work");
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      CI: "1",
      EVALGATE_CONTAINER: "docker",
      DOCKER_HOST: `unix://${socket}`,
    };
    const r = spawnSync(
      "runuser",
      [
        "-u",
        USER,
        "--",
        "env",
        "-i",
        ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
        process.execPath,
        CLI,
        "run",
        "evals",
        "--out",
        out,
        "--work-dir",
        work,
      ],
      { cwd: dir, encoding: "utf8", timeout: 300_000 },
    );
    if (!existsSync(path.join(out, "index.jsonl"))) console.error(r.stdout, r.stderr);
    const rows = readJsonl<{ test_id: string; verdict: string; runs: { dir: string }[] }>(
      path.join(out, "index.jsonl"),
    );
    expect(rows.map((x) => [x.test_id, x.verdict])).toEqual([["root-files", "pass"]]);
    const attempt = path.join(out, rows[0]!.runs[0]!.dir);
    const result = readJson<{ status: string; message: string | null }>(path.join(attempt, "result.json"));
    expect([result.status, result.message]).toEqual(["passed", null]);
    // The root-owned, owner-only folder was readable for the diff.
    const patch = readFileSync(path.join(attempt, "diff.patch"), "utf8");
    expect(patch).toContain("out/deep/f.txt");
    expect(patch).toContain("+edited");
    // Nothing of root's is left behind, and the user can delete all of it.
    const roots = execFileSync("find", [dir, "-user", "root"], { encoding: "utf8" }).trim();
    expect(roots).toBe("");
    const rm = spawnSync("runuser", ["-u", USER, "--", "rm", "-rf", work, out], { encoding: "utf8" });
    expect([rm.status, rm.stderr]).toEqual([0, ""]);
  }, 360_000);
});
