/**
 * `version:` on a preset target: the agent CLI of that release, installed from npm once per run
 * into a tool cache and reused by every attempt, every later run and every shard on the machine.
 * The cache is RUNNER_TOOL_CACHE on GitHub Actions (kept on self-hosted runners), else
 * $XDG_CACHE_HOME/evalgate/tools or ~/.cache/evalgate/tools. A version npm does not have is refused
 * before anything runs. See docs/decisions/0113.
 */
import { existsSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { execa } from "execa";
import type { TargetSpec } from "../config/types.js";
import { UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import { findProgram } from "../sandbox/commands.js";
import { claudeCode } from "./claude-code.js";
import { codex } from "./codex.js";
import { geminiCli } from "./gemini-cli.js";
import type { Preset } from "./stream.js";

const PRESETS: Record<string, Preset> = { "claude-code": claudeCode, codex, "gemini-cli": geminiCli };

/** Marks a complete install: a folder without it is an install that was cut off. */
const DONE = ".evalgate-installed";

export function toolCacheRoot(env: NodeJS.ProcessEnv): string {
  if (env.RUNNER_TOOL_CACHE) return path.join(env.RUNNER_TOOL_CACHE, "evalgate");
  const base = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), ".cache");
  return path.join(base, "evalgate", "tools");
}

function npmLines(text: string): string {
  return text
    .split("\n")
    .map((l) => l.replace(/^npm (error|ERR!)\s*/, "").trim())
    .filter((l) => l && !/complete log|A complete log|npm help/.test(l))
    .slice(0, 3)
    .join(" / ");
}

/** The program of `preset` at `version`, installing it into the cache unless it is there. */
export async function installedAgent(
  preset: Preset,
  version: string,
  env: NodeJS.ProcessEnv,
  logger: Logger,
): Promise<string> {
  const dir = path.join(toolCacheRoot(env), preset.provider, version);
  const bin = path.join(dir, "node_modules", ".bin", preset.bin);
  if (existsSync(path.join(dir, DONE)) && existsSync(bin)) {
    logger.info(`${preset.provider} ${version}: from the tool cache (${dir})`);
    return bin;
  }
  const spec = `${preset.npmPackage}@${version}`;
  const view = await execa("npm", ["view", spec, "version", "--json"], { reject: false, env, all: true });
  if (view.failed && (view as { code?: string }).code === "ENOENT") {
    throw new UsageError(`version: ${version} needs npm to install ${spec}, and npm is not on PATH`);
  }
  if (view.exitCode !== 0 || !String(view.stdout).trim()) {
    const why =
      /E404|404 Not Found/.test(String(view.all)) || view.exitCode === 0
        ? ""
        : ` (${npmLines(String(view.all))})`;
    const latest = await execa("npm", ["view", preset.npmPackage, "version"], { reject: false, env });
    throw new UsageError(
      `version: ${version}: ${spec} does not exist on npm${why}${latest.exitCode === 0 ? `; the latest is ${String(latest.stdout).trim()}` : ""} (npm view ${preset.npmPackage} versions lists them)`,
    );
  }
  logger.info(`${preset.provider} ${version}: installing ${spec} into ${dir}`);
  // Into a folder of its own, then renamed: a concurrent run (another shard) never sees half an install.
  const staging = `${dir}.partial-${process.pid}-${Date.now()}`;
  await mkdir(staging, { recursive: true });
  const r = await execa(
    "npm",
    ["install", "--prefix", staging, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", spec],
    { reject: false, env, all: true, timeout: 900_000 },
  );
  if (r.exitCode !== 0 || !existsSync(path.join(staging, "node_modules", ".bin", preset.bin))) {
    await rm(staging, { recursive: true, force: true });
    throw new UsageError(`version: ${version}: npm could not install ${spec}: ${npmLines(String(r.all))}`);
  }
  await writeFile(path.join(staging, DONE), `${spec}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(staging, dir).catch(async (error: NodeJS.ErrnoException) => {
    // Another run finished the same install first: use its copy.
    await rm(staging, { recursive: true, force: true });
    if (!existsSync(path.join(dir, DONE))) throw error;
  });
  return bin;
}

/**
 * Installs every preset target's `version:` (each provider and version once) and points the
 * targets at the installed program, before any attempt runs. A preset target without `version:`
 * whose program is missing is reported here, once, before any attempt (each of its attempts is
 * still an error naming the fix, as with a missing credential).
 */
export async function installAgents(
  targets: readonly TargetSpec[],
  env: NodeJS.ProcessEnv,
  logger: Logger,
): Promise<void> {
  const installs = new Map<string, Promise<string>>();
  const reported = new Set<string>();
  for (const t of targets) {
    const preset = PRESETS[t.provider];
    if (!preset) continue;
    if (!t.version) {
      if (!reported.has(t.name) && !findProgram(t.bin ?? preset.bin, env.PATH)) {
        reported.add(t.name);
        logger.warn(
          `target ${t.name}: ${t.bin ? `the program ${t.bin} (bin:) does not exist or is not executable` : `"${preset.bin}" was not found on PATH`}, so each of its attempts will be an error: install it (${preset.install}), or set version: on the target and evalgate installs it`,
        );
      }
      continue;
    }
    const key = `${t.provider}@${t.version}`;
    let p = installs.get(key);
    if (!p) {
      p = installedAgent(preset, t.version, env, logger).catch((error: unknown) => {
        if (error instanceof UsageError) throw new UsageError(`target ${t.name}: ${error.message}`);
        throw error;
      });
      installs.set(key, p);
    }
    t.bin = await p;
  }
}
