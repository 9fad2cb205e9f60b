/**
 * The secrets of a run: every variable whose value the run hands to a process or reads for a
 * scorer, and the runner's own credentials. Their values are redacted from the bundle and the
 * console (sandbox/redact.ts).
 * This is the one place that knows where secrets come from: a new source is one more line in
 * `secretVariables`.
 */
import type { Plan } from "../config/types.js";
import { deniedVariable } from "./env.js";
import { MIN_SECRET_LENGTH, Redactor } from "./redact.js";

/** Passing these through adds nothing the base does not already give: they are not secrets. */
const NOT_SECRET = new Set(["PATH", "LANG", "TZ"]);

/** Variable name → where the plan uses it (for messages). */
export function secretVariables(plan: Plan): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (name: string | undefined, where: string) => {
    if (!name || NOT_SECRET.has(name)) return;
    const list = out.get(name) ?? [];
    if (!list.includes(where)) list.push(where);
    out.set(name, list);
  };
  for (const c of plan.cases) {
    const seed = c.test.workspace.seed;
    if (seed.kind === "git") add(seed.tokenEnv, "workspace seed token_env");
    for (const n of c.target.envPassthrough) add(n, `target ${c.target.name} env_passthrough`);
    for (const n of c.test.workspace.setup.envPassthrough) add(n, "setup env_passthrough");
    for (const s of c.test.scorers) {
      const o = s.options;
      if ("env_passthrough" in o)
        for (const n of o.env_passthrough ?? []) add(n, `scorer ${s.name} env_passthrough`);
      if (o.type === "llm-judge") add(o.api_key_env, `scorer ${s.name} api_key_env`);
    }
  }
  return out;
}

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
 * The values of the plan's secret variables in `env`, the runner's credentials there, and `extra`
 * values (the action's GitHub token, which need not be in `env`), as a Redactor.
 */
export function runSecrets(
  plan: Plan,
  env: NodeJS.ProcessEnv = process.env,
  extra: readonly string[] = [],
): RunSecrets {
  const values: string[] = extra.filter((v) => v !== "");
  const tooShort: string[] = [];
  const plainWords: string[] = [];
  for (const name of secretVariables(plan).keys()) {
    const v = env[name];
    if (v === undefined || v === "") continue;
    if (v.length < MIN_SECRET_LENGTH) tooShort.push(name);
    else values.push(v);
    if (PLAIN_WORD.test(v)) plainWords.push(name);
  }
  for (const name of runnerCredentials(env)) values.push(env[name] ?? "");
  return { redactor: new Redactor(values), tooShort, plainWords };
}
