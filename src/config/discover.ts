/** Finding eval files under the paths a user gives. */
import { stat } from "node:fs/promises";
import path from "node:path";
import { glob, isDynamicPattern } from "tinyglobby";
import { ConfigError } from "../errors.js";

export const EVAL_FILE_GLOB = "**/*.eval.{yaml,yml}";
export const SKIPPED_FOLDERS = ["**/.git/**", "**/node_modules/**", "**/.evalgate/**"];

/**
 * Absolute paths of the eval files named by `inputs` (files, folders or globs, relative to `cwd`),
 * sorted and without duplicates. A path that names nothing is an error.
 */
export async function discoverEvalFiles(inputs: readonly string[], cwd: string): Promise<string[]> {
  const found = new Set<string>();
  const problems: string[] = [];
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
        problems.push(`${input}: not an eval file (eval files are YAML: *.eval.yaml or *.eval.yml)`);
        continue;
      }
    } else if (kind === "dir") {
      matches = await glob(EVAL_FILE_GLOB, { cwd: abs, absolute: true, ignore: SKIPPED_FOLDERS, dot: true });
    } else if (isDynamicPattern(input)) {
      matches = await glob(input, { cwd, absolute: true, ignore: SKIPPED_FOLDERS, dot: true });
      matches = matches.filter((m) => /\.ya?ml$/.test(m));
    }
    if (matches.length === 0) {
      problems.push(
        kind === "dir"
          ? `${input}: no *.eval.yaml or *.eval.yml files in this folder`
          : `${input}: ${kind === "missing" ? "no such file, folder or matching glob" : "no eval files"}`,
      );
    }
    for (const m of matches) found.add(path.normalize(m));
  }
  if (problems.length > 0) {
    throw new ConfigError(
      problems.map((message) => ({ message, hint: "pass eval files, folders that hold them, or globs" })),
    );
  }
  return [...found].sort();
}
