/** Finding eval files under the paths a user gives. */
import { stat } from "node:fs/promises";
import path from "node:path";
import { glob, isDynamicPattern } from "tinyglobby";
import { ConfigError } from "../errors.js";

export const EVAL_FILE_GLOB = "**/*.eval.{yaml,yml}";
export const SKIPPED_FOLDERS = ["**/.git/**", "**/node_modules/**", "**/.evalgate/**"];

/** What one path given by the user names: its eval files, or why it names none. */
export interface Discovered {
  input: string;
  matches: string[];
  problem?: string;
}

/** The eval files each of `inputs` (files, folders or globs, relative to `cwd`) names. */
export async function discoverEach(inputs: readonly string[], cwd: string): Promise<Discovered[]> {
  const out: Discovered[] = [];
  for (const input of inputs.length > 0 ? inputs : ["."]) {
    const abs = path.resolve(cwd, input);
    let kind: "file" | "dir" | "missing" = "missing";
    try {
      const s = await stat(abs);
      kind = s.isDirectory() ? "dir" : "file";
    } catch {
      kind = "missing";
    }
    let matches: string[] = [];
    if (kind === "file") {
      // A file named on purpose need not be called *.eval.yaml, but it must be YAML: reading
      // anything else as an eval file only lists its lines as unknown keys.
      if (/\.ya?ml$/i.test(abs)) matches = [abs];
      else {
        out.push({
          input,
          matches,
          problem: `${input}: not an eval file (eval files are YAML: *.eval.yaml or *.eval.yml)`,
        });
        continue;
      }
    } else if (kind === "dir") {
      matches = await glob(EVAL_FILE_GLOB, { cwd: abs, absolute: true, ignore: SKIPPED_FOLDERS, dot: true });
    } else if (isDynamicPattern(input)) {
      matches = await glob(input, { cwd, absolute: true, ignore: SKIPPED_FOLDERS, dot: true });
      matches = matches.filter((m) => /\.ya?ml$/.test(m));
    }
    const problem =
      matches.length > 0
        ? undefined
        : kind === "dir"
          ? `${input}: no *.eval.yaml or *.eval.yml files in this folder`
          : `${input}: ${kind === "missing" ? "no such file, folder or matching glob" : "no eval files"}`;
    out.push({ input, matches: matches.map((m) => path.normalize(m)), ...(problem ? { problem } : {}) });
  }
  return out;
}

/** Sorted, without duplicates; a path that names nothing is an error (each listed, with the fix). */
export function evalFilesOf(found: readonly Discovered[]): string[] {
  const problems = found.flatMap((d) => (d.problem ? [d.problem] : []));
  if (problems.length > 0) {
    throw new ConfigError(
      problems.map((message) => ({ message, hint: "pass eval files, folders that hold them, or globs" })),
    );
  }
  return [...new Set(found.flatMap((d) => d.matches))].sort();
}

/**
 * Absolute paths of the eval files named by `inputs` (files, folders or globs, relative to `cwd`),
 * sorted and without duplicates. A path that names nothing is an error.
 */
export async function discoverEvalFiles(inputs: readonly string[], cwd: string): Promise<string[]> {
  return evalFilesOf(await discoverEach(inputs, cwd));
}
