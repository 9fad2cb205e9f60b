/**
 * Where a plan uses secrets: every variable whose value the run hands to a process or reads for a
 * scorer. This is the one place that knows where secrets come from: a new source is one more line
 * in `secretVariables`; their values are found and redacted by sandbox/secrets.ts.
 */
import { type RunSecrets, secretsOf } from "../sandbox/secrets.js";
import type { Plan } from "./types.js";

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
 * The values of the plan's secret variables in `env`, the runner's credentials there, and `extra`
 * values (the action's GitHub token, which need not be in `env`), as a Redactor.
 */
export function runSecrets(plan: Plan, env: NodeJS.ProcessEnv, extra: readonly string[] = []): RunSecrets {
  return secretsOf(secretVariables(plan).keys(), env, extra);
}
