/**
 * Finding eval files under the paths a user gives, and the files an `include:` glob names. The walk
 * never descends a linked folder (a link to `/` or to its own parent would walk the whole disk or
 * loop), and keeps a linked file only when the file it points to lies inside the tree searched or
 * the repository (decision 0203).
 */
import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { isDynamicPattern } from "tinyglobby";
import { ConfigError } from "../errors.js";

export const EVAL_FILE_GLOB = "**/*.eval.{yaml,yml}";
/** Folders never searched: a repository's history, dependencies, evalgate's own results. */
export const SKIPPED_FOLDER_NAMES = [".git", "node_modules", ".evalgate"];

const isInside = (dir: string, p: string) => p === dir || p.startsWith(`${dir}${path.sep}`);

/** Where links may point: the tree being searched, and the repository around it. */
export interface LinkBoundary {
  /** The folders a linked file may lie in. */
  roots: string[];
}

async function realOrSelf(p: string): Promise<string> {
  return realpath(p).catch(() => path.resolve(p));
}

/**
 * Files under `dir` whose path relative to `dir` matches `match`, sorted: folders walked without
 * following links; a link to a file kept when its target lies inside `boundary`.
 */
async function walk(
  dir: string,
  match: (rel: string) => boolean,
  boundary: LinkBoundary,
  maxDepth = Number.POSITIVE_INFINITY,
): Promise<string[]> {
  const out: string[] = [];
  const pending: [string, number][] = [[dir, 1]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue; // unreadable or vanished: nothing of it can be an eval file
    }
    for (const e of entries) {
      const abs = path.join(current, e.name);
      if (e.isDirectory()) {
        if (depth < maxDepth && !SKIPPED_FOLDER_NAMES.includes(e.name)) pending.push([abs, depth + 1]);
        continue;
      }
      const rel = path.relative(dir, abs).split(path.sep).join("/");
      if (!match(rel)) continue;
      if (e.isFile()) out.push(abs);
      else if (e.isSymbolicLink()) {
        const target = await realpath(abs).catch(() => undefined);
        const s = target ? await stat(target).catch(() => undefined) : undefined;
        if (target && s?.isFile() && boundary.roots.some((r) => isInside(r, target))) out.push(abs);
      }
    }
  }
  return out.sort();
}

/**
 * Files matching `pattern` (a glob, relative to `cwd`), walked as {@link walk} does from the
 * pattern's fixed part. A pattern without glob characters names one file: it is returned when it
 * exists (a file named on purpose is not second-guessed).
 */
export async function globFiles(pattern: string, cwd: string, boundary: LinkBoundary): Promise<string[]> {
  if (!isDynamicPattern(pattern)) {
    const abs = path.resolve(cwd, pattern);
    const s = await stat(abs).catch(() => undefined);
    return s?.isFile() ? [abs] : [];
  }
  const scan = picomatch.scan(pattern);
  const base = path.resolve(cwd, scan.base || ".");
  const isMatch = picomatch(scan.glob, { dot: true });
  // `cases/*.yaml` looks one folder deep; only a `**` reaches any depth.
  const depth = scan.glob.includes("**") ? Number.POSITIVE_INFINITY : scan.glob.split("/").length;
  const roots = await Promise.all([...boundary.roots, base].map(realOrSelf));
  return walk(base, isMatch, { roots }, depth);
}

/** What one path given by the user names: its eval files, or why it names none. */
export interface Discovered {
  input: string;
  matches: string[];
  problem?: string;
}

/**
 * The eval files each of `inputs` (files, folders or globs, relative to `cwd`) names. `projectRoot`:
 * where linked eval files may point besides the folder searched.
 */
export async function discoverEach(
  inputs: readonly string[],
  cwd: string,
  projectRoot: string = cwd,
): Promise<Discovered[]> {
  const out: Discovered[] = [];
  const boundary: LinkBoundary = { roots: [await realOrSelf(projectRoot)] };
  const isEvalFile = picomatch(EVAL_FILE_GLOB, { dot: true });
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
      matches = await walk(abs, isEvalFile, { roots: [...boundary.roots, await realOrSelf(abs)] });
    } else if (isDynamicPattern(input)) {
      matches = (await globFiles(input, cwd, boundary)).filter((m) => /\.ya?ml$/.test(m));
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
 * sorted and without duplicates. A path that names nothing is an error. `projectRoot`: where linked
 * eval files may point besides the folder searched.
 */
export async function discoverEvalFiles(
  inputs: readonly string[],
  cwd: string,
  projectRoot: string = cwd,
): Promise<string[]> {
  return evalFilesOf(await discoverEach(inputs, cwd, projectRoot));
}
