/**
 * Where a tests scorer's report is, per grading: a fresh folder outside the workspace that the code
 * under test cannot know before it runs ({REPORT_FILE}, docs/decisions/0185), or the path or glob
 * `report:` names in the workspace (kept for eval files written before {REPORT_FILE}).
 */
import { lstat, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import picomatch from "picomatch";
import { glob } from "tinyglobby";
import type { ScorerInput } from "../config/schema/scorers.js";
import { isWithin } from "../paths.js";
import { CtrfError, looksLikeCtrf, parseCtrf } from "./ctrf.js";
import { JUnitError, parseJUnit, type TestCaseResult } from "./junit.js";
import { looksLikeTap, parseTap, TapError } from "./tap.js";
import type { ScorerContext, ScorerResult } from "./types.js";
import { mustResolveInside, RefusedPath } from "./workspace-path.js";

type TestsOptions = Extract<ScorerInput, { type: "tests" }>;

const REPORT_CAP_BYTES = 64 * 1024 * 1024;

/**
 * Report files matching `report` under `base` (a path, or a glob). A match, or the folder of the
 * report path, that leads out of the workspace is refused before anything is removed or read.
 */
async function reportFiles(ws: string, base: string, report: string): Promise<string[]> {
  const shown = (f: string) => path.relative(ws, f).split(path.sep).join("/");
  if (!picomatch.scan(report).isGlob) {
    const file = path.resolve(base, report);
    await mustResolveInside(ws, path.dirname(file), shown(path.dirname(file)));
    return isWithin(ws, file) ? [file] : [];
  }
  const found = await glob(report, {
    cwd: base,
    absolute: true,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
  });
  for (const f of found) await mustResolveInside(ws, f, shown(f));
  return found.filter((f) => isWithin(ws, f)).sort();
}

/**
 * Where one grading's report is: a fresh folder outside the workspace (no `report:`), or the path
 * or glob `report:` names in the workspace (as before {REPORT_FILE}; the code under test can know it).
 */
export interface ReportPlace {
  /** Placeholders and variables the command gets. */
  extra: { placeholders?: Record<string, string>; env?: Record<string, string> };
  /** How messages name the report's place. */
  shown: string;
  /** The report files, once the command ran. */
  files(): Promise<string[]>;
  /** How messages name one report file. */
  rel(file: string): string;
  /** The report file's size; a link, a FIFO or a file outside the place is refused. */
  size(file: string): Promise<number | undefined>;
  done(): Promise<void>;
}

export async function freshPlace(ctx: ScorerContext, o: TestsOptions): Promise<ReportPlace> {
  const own = ctx.reportDir === undefined;
  const dir = ctx.reportDir ?? (await mkdtemp(path.join(os.tmpdir(), "evalgate-report-")));
  const file = path.join(dir, o.report_format === "ctrf" ? "report.json" : "report.xml");
  return {
    extra: {
      placeholders: { REPORT_FILE: file, REPORT_DIR: dir },
      env: { EVALGATE_REPORT_FILE: file, EVALGATE_REPORT_DIR: dir },
    },
    shown: "{REPORT_FILE}",
    files: async () => {
      const names = await readdir(dir).catch(() => [] as string[]);
      return names.sort().map((n) => path.join(dir, n));
    },
    rel: (f) => (f === file ? "{REPORT_FILE}" : `{REPORT_DIR}/${path.basename(f)}`),
    size: async (f) => {
      const s = await lstat(f);
      // Written by the code under test: a link is never followed (it could lead to evalgate's own files).
      if (!s.isFile()) throw new RefusedPath(`report ${path.basename(f)} is not a regular file`);
      return s.size;
    },
    done: async () => {
      if (own) await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function workspacePlace(
  ctx: ScorerContext,
  o: TestsOptions,
  report: string,
): Promise<ReportPlace> {
  const base = o.cwd ? path.resolve(ctx.workspace, o.cwd) : ctx.workspace;
  const rel = (f: string) => path.relative(ctx.workspace, f).split(path.sep).join("/");
  // A report left in the workspace (by the start tree, a previous run or the agent) must never
  // stand in for the one this command writes.
  for (const f of await reportFiles(ctx.workspace, base, report)) {
    await rm(f, { force: true, recursive: false }).catch(() => undefined);
  }
  return {
    extra: {},
    shown: report,
    files: () => reportFiles(ctx.workspace, base, report),
    rel,
    size: async (file) => {
      try {
        // The test command may run the agent's code: a link out or a FIFO it left is never opened.
        await mustResolveInside(ctx.workspace, file, rel(file));
        const s = await stat(file);
        if (!s.isFile()) throw new RefusedPath(`report ${rel(file)} is not a regular file`);
        return s.size;
      } catch (error) {
        if (error instanceof RefusedPath) throw error;
        return undefined;
      }
    },
    done: async () => {},
  };
}

/** Reads and parses every report file of `place`, or the error result that stops the grading. */
export async function readReports(
  place: ReportPlace,
  format: TestsOptions["report_format"],
): Promise<{ cases: TestCaseResult[]; read: string[] } | Extract<ScorerResult, { state: "error" }>> {
  const cases: TestCaseResult[] = [];
  const read: string[] = [];
  for (const file of await place.files()) {
    const size = await place.size(file);
    if (size === undefined) continue;
    if (size > REPORT_CAP_BYTES) {
      return {
        state: "error",
        reason: `report ${place.rel(file)} is ${size} bytes, more than the 64 MiB cap`,
      };
    }
    try {
      const text = await readFile(file, "utf8");
      cases.push(...parseReport(text, format));
    } catch (error) {
      if (error instanceof JUnitError || error instanceof CtrfError || error instanceof TapError) {
        return { state: "error", reason: `${place.rel(file)}: ${error.message}` };
      }
      throw error;
    }
    read.push(place.rel(file));
  }
  return { cases, read };
}

/** A report's tests in the format it was declared in, else the one its content looks like. */
function parseReport(text: string, format: "junit" | "ctrf" | "tap" | undefined): TestCaseResult[] {
  const kind = format ?? (looksLikeCtrf(text) ? "ctrf" : looksLikeTap(text) ? "tap" : "junit");
  if (kind === "ctrf") return parseCtrf(text);
  if (kind === "tap") return parseTap(text);
  return parseJUnit(text);
}
