/**
 * `ast-grep`: counts the matches of an AST pattern in the workspace's files and checks the count
 * (present: at least one; absent: none; count: between min and max).
 *
 * Files are listed by evalgate, not by ast-grep's own walker, which skips files named in
 * .gitignore and hidden files: an agent could otherwise hide code from the scorer with one line of
 * .gitignore. A search that finds no file at all is an error (a mistyped path must not make
 * `absent` pass), except with `only_changed`, where "the agent changed no such file" is an answer.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { glob } from "tinyglobby";
import type { ScorerInput } from "../config/schema/scorers.js";
import {
  type AstGrep,
  LANGUAGES,
  languageProblem,
  loadAstGrep,
  matcherOf,
  patternProblem,
} from "./ast-grep-native.js";
import type { Scorer, ScorerContext, ScorerProblem, ScorerResult } from "./types.js";
import { insideOf, mustResolveInside, RefusedPath } from "./workspace-path.js";

type AstGrepOptions = Extract<ScorerInput, { type: "ast-grep" }>;

/** Never searched: dependencies and git's own files. */
const ALWAYS_IGNORED = ["**/node_modules/**", "**/.git/**"];
const FILE_CAP_BYTES = 5 * 1024 * 1024;
const RECORDED_MATCHES = 50;

export interface AstGrepMatch {
  file: string;
  line: number;
  column: number;
  text: string;
}

function outsideWorkspace(p: string): boolean {
  return path.isAbsolute(p) || p.split(/[\\/]/).includes("..");
}

function firstLine(text: string): string {
  const line = text.split("\n")[0]!.trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** The expectation as text: "at least 1", "none", "between 2 and 5". */
function expectation(o: AstGrepOptions): { min: number; max: number; text: string } {
  const expect = o.expect ?? "present";
  if (expect === "present") return { min: 1, max: Number.POSITIVE_INFINITY, text: "at least one" };
  if (expect === "absent") return { min: 0, max: 0, text: "none" };
  const min = o.min ?? 0;
  const max = o.max ?? Number.POSITIVE_INFINITY;
  const text =
    max === Number.POSITIVE_INFINITY
      ? `at least ${min}`
      : min === 0
        ? `at most ${max}`
        : min === max
          ? `exactly ${min}`
          : `between ${min} and ${max}`;
  return { min, max, text };
}

/**
 * Workspace-relative paths of the files to search (of `only`, when given: the files the agent
 * changed), or an error message.
 */
async function filesToSearch(
  ws: string,
  o: AstGrepOptions,
  only?: ReadonlySet<string>,
): Promise<string[] | { error: string }> {
  const target = o.path ?? ".";
  const ignore = [...ALWAYS_IGNORED, ...(o.exclude ?? [])];
  const exts = LANGUAGES[o.lang].extensions;
  let found: string[];
  if (picomatch.scan(target).isGlob) {
    found = await glob(target, { cwd: ws, dot: true, onlyFiles: true, followSymbolicLinks: false, ignore });
  } else {
    const abs = path.resolve(ws, target);
    await mustResolveInside(ws, abs, target);
    let kind: "file" | "dir";
    try {
      const s = await stat(abs);
      if (!s.isDirectory() && !s.isFile()) throw new RefusedPath(`${target} is not a regular file`);
      kind = s.isDirectory() ? "dir" : "file";
    } catch (error) {
      if (error instanceof RefusedPath) throw error;
      return { error: `${target} does not exist in the workspace` };
    }
    if (kind === "file") found = [path.relative(ws, abs)];
    else {
      const rel = path.relative(ws, abs).split(path.sep).join("/");
      // A brace list of one is not expanded: `*.{go}` would match nothing.
      const ext = exts.length === 1 ? exts[0]! : `{${exts.join(",")}}`;
      const pattern = `${rel ? `${rel}/` : ""}**/*.${ext}`;
      found = await glob(pattern, {
        cwd: ws,
        dot: true,
        onlyFiles: true,
        followSymbolicLinks: false,
        ignore,
      });
    }
  }
  // The glob's own base may be a link (`leak/**` with leak → a folder outside): what it found
  // there is not the workspace's.
  const inside = insideOf(ws);
  const out: string[] = [];
  for (const f of found) {
    const rel = f.split(path.sep).join("/");
    if (only && !only.has(rel)) continue;
    if (await inside(path.join(ws, f))) out.push(rel);
  }
  return out.sort();
}

export const astGrepScorer: Scorer = {
  check(options: ScorerInput): ScorerProblem[] {
    const o = options as AstGrepOptions;
    const problems: ScorerProblem[] = [];
    const expect = o.expect ?? "present";
    if (expect === "count" && o.min === undefined && o.max === undefined) {
      problems.push({
        at: ["expect"],
        message: "expect: count needs min, max or both",
        hint: "e.g. min: 1, max: 3",
      });
    }
    if (expect !== "count" && (o.min !== undefined || o.max !== undefined)) {
      problems.push({
        at: [o.min !== undefined ? "min" : "max"],
        message: `min and max go with expect: count, not expect: ${expect}`,
        hint: "use expect: count with min / max",
      });
    }
    if (o.min !== undefined && o.max !== undefined && o.min > o.max) {
      problems.push({ at: ["min"], message: `min (${o.min}) is greater than max (${o.max})` });
    }
    if (o.path !== undefined && outsideWorkspace(o.path)) {
      problems.push({
        at: ["path"],
        message: `path "${o.path}" is outside the workspace`,
        hint: 'give a folder, file or glob relative to the workspace, e.g. src or "src/**/*.ts"',
      });
    }
    const globs: [string, (string | number)[]][] = (o.exclude ?? []).map((g, i) => [g, ["exclude", i]]);
    if (o.path !== undefined && picomatch.scan(o.path).isGlob) globs.unshift([o.path, ["path"]]);
    for (const [g, at] of globs) {
      try {
        picomatch.makeRe(g, { dot: true, strictBrackets: true });
      } catch (e) {
        problems.push({ at, message: `bad glob "${g}": ${(e as Error).message}` });
      }
    }
    const ag = loadAstGrep();
    const langProblem = languageProblem(ag, o.lang);
    if (langProblem) {
      problems.push({
        at: ["lang"],
        message: `ast-grep cannot use ${o.lang} here: ${langProblem}`,
        hint: "reinstall evalgate's dependencies (npm ci), or pick another language",
      });
    } else {
      const why = patternProblem(ag as AstGrep, o.lang, o.pattern, o.selector);
      if (why) {
        problems.push({
          at: ["pattern"],
          message: why,
          hint: `write the pattern as ${o.lang} code, with $NAME for one node and $$$ for any number of nodes`,
        });
      }
    }
    return problems;
  },

  async run(ctx: ScorerContext): Promise<ScorerResult> {
    const o = ctx.spec.options as AstGrepOptions;
    const deadline = performance.now() + ctx.spec.timeoutMs;
    const ag = loadAstGrep();
    const langProblem = languageProblem(ag, o.lang);
    if (langProblem) return { state: "error", reason: langProblem };
    const { napi } = ag as AstGrep;
    const napiLang = LANGUAGES[o.lang].napiName;
    const matcher = matcherOf(o.pattern, o.selector);

    const changed = o.only_changed
      ? new Set(ctx.diff.files.filter((f) => f.status !== "deleted").map((f) => f.path))
      : undefined;
    const files = await filesToSearch(ctx.workspace, o, changed);
    if ("error" in files) return { state: "error", reason: files.error };
    if (!o.only_changed && files.length === 0) {
      return {
        state: "error",
        reason: `no ${o.lang} file to search in ${o.path ?? "the workspace"}`,
      };
    }

    const matches: AstGrepMatch[] = [];
    const skipped: string[] = [];
    const perFile = new Map<string, number>();
    for (const file of files) {
      if (performance.now() > deadline) {
        return {
          state: "error",
          reason: `timed out after ${Math.round(ctx.spec.timeoutMs / 1000)} s (${perFile.size} of ${files.length} files searched)`,
          timedOut: true,
        };
      }
      const abs = path.join(ctx.workspace, file);
      const s = await stat(abs);
      // Never opened: a FIFO would block the read past every timeout.
      if (!s.isFile()) throw new RefusedPath(`${file} is not a regular file`);
      if (s.size > FILE_CAP_BYTES) {
        skipped.push(file);
        continue;
      }
      const root = await napi.parseAsync(napiLang, await readFile(abs, "utf8"));
      const found = root.root().findAll(matcher);
      perFile.set(file, found.length);
      for (const n of found) {
        const { line, column } = n.range().start;
        matches.push({ file, line: line + 1, column: column + 1, text: firstLine(n.text()) });
      }
    }

    const log = matches.map((m) => `${m.file}:${m.line}:${m.column}: ${m.text}`);
    if (skipped.length) log.push(...skipped.map((f) => `skipped (over 5 MiB): ${f}`));
    await writeFile(ctx.logFile, `${log.join("\n")}${log.length ? "\n" : ""}`).catch(() => undefined);

    const want = expectation(o);
    const count = matches.length;
    const passed = count >= want.min && count <= want.max;
    const where = (n: number) =>
      matches
        .slice(0, n)
        .map((m) => `${m.file}:${m.line} ${m.text}`)
        .join(", ");
    const inFiles = [...perFile.values()].filter((n) => n > 0).length;
    const scope = o.only_changed
      ? `${files.length} changed ${o.lang} file${files.length === 1 ? "" : "s"}`
      : `${files.length} ${o.lang} file${files.length === 1 ? "" : "s"}`;
    const found =
      count === 0
        ? `no match of ${o.pattern} in ${scope}`
        : `${count} match${count === 1 ? "" : "es"} of ${o.pattern} in ${inFiles} of ${scope}`;
    const reason = passed
      ? `${found}${count > 0 ? ` (${where(2)})` : ""}`
      : `${found}, expected ${want.text}${count > 0 ? `: ${where(3)}` : ""}`;
    return {
      state: "complete",
      score: passed ? 1 : 0,
      passed,
      reason,
      details: {
        pattern: o.pattern,
        lang: o.lang,
        expect: o.expect ?? "present",
        match_count: count,
        files_searched: perFile.size,
        files_with_matches: inFiles,
        files_skipped: skipped,
        matches: matches.slice(0, RECORDED_MATCHES),
        matches_truncated: count > RECORDED_MATCHES,
      },
    };
  },
};
