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
    const v = from[name];
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...opts.values };
}

/** Values of the passed-through variables: the secrets that must be redacted from the bundle. */
export function passedSecrets(
  passthrough: readonly string[],
  from: NodeJS.ProcessEnv = process.env,
): string[] {
  return passthrough.map((n) => from[n]).filter((v): v is string => typeof v === "string" && v.length >= 4);
}
