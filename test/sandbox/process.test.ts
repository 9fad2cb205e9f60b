import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildEnv } from "../../src/sandbox/env.js";
import { ChildProcessRunner, groupMembers } from "../../src/sandbox/process.js";
import { tempDir } from "../helpers.js";

const runner = new ChildProcessRunner();
const env = () => buildEnv({ passthrough: [], home: "/tmp", tmp: "/tmp" });

/** Whether `pid` is still running (a zombie waiting to be reaped by init is not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe("ChildProcessRunner", () => {
  it("kills the whole process tree of a hung command at the timeout", async () => {
    const dir = tempDir();
    const pidFile = path.join(dir, "pids");
    const started = Date.now();
    const outcome = await runner.run({
      // Two background sleeps and a foreground one, plus one that escapes into its own session.
      command: {
        shell: `sleep 1000 & echo $! >> ${pidFile}; sleep 1000 & echo $! >> ${pidFile}; setsid sleep 1000 & echo $! >> ${pidFile}; sleep 1000`,
      },
      cwd: dir,
      env: env(),
      timeoutMs: 2000,
      killGraceMs: 500,
    });
    const elapsed = Date.now() - started;
    expect(outcome.timedOut).toBe(true);
    expect(elapsed).toBeLessThan(6000);
    const pids = readFileSync(pidFile, "utf8").trim().split("\n").map(Number);
    expect(pids).toHaveLength(3);
    await new Promise((r) => setTimeout(r, 200));
    for (const pid of pids) expect(alive(pid), `pid ${pid} survived`).toBe(false);
  });

  it("kills what a command left running in the background after it exited", async () => {
    const dir = tempDir();
    const pidFile = path.join(dir, "pid");
    const outcome = await runner.run({
      command: { shell: `sleep 1000 & echo $! > ${pidFile}; exit 0` },
      cwd: dir,
      env: env(),
      timeoutMs: 10_000,
    });
    expect(outcome.timedOut).toBe(false);
    expect(outcome.exitCode).toBe(0);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
  });

  it("does not wait for a background child that holds the output pipe open", async () => {
    const started = Date.now();
    const outcome = await runner.run({
      command: { shell: "(sleep 30; echo late) & echo early" },
      cwd: "/tmp",
      env: env(),
      timeoutMs: 20_000,
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(outcome.tail).toContain("early");
    expect(outcome.tail).not.toContain("late");
  });

  it("caps the log, keeping head and tail with a marker", async () => {
    const dir = tempDir();
    const logFile = path.join(dir, "out.log");
    const outcome = await runner.run({
      command: { shell: "echo FIRST; head -c 300000 /dev/zero | tr '\\0' x; echo; echo LAST" },
      cwd: dir,
      env: env(),
      timeoutMs: 10_000,
      logFile,
      logCapBytes: 10_000,
    });
    const log = readFileSync(logFile, "utf8");
    expect(log.startsWith("FIRST\n")).toBe(true);
    expect(log.trimEnd().endsWith("LAST")).toBe(true);
    expect(log).toMatch(/\[evalgate: output cut here: \d+ bytes not kept/);
    expect(log.length).toBeLessThan(10_400);
    expect(outcome.droppedBytes).toBeGreaterThan(280_000);
  });

  it("gives the input on stdin and closes it; a program that does not read it is no error", async () => {
    const input = "line one\nline two\n".repeat(40_000);
    const read = await runner.run({
      command: { argv: ["sh", "-c", "wc -c; echo done >&2"] },
      cwd: "/tmp",
      env: env(),
      timeoutMs: 5000,
      input,
      captureStdout: true,
    });
    expect(read).toMatchObject({ exitCode: 0, stdout: `${Buffer.byteLength(input)}\n` });
    expect(read.tail).toContain("done");
    // 720 KB against a pipe of 64 KB: the writer is still writing when the program exits.
    const unread = await runner.run({
      command: { argv: ["true"] },
      cwd: "/tmp",
      env: env(),
      timeoutMs: 5000,
      input,
    });
    expect(unread).toMatchObject({ exitCode: 0, signal: null });
    expect(unread.spawnError).toBeUndefined();
  });

  it("reports a command line the system refuses as a spawn error, not a crash", async () => {
    const outcome = await runner.run({
      command: { argv: ["/bin/true", ...Array(40).fill("x".repeat(100 * 1024))] },
      cwd: "/tmp",
      env: env(),
      timeoutMs: 5000,
    });
    expect(outcome.spawnError).toMatch(/command line is longer than the system allows/);
    expect(outcome.exitCode).toBeNull();
  });

  it("reports a program that does not exist as a spawn error", async () => {
    const outcome = await runner.run({
      command: { argv: ["/nonexistent/agent"] },
      cwd: "/tmp",
      env: env(),
      timeoutMs: 5000,
    });
    expect(outcome.spawnError).toContain("/nonexistent/agent: not found");
  });

  it("says a missing working folder is missing, not the program (a scorer's cwd: typo)", async () => {
    const cwd = path.join(tempDir(), "no-such-folder");
    const outcome = await runner.run({ command: { shell: "true" }, cwd, env: env(), timeoutMs: 5000 });
    expect(outcome.spawnError).toBe(`the working folder ${cwd} does not exist`);
  });

  it("says a script whose #! interpreter is missing needs that interpreter", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "run.sh"), "#!/no/such/interpreter\necho hi\n", { mode: 0o755 });
    const outcome = await runner.run({
      command: { argv: ["./run.sh"] },
      cwd: dir,
      env: env(),
      timeoutMs: 5000,
    });
    expect(outcome.spawnError).toMatch(
      /\.\/run\.sh: the program it needs to start \(the interpreter on its #! line\)/,
    );
  });

  it("gives the process only the environment it is handed", async () => {
    process.env.EVALGATE_TEST_SECRET = "s3cret-value";
    try {
      const outcome = await runner.run({
        command: { argv: ["env"] },
        cwd: "/tmp",
        env: buildEnv({
          passthrough: ["EVALGATE_TEST_PASS"],
          home: "/tmp/h",
          tmp: "/tmp/t",
          from: { ...process.env, EVALGATE_TEST_PASS: "yes" },
        }),
        timeoutMs: 5000,
        captureStdout: true,
      });
      const names = outcome.stdout
        .trim()
        .split("\n")
        .map((l) => l.split("=")[0]);
      expect(names.sort()).toEqual([
        "CI",
        "EVALGATE_TEST_PASS",
        "GIT_TERMINAL_PROMPT",
        "HOME",
        "LANG",
        "NO_COLOR",
        "PATH",
        "TMPDIR",
        "TZ",
      ]);
      expect(outcome.stdout).not.toContain("s3cret-value");
    } finally {
      delete process.env.EVALGATE_TEST_SECRET;
    }
  });

  it("leaves no member of the process group behind after a normal exit", async () => {
    let pgid = 0;
    const r = new ChildProcessRunner();
    const outcome = await r.run({
      command: { shell: "echo $$; sleep 1000 & sleep 1000 & wait" },
      cwd: "/tmp",
      env: env(),
      timeoutMs: 1500,
      captureStdout: true,
      killGraceMs: 200,
    });
    pgid = Number(outcome.stdout.trim().split("\n")[0]);
    expect(outcome.timedOut).toBe(true);
    await new Promise((res) => setTimeout(res, 100));
    expect(groupMembers(pgid)).toEqual([]);
  });
});
