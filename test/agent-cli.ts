/**
 * Real agent CLIs for end-to-end tests, installed from the npm registry into a cache folder
 * (node_modules/.cache/evalgate-agents/<name>-<version>/) on first use, so `npm ci` stays lean for everyone else.
 * Where the registry cannot be reached the caller skips its test with the reason given here.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { ROOT } from "./helpers.js";

/**
 * The agent CLIs as users install them today (npm view <package> version, November 2026). Claude
 * Code 2.1.x is a native binary inside the package (~380 MB installed); Codex is a native binary
 * too (~400 MB with its platform package); Gemini CLI is JavaScript (~100 MB).
 */
export const AGENTS = {
  "claude-code": { pkg: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" },
  codex: { pkg: "@openai/codex", version: "0.169.0", bin: "codex" },
  "gemini-cli": { pkg: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
} as const;
export type AgentName = keyof typeof AGENTS;

export const CLAUDE_CODE_VERSION = AGENTS["claude-code"].version;

export type Installed = { bin: string } | { skip: string };

const installs = new Map<AgentName, Promise<Installed>>();

/** Installs an agent CLI once per test file (a failed install is not retried by the next caller). */
export function installAgent(name: AgentName): Promise<Installed> {
  let p = installs.get(name);
  if (!p) {
    p = install(name);
    installs.set(name, p);
  }
  return p;
}

export function installClaudeCode(): Promise<Installed> {
  return installAgent("claude-code");
}

async function install(name: AgentName): Promise<Installed> {
  const { pkg, version, bin: program } = AGENTS[name];
  const prefix = path.join(ROOT, "node_modules/.cache/evalgate-agents", `${name}-${version}`);
  const bin = path.join(prefix, "node_modules/.bin", program);
  if (existsSync(bin)) return { bin };
  mkdirSync(prefix, { recursive: true });
  // Optional dependencies stay: the native CLIs come in per-platform optional packages.
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
      `${pkg}@${version}`,
    ],
    { reject: false, timeout: 600_000, all: true },
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
    return { skip: `${pkg}@${version} could not be installed from npm: ${why}` };
  }
  return { bin };
}
