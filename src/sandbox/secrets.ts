/**
 * The secrets of a run: the values of the variables the run hands to a process or reads for a
 * scorer (which ones: config/secrets.ts), and the runner's own credentials. Their values are
 * redacted from the bundle and the console (redact.ts).
 */
import { deniedVariable } from "./env.js";
import { MIN_SECRET_LENGTH, Redactor } from "./redact.js";

/**
 * The runner's own credentials in evalgate's environment (GITHUB_TOKEN, the action's github-token
 * input, ACTIONS_RUNTIME_TOKEN, ...). No process is given them, but an agent outside a sandbox can
 * read evalgate's environment from /proc (docs/decisions/0070-sandbox-audit.md): if it prints one,
 * it is masked like any secret of the run.
 */
export function runnerCredentials(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env).filter(
    (name) => deniedVariable(name) !== undefined && /(TOKEN|SECRET|PASSWORD|KEY)$/i.test(name),
  );
}

export interface RunSecrets {
  redactor: Redactor;
  /** Variables that are set but too short to redact (the user is told). */
  tooShort: string[];
  /**
   * Variables whose value is a plain word (`MODE=pass`): redacted, but likely no secret, and
   * masking it mangles every log line with that word in it (the user is told).
   */
  plainWords: string[];
}

/** Letters only and short: a setting, most likely, rather than a key or a password. */
const PLAIN_WORD = /^[A-Za-z]{4,12}$/;

/**
 * The values of `variables` (the run's secret variables) in `env`, the runner's credentials there,
 * and `extra` values (the action's GitHub token, which need not be in `env`), as a Redactor.
 */
export function secretsOf(
  variables: Iterable<string>,
  env: NodeJS.ProcessEnv = process.env,
  extra: readonly string[] = [],
): RunSecrets {
  const values: string[] = extra.filter((v) => v !== "");
  const tooShort: string[] = [];
  const plainWords: string[] = [];
  for (const name of variables) {
    const v = env[name];
    if (v === undefined || v === "") continue;
    if (v.length < MIN_SECRET_LENGTH) tooShort.push(name);
    else values.push(v);
    if (PLAIN_WORD.test(v)) plainWords.push(name);
  }
  for (const name of runnerCredentials(env)) values.push(env[name] ?? "");
  return { redactor: new Redactor(values), tooShort, plainWords };
}
