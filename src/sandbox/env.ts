/**
 * The environment of agents, setup and scorers: a minimal base plus exactly the variables a target
 * or scorer names. Nothing else of the runner's environment (tokens, ACTIONS_*, ...) gets through.
 */

export interface EnvOptions {
  /** Variables to copy from evalgate's own environment, by name. */
  passthrough: readonly string[];
  /** Fixed values (a target's env:, placeholders such as EVALGATE_WORKSPACE). */
  values?: Record<string, string>;
  /** A HOME of the process's own. */
  home: string;
  /** A TMPDIR of the process's own. */
  tmp: string;
  /** The environment to copy from (default: process.env). */
  from?: NodeJS.ProcessEnv;
}

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Variables every process gets, whatever the eval file says. */
export const BASE_VARIABLES = [
  "PATH",
  "LANG",
  "TZ",
  "HOME",
  "TMPDIR",
  "CI",
  "NO_COLOR",
  "GIT_TERMINAL_PROMPT",
] as const;

/**
 * Variables that never reach an agent, setup or scorer, with the reason a user is told. Prefixes
 * cover the runner's whole families: GITHUB_ (GITHUB_TOKEN, and GITHUB_ENV / GITHUB_OUTPUT /
 * GITHUB_PATH, files through which a process could change later workflow steps), ACTIONS_ (the
 * runtime, cache and OIDC request tokens), RUNNER_, INPUT_ (the action's inputs, github-token
 * among them) and STATE_ (an action's saved state).
 */
const DENIED: { test: (upper: string) => boolean; why: string }[] = [
  {
    test: (n) => /^(GITHUB_|ACTIONS_|RUNNER_|INPUT_|STATE_)/.test(n),
    why: "is a variable of the CI runner (its tokens, and files that steer later workflow steps)",
  },
  {
    test: (n) => n === "GH_TOKEN" || n === "GH_ENTERPRISE_TOKEN",
    why: "is a GitHub token of the runner",
  },
  {
    test: (n) => n === "HOME" || n === "TMPDIR",
    why: "is set by evalgate: every process gets a HOME and TMPDIR of its own inside its attempt folder",
  },
];

/** Values evalgate sets for agents and scorers: a target's `env:` cannot replace them. */
export const EVALGATE_VARIABLES = [
  "EVALGATE_ATTEMPT",
  "EVALGATE_RETRY",
  "EVALGATE_TEST_ID",
  "EVALGATE_OUTPUT_FILE",
  "EVALGATE_WORKSPACE",
  "EVALGATE_REPORT_FILE",
  "EVALGATE_REPORT_DIR",
] as const;

/**
 * Why `name` may never be passed to (or set for) an agent, setup or scorer; undefined when it may.
 * Names are compared without regard to case, so a spelling variant cannot slip through.
 */
export function deniedVariable(name: string): string | undefined {
  const upper = name.toUpperCase();
  return DENIED.find((d) => d.test(upper))?.why;
}

export function buildEnv(opts: EnvOptions): Record<string, string> {
  const from = opts.from ?? process.env;
  const env: Record<string, string> = {
    PATH: from.PATH || DEFAULT_PATH,
    LANG: from.LANG || "C.UTF-8",
    TZ: "UTC",
    HOME: opts.home,
    TMPDIR: opts.tmp,
    // Tools behave as in CI, without prompts or colour codes in the logs.
    CI: "true",
    NO_COLOR: "1",
    GIT_TERMINAL_PROMPT: "0",
  };
  for (const name of opts.passthrough) {
    // The planner refuses these with a located error; reaching here is a bug, never a silent pass.
    if (deniedVariable(name)) throw new Error(`internal: ${name} must never be passed through`);
    const v = from[name];
    if (v !== undefined) env[name] = v;
  }
  for (const [name, value] of Object.entries(opts.values ?? {})) {
    if (deniedVariable(name)) {
      throw new Error(`internal: ${name} must never be set for a process`);
    }
    env[name] = value;
  }
  return env;
}
