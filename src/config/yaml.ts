/**
 * Reading YAML with positions: every value of an eval file can be traced back to its line and key,
 * also after validate.ts dropped the parts that did not parse.
 */
import { type Document, isMap, isPair, isScalar, LineCounter, type Node, parseDocument } from "yaml";
import type { ProblemList } from "../errors.js";
import { MAX_EVAL_FILE_BYTES, readTextFile, TextFileRefused } from "./text-file.js";

export type PathKey = string | number;

/** yaml's `maxAliasCount`: how much aliases may expand before a file is refused as an alias bomb. */
export const MAX_ALIAS_COUNT = 1000;

export interface YamlSource {
  /** Absolute path. */
  path: string;
  /** Path for messages (relative to the working folder). */
  display: string;
  doc: Document.Parsed;
  lines: LineCounter;
  value: unknown;
  /**
   * Set when schema errors were found and the bad parts dropped so that the rest could still be
   * checked (see validateSalvaged (validate.ts)): maps a path of the kept value to the file's path.
   */
  salvage?: Salvage;
}

/** What validateSalvaged (validate.ts) dropped from a file, and how kept paths map back to the file's. */
export interface Salvage {
  /** Paths of the file (original indices) whose values were dropped. */
  pruned: PathKey[][];
  /** A path of the salvaged value → the path of the same node in the file. */
  toFile(path: readonly PathKey[]): PathKey[];
}

/** The path in the file of `path`, a path of the (possibly salvaged) value the planner holds. */
export function filePath(src: YamlSource, path: readonly PathKey[]): PathKey[] {
  return src.salvage ? src.salvage.toFile(path) : [...path];
}

/**
 * Whether a problem at `path` (of the salvaged value) may be a consequence of a dropped part rather
 * than a mistake of its own: it sits at or above something dropped (a weight sum over a dropped
 * scorer, a test missing the key that was misspelt) or under `under` when something there was dropped.
 */
export function mayFollowFromPruned(src: YamlSource, path: readonly PathKey[]): boolean {
  if (!src.salvage) return false;
  const at = src.salvage.toFile(path);
  return src.salvage.pruned.some((p) => at.length <= p.length && at.every((k, i) => p[i] === k));
}

/** Whether anything at or under `path` (a path of the file) was dropped by salvage. */
export function prunedUnder(src: YamlSource, path: readonly PathKey[]): boolean {
  return (
    src.salvage?.pruned.some((p) => p.length >= path.length && path.every((k, i) => p[i] === k)) ?? false
  );
}

/** Reads and parses a YAML file; reports a read or syntax problem and returns undefined on failure. */
export async function readYaml(
  path: string,
  display: string,
  problems: ProblemList,
): Promise<YamlSource | undefined> {
  let text: string;
  try {
    text = await readTextFile(path, MAX_EVAL_FILE_BYTES);
  } catch (error) {
    if (!(error instanceof TextFileRefused)) throw error;
    problems.add({
      file: display,
      message: error.reason === "missing" ? "file not found" : `the file ${error.message}`,
      ...(error.reason === "too-large"
        ? {
            hint: "split it into eval files, or move its tests into files it includes (include: cases/*.yaml)",
          }
        : {}),
    });
    return undefined;
  }
  const lines = new LineCounter();
  // merge: `<<: *defaults`, the YAML 1.1 merge key people share scorers and targets with.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, merge: true });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      const line = e.linePos?.[0]?.line ?? lines.linePos(e.pos[0]).line;
      problems.add({
        file: display,
        line,
        message: `malformed YAML: ${e.message.split("\n")[0]}`,
        hint:
          e.code === "DUPLICATE_KEY"
            ? "each key may appear once per mapping"
            : "check indentation and quoting",
      });
    }
    return undefined;
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // The yaml library refuses an alias bomb ("billion laughs") with a ReferenceError.
    if (!(error instanceof ReferenceError)) throw error;
    problems.add({
      file: display,
      message: `the YAML aliases (*name) expand to too much data: ${error.message}`,
      hint: `an eval file may expand at most ${MAX_ALIAS_COUNT} aliased nodes; repeat the values instead of nesting aliases`,
    });
    return undefined;
  }
  return { path, display, doc, lines, value };
}

export function keyPath(path: readonly PathKey[]): string {
  let out = "";
  for (const k of path) out += typeof k === "number" ? `[${k}]` : out ? `.${k}` : k;
  return out;
}

/** 1-based line of the node at `path` (or of its nearest existing ancestor). */
export function lineOf(src: YamlSource, at: readonly PathKey[], keyName?: string): number | undefined {
  const path = filePath(src, at);
  for (let n = path.length; n >= 0; n--) {
    const node = src.doc.getIn(path.slice(0, n), true) as Node | undefined;
    if (node === undefined || node === null) continue;
    if (keyName !== undefined && n === path.length && isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === keyName);
      const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
      if (range) return src.lines.linePos(range[0]).line;
    }
    if (n === path.length && n > 0) {
      // Point at the key of a mapping value rather than the value's first line.
      const parent = src.doc.getIn(path.slice(0, n - 1), true) as Node | undefined;
      const last = path[n - 1];
      if (parent && isMap(parent) && typeof last === "string") {
        const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === last);
        const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
        if (range) return src.lines.linePos(range[0]).line;
      }
    }
    const range = (node as { range?: [number, number, number] }).range;
    if (range) return src.lines.linePos(range[0]).line;
  }
  return undefined;
}
