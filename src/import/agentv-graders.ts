/** AgentV assertions → evalgate scorers (see agentv.ts and docs/decisions/0129). */
import { existsSync } from "node:fs";
import path from "node:path";
import { suggestSlug } from "../config/schema/values.js";
import type { OutputFile } from "./write.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export function argvOf(command: unknown): string[] | undefined {
  if (typeof command === "string" && command.trim()) return command.trim().split(/\s+/);
  if (Array.isArray(command) && command.length > 0 && command.every((c) => typeof c === "string"))
    return command as string[];
  return undefined;
}

/** A grader's files (its program and arguments that are files of the eval folder) are copied. */
export function localizeArgv(
  argv: string[],
  base: string,
  outDir: string,
  files: Record<string, OutputFile>,
): string[] {
  return argv.map((a) => {
    if (a.startsWith("-") || path.isAbsolute(a) || !/[./]/.test(a)) return a;
    const abs = path.resolve(base, a);
    if (!existsSync(abs)) return a;
    const rel = path.relative(base, abs).split(path.sep).join("/");
    if (rel.startsWith("..")) return a;
    files[`${outDir}/${rel}`] = { copyFrom: abs, executable: true };
    return `{EVAL_DIR}/${outDir}/${rel}`;
  });
}

const REPLY_GRADERS: Record<string, string> = {
  contains: "grades the agent's reply",
  regex: "grades the agent's reply",
  equals: "grades the agent's reply",
  "is-json": "grades the agent's reply",
  is_json: "grades the agent's reply",
  "field-accuracy": "grades the agent's reply",
  field_accuracy: "grades the agent's reply",
  "tool-trajectory": "grades the agent's tool calls",
  tool_trajectory: "grades the agent's tool calls",
  latency: "grades the run's latency",
  cost: "grades the run's cost (use gate.budget)",
  "token-usage": "grades the run's tokens (use gate.budget)",
  token_usage: "grades the run's tokens (use gate.budget)",
  "execution-metrics": "grades the run's trace",
  execution_metrics: "grades the run's trace",
  composite: "combines other graders",
};

export interface GraderContext {
  instruction: string;
  criteria: string | undefined;
  expected: unknown;
  metadata: unknown;
  /** The AgentV eval file's folder, and its suite's slug. */
  suiteDir: string;
  suiteSlug: string;
  /** The test's folder in the output. */
  out: string;
  files: Record<string, OutputFile>;
  notes: string[];
}

export interface MappedGraders {
  scorers: Json[];
  /** Each scorer's AgentV weight, when it had one. */
  weights: (number | undefined)[];
  /** What did not map, and why. */
  unmapped: string[];
}

export function mapGraders(graders: Json[], ctx: GraderContext): MappedGraders {
  const { instruction, criteria, expected, files, notes, out } = ctx;
  const scorers: Json[] = [];
  const weights: (number | undefined)[] = [];
  const unmapped: string[] = [];
  for (const [i, g] of graders.entries()) {
    const type = String(g.type ?? "");
    const label = `${typeof g.name === "string" ? g.name : type || `assertion ${i + 1}`} (${type})`;
    const name = suggestSlug(typeof g.name === "string" ? g.name : `${type}-${i + 1}`);
    if (g.negate === true) {
      unmapped.push(`${label}: negate is not carried`);
      continue;
    }
    const base: Json = { ...(name ? { name } : {}), ...(g.required === true ? { required: true } : {}) };
    if (typeof g.required === "number")
      notes.push(`${label}: required: ${g.required} (a minimum score) carried as required: false`);
    if (type === "code-grader" || type === "code_grader") {
      const argv = argvOf(g.command ?? g.script);
      if (!argv) {
        unmapped.push(`${label}: no command`);
        continue;
      }
      const payload = JSON.stringify({
        input_text: instruction,
        criteria: criteria ?? "",
        expected_output_text:
          typeof expected === "string" ? expected : expected === undefined ? "" : JSON.stringify(expected),
        output_text: "",
        workspace_path: "{WORKSPACE}",
        ...(isObject(ctx.metadata) ? { metadata: ctx.metadata } : {}),
        ...(isObject(g.config) ? { config: g.config } : {}),
      });
      const local = localizeArgv(
        argv,
        path.resolve(ctx.suiteDir, typeof g.cwd === "string" ? g.cwd : "."),
        `agentv/${ctx.suiteSlug}/graders`,
        files,
      );
      scorers.push({
        type: "script",
        ...base,
        run: [
          "sh",
          "-c",
          'printf "%s" "$1" | (shift; AGENTV_WORKSPACE_PATH="$PWD" exec "$@")',
          "agentv-code-grader",
          payload,
          ...local,
        ],
      });
      weights.push(typeof g.weight === "number" ? g.weight : undefined);
    } else if (type === "llm-grader" || type === "llm_grader") {
      if (typeof g.model !== "string" || !g.model) {
        unmapped.push(
          `${label}: an LLM grader without a judge model (give it model: and it maps to llm-judge)`,
        );
        continue;
      }
      let rubric = criteria;
      if (typeof g.prompt === "string") {
        const abs = path.resolve(ctx.suiteDir, g.prompt);
        if (existsSync(abs)) {
          files[`${out}/rubric.md`] = { copyFrom: abs };
          rubric = undefined;
        } else rubric = g.prompt;
      }
      scorers.push({
        type: "llm-judge",
        ...base,
        model: g.model,
        ...(rubric
          ? { rubric }
          : files[`${out}/rubric.md`]
            ? { rubric_file: `${out}/rubric.md` }
            : { rubric: "The change does what the task asks." }),
      });
      weights.push(typeof g.weight === "number" ? g.weight : undefined);
    } else if (type === "rubrics") {
      unmapped.push(`${label}: rubric criteria need an LLM judge with a model`);
    } else if (REPLY_GRADERS[type]) {
      unmapped.push(`${label}: ${REPLY_GRADERS[type]}; evalgate grades the workspace`);
    } else unmapped.push(`${label}: unknown assertion type`);
  }
  return { scorers, weights, unmapped };
}
