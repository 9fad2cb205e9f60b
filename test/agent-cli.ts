/**
 * Real agent CLIs for end-to-end tests, installed from the npm registry into a cache folder
 * (node_modules/.cache/evalgate-agents/<name>-<version>/) on first use, so `npm ci` stays lean for everyone else.
 * Where the registry cannot be reached the caller skips its test with the reason given here.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

// Not helpers.js's ROOT: the global setup reads this file, and helpers.js registers test hooks.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CACHE = path.join(ROOT, "node_modules/.cache");

/**
 * The agent CLIs as users install them today (npm view <package> version, November 2026). Claude
 * Code 2.1.x is a native binary inside the package (384 MB installed); Codex is a native binary
 * too (404 MB with its platform package); Gemini CLI is JavaScript (100 MB). `mb` is what each took
 * in node_modules/.cache/ on 2026-11-27, for the notice of test/global-setup.ts.
 */
export const AGENTS = {
  "claude-code": {
    pkg: "@anthropic-ai/claude-code",
    version: "2.1.332",
    bin: "claude",
    mb: 384,
    test: "claude-code-real",
  },
  codex: { pkg: "@openai/codex", version: "0.169.0", bin: "codex", mb: 404, test: "codex-real" },
  "gemini-cli": { pkg: "@google/gemini-cli", version: "0.61.0", bin: "gemini", mb: 100, test: "gemini-real" },
} as const;
export type AgentName = keyof typeof AGENTS;

/** Where a test installs an agent CLI (installAgent), kept between test runs. */
const agentBin = (name: AgentName) =>
  path.join(
    CACHE,
    "evalgate-agents",
    `${name}-${AGENTS[name].version}`,
    "node_modules/.bin",
    AGENTS[name].bin,
  );

/** The tool cache test/e2e/agent-version.test.ts gives evalgate's own `version:` install. */
export const TOOL_CACHE = path.join(CACHE, "evalgate-tool-cache");

export interface Download {
  /** The test file that downloads it, from the repository's root. */
  file: string;
  what: string;
  mb: number;
  /** Present once downloaded. */
  marker: string;
}

/** Everything the end-to-end tests install from npm on first use, and which test file does it. */
export const DOWNLOADS: Download[] = [
  ...(["claude-code", "codex", "gemini-cli"] as const).map((name) => ({
    file: `test/e2e/${AGENTS[name].test}.test.ts`,
    what: `${AGENTS[name].pkg}@${AGENTS[name].version}`,
    mb: AGENTS[name].mb,
    marker: agentBin(name),
  })),
  {
    file: "test/e2e/agent-version.test.ts",
    what: `${AGENTS["gemini-cli"].pkg}@${AGENTS["gemini-cli"].version} again, by evalgate's version: (into the tool cache)`,
    mb: AGENTS["gemini-cli"].mb,
    marker: path.join(
      TOOL_CACHE,
      "evalgate/gemini-cli",
      AGENTS["gemini-cli"].version,
      "node_modules/.bin/gemini",
    ),
  },
];

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
  const { pkg, version } = AGENTS[name];
  const bin = agentBin(name);
  const prefix = path.resolve(bin, "../../..");
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
