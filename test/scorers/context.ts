/**
 * A real scorer context for scorer tests: a start git repository, an attempt workspace copied
 * from it, the agent's change applied, and the diff captured as the attempt lifecycle does.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { scorerSchema } from "../../src/config/schema/scorers.js";
import type { ScorerSpec, TestSpec } from "../../src/config/types.js";
import { buildEnv } from "../../src/sandbox/env.js";
import { ChildProcessRunner } from "../../src/sandbox/process.js";
import type { ScorerContext } from "../../src/scorers/types.js";
import { captureDiff } from "../../src/workspace/attempt.js";
import type { PreparedStart } from "../../src/workspace/start.js";
import { gitRepo, sh, tempDir } from "../helpers.js";

export interface ContextInput {
  /** The start tree's files. */
  files: Record<string, string>;
  /** The agent's change: new contents, or null to delete. */
  change?: Record<string, string | null>;
  /** The scorer's options as a user writes them (validated by the eval-file schema). */
  options: Record<string, unknown>;
  timeoutMs?: number;
  instruction?: string;
  evalDir?: string;
}

export async function scorerContext(input: ContextInput): Promise<ScorerContext> {
  const root = tempDir("evalgate-scorer-");
  const startDir = gitRepo(input.files, path.join(root, "start"));
  const sha = sh("git rev-parse HEAD", startDir).trim();
  const ws = path.join(root, "ws");
  sh(`cp -a start ws`, root);
  for (const [rel, content] of Object.entries(input.change ?? {})) {
    const abs = path.join(ws, rel);
    if (content === null) rmSync(abs, { force: true });
    else {
      mkdirSync(path.dirname(abs), { recursive: true });
      writeFileSync(abs, content);
    }
  }
  const start: PreparedStart = {
    key: "k",
    dir: startDir,
    sha,
    setupDurationMs: 0,
    seedDescription: "test",
  };
  const diff = await captureDiff(start, ws, path.join(root, "capture.index"));
  const options = scorerSchema.parse(input.options);
  const evalDir = input.evalDir ?? root;
  const spec: ScorerSpec = {
    name: options.name ?? options.type,
    type: options.type,
    weight: 1,
    required: false,
    timeoutMs: input.timeoutMs ?? 60_000,
    evalDir,
    options,
  };
  const test: TestSpec = {
    id: "case",
    instruction: input.instruction ?? "Fix the bug.",
    threshold: 1,
    tags: [],
    workspace: {
      seed: { kind: "empty" },
      setup: { envPassthrough: [], evalDir },
      protected: [],
      verifiers: [],
    },
    scorers: [spec],
  };
  const home = path.join(root, "home");
  const tmp = path.join(root, "tmp");
  mkdirSync(home);
  mkdirSync(tmp);
  const logFile = path.join(root, "scorer.log");
  writeFileSync(logFile, "");
  return {
    spec,
    test,
    workspace: ws,
    diff,
    logFile,
    runner: new ChildProcessRunner(),
    env: (passthrough) => buildEnv({ passthrough, home, tmp }),
  };
}
