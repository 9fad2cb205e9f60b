/**
 * Real agent CLIs for end-to-end tests, installed from the npm registry into a cache folder
 * (node_modules/.cache/evalgate-agents/) on first use, so `npm ci` stays lean for everyone else.
 * Where the registry cannot be reached the caller skips its test with the reason given here.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { ROOT } from "./helpers.js";

/**
 * 2.0.76 is the last Claude Code release that ships as JavaScript (cli.js, 26 MB); later ones are a
 * ~200 MB native binary per platform. Its stream-json output is the format the preset reads.
 */
export const CLAUDE_CODE_VERSION = "2.0.76";

export type Installed = { bin: string } | { skip: string };

let claudeCode: Promise<Installed> | undefined;

/** Installs Claude Code once per test file (a failed install is not retried by the next caller). */
export function installClaudeCode(): Promise<Installed> {
  claudeCode ??= install();
  return claudeCode;
}

async function install(): Promise<Installed> {
  const prefix = path.join(ROOT, "node_modules/.cache/evalgate-agents", `claude-code-${CLAUDE_CODE_VERSION}`);
  const bin = path.join(prefix, "node_modules/.bin/claude");
  if (existsSync(bin)) return { bin };
  mkdirSync(prefix, { recursive: true });
  const r = await execa(
    "npm",
    [
      "install",
      "--prefix",
      prefix,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--omit=optional",
      `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`,
    ],
    { reject: false, timeout: 300_000, all: true },
  );
  if (r.exitCode !== 0 || !existsSync(bin)) {
    const why = String(r.all ?? r.message ?? "")
      .trim()
      .split("\n")
      .map((l) => l.replace(/^npm (error|ERR!)\s*/, "").trim())
      .filter(
        (l) => l && !/Unknown (user|project|env) config|complete log|behind a proxy|npm help config/.test(l),
      )
      .slice(0, 3)
      .join(" / ");
    return {
      skip: `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} could not be installed from npm: ${why}`,
    };
  }
  return { bin };
}
