import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { versionOf } from "../../src/providers/preset.js";
import type { AgentContext } from "../../src/providers/types.js";
import { buildEnv } from "../../src/sandbox/env.js";
import { ChildProcessRunner, type ProcessRunner } from "../../src/sandbox/process.js";
import { tempDir } from "../helpers.js";

const real = new ChildProcessRunner();
/** A place where the program cannot start (as bubblewrap on the runner, when a link leads out of its mounts). */
const broken: ProcessRunner = { run: (spec) => real.run({ ...spec, command: { argv: ["/bin/false"] } }) };

function agentProgram(): { program: string; dir: string } {
  const dir = tempDir("evalgate-version-");
  const program = path.join(dir, "agent-cli");
  writeFileSync(program, "#!/bin/sh\necho 'agent-cli 4.5.6 (scripted)'\n");
  chmodSync(program, 0o755);
  return { program, dir };
}

function ctx(dir: string, runner: ProcessRunner, inEnvironment: boolean): AgentContext {
  return { workspace: dir, runner, inEnvironment } as AgentContext;
}

describe("an agent CLI's version", () => {
  const env = buildEnv({ passthrough: [], home: "/tmp", tmp: "/tmp" });

  it("is asked again in a case's image when asking on the runner failed", async () => {
    // before: one answer per program for the whole run; the runner's failed answer (null) stood for
    // the image's too, and an attempt in the image recorded agent_version: null.
    const { program, dir } = agentProgram();
    expect(await versionOf(program, ["--version"], ctx(dir, broken, false), env)).toBeNull();
    expect(await versionOf(program, ["--version"], ctx(dir, real, true), env)).toBe("4.5.6");
  });

  it("is asked once per place", async () => {
    const { program, dir } = agentProgram();
    expect(await versionOf(program, ["--version"], ctx(dir, real, false), env)).toBe("4.5.6");
    // The answer is kept: a later attempt on the runner does not start the program again.
    expect(await versionOf(program, ["--version"], ctx(dir, broken, false), env)).toBe("4.5.6");
  });
});
