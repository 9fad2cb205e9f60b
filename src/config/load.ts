/**
 * Reading YAML with positions, and validating it against a zod schema so that every problem names
 * the file, the line, the key and a hint.
 */
import { readFile } from "node:fs/promises";
import { type Document, isMap, isPair, isScalar, LineCounter, type Node, parseDocument } from "yaml";
import { z } from "zod";
import { type ConfigProblem, didYouMean, type ProblemList } from "../errors.js";
import { SLUG_RULE, suggestSlug } from "./schema.js";

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
   * checked (see {@link validateSalvaged}): maps a path of the kept value to the file's path.
   */
  salvage?: Salvage;
}

/** What {@link validateSalvaged} dropped from a file, and how kept paths map back to the file's. */
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
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problems.add({
      file: display,
      message: code === "ENOENT" ? "file not found" : `cannot read the file (${code ?? String(error)})`,
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

function valueAt(root: unknown, path: readonly PathKey[]): unknown {
  let v: unknown = root;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PathKey, unknown>)[k];
  }
  return v;
}

function typeName(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  if (typeof v === "string") return `the text ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

/** The object schema that applies at `path`, used to list the keys that are allowed there. */
function schemaAt(schema: z.ZodType, path: readonly PathKey[], root: unknown): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; i <= path.length && s; i++) {
    s = unwrap(s, valueAt(root, path.slice(0, i)));
    if (i === path.length || !s) break;
    const k = path[i]!;
    if (s instanceof z.ZodObject && typeof k === "string") s = s.shape[k] as z.ZodType | undefined;
    else if (s instanceof z.ZodArray && typeof k === "number") s = s.element as z.ZodType;
    else if (s instanceof z.ZodRecord) s = s.valueType as z.ZodType;
    else return undefined;
  }
  return s;
}

function unwrap(s: z.ZodType, value: unknown): z.ZodType | undefined {
  let cur: z.ZodType = s;
  for (;;) {
    if (cur instanceof z.ZodOptional || cur instanceof z.ZodNullable) cur = cur.unwrap() as z.ZodType;
    else if (cur instanceof z.ZodUnion) {
      const picked = pickUnionOption(cur, value);
      if (!picked) return undefined;
      cur = picked;
    } else return cur;
  }
}

/** The option of a union the user most likely meant: the matching `type`, else the most known keys. */
function pickUnionOption(u: z.ZodUnion, value: unknown): z.ZodType | undefined {
  const options = u.options as z.ZodType[];
  const objects = options.filter((o): o is z.ZodObject => o instanceof z.ZodObject);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return options.find((o) => !(o instanceof z.ZodObject)) ?? objects[0];
  }
  const keys = Object.keys(value);
  const type = (value as Record<string, unknown>).type;
  const byType = objects.find((o) => {
    const t = o.shape.type as z.ZodType | undefined;
    return t instanceof z.ZodLiteral && t.value === type;
  });
  if (byType) return byType;
  let best: z.ZodObject | undefined;
  let bestScore = -1;
  for (const o of objects) {
    const shape = o.shape as Record<string, z.ZodType>;
    const required = Object.entries(shape).filter(([, v]) => !(v instanceof z.ZodOptional));
    const score =
      keys.filter((k) => k in shape).length * 2 + required.filter(([k]) => keys.includes(k)).length * 3;
    if (score > bestScore) {
      best = o;
      bestScore = score;
    }
  }
  return best;
}

function allowedKeys(schema: z.ZodType, path: readonly PathKey[], root: unknown): string[] {
  const s = schemaAt(schema, path, root);
  return s instanceof z.ZodObject ? Object.keys(s.shape).filter((k) => k !== "$schema") : [];
}

/**
 * Validates `src.value` (or the value at `base` inside it) with `schema`. Problems go to `problems`;
 * the parsed value is returned only when there were none.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  src: YamlSource,
  problems: ProblemList,
  base: readonly PathKey[] = [],
): z.infer<S> | undefined {
  const value = valueAt(src.value, base);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    for (const p of describeIssue(schema, src, issue, base, value)) problems.add(p);
  }
  return undefined;
}

function describeIssue(
  schema: z.ZodType,
  src: YamlSource,
  issue: z.core.$ZodIssue,
  base: readonly PathKey[],
  root: unknown,
): ConfigProblem[] {
  const rel = issue.path as PathKey[];
  const path = [...base, ...rel];
  const here = valueAt(root, rel);
  const at = (key?: string): Pick<ConfigProblem, "file" | "line" | "key"> => ({
    file: src.display,
    line: lineOf(src, path, key),
    key: keyPath(key ? [...path, key] : path) || undefined,
  });

  switch (issue.code) {
    case "unrecognized_keys": {
      const allowed = allowedKeys(schema, rel, root);
      return issue.keys.map((k) => {
        const guess = didYouMean(k, allowed);
        return {
          ...at(k),
          message: `unknown key "${k}"`,
          hint: guess ? `did you mean "${guess}"?` : `allowed keys here: ${allowed.join(", ")}`,
        };
      });
    }
    case "invalid_union": {
      if ("note" in issue && issue.note === "No matching discriminator") {
        const options = ((issue as { options?: unknown[] }).options ?? []).map(String);
        const given = here;
        const guess = typeof given === "string" ? didYouMean(given, options) : undefined;
        return [
          {
            ...at(),
            message:
              given === undefined
                ? `missing required key (one of: ${options.join(", ")})`
                : `unknown ${String(rel.at(-1) ?? "type")} ${JSON.stringify(given)}`,
            hint: `${guess ? `did you mean "${guess}"? ` : ""}supported: ${options.join(", ")}`,
          },
        ];
      }
      // A plain union (a test or an include; a string or a list): report the branch the user meant.
      const branches = issue.errors as z.core.$ZodIssue[][];
      const chosen = chooseBranch(branches, here);
      if (!chosen) return [{ ...at(), message: `${typeName(here)} is not valid here` }];
      return chosen.flatMap((sub) =>
        describeIssue(schema, src, { ...sub, path: [...rel, ...sub.path] } as z.core.$ZodIssue, base, root),
      );
    }
    case "invalid_type": {
      if (here === undefined) {
        const key = rel.at(-1);
        return [
          {
            ...at(),
            message: `missing required key "${String(key)}"`,
            hint: `add ${String(key)}: (${issue.expected})`,
          },
        ];
      }
      return [{ ...at(), message: `expected ${article(issue.expected)}, got ${typeName(here)}` }];
    }
    case "invalid_value": {
      const options = issue.values.map(String);
      const guess = typeof here === "string" ? didYouMean(here, options) : undefined;
      return [
        {
          ...at(),
          message: `${typeName(here)} is not allowed here`,
          hint: `${guess ? `did you mean "${guess}"? ` : ""}use one of: ${options.join(", ")}`,
        },
      ];
    }
    case "invalid_format": {
      const slug = issue.message === SLUG_RULE && typeof here === "string" ? suggestSlug(here) : undefined;
      return [
        {
          ...at(),
          message: `${typeName(here)} is not ${issue.message}`,
          ...(slug && { hint: `for example "${slug}"` }),
        },
      ];
    }
    case "too_small":
    case "too_big": {
      const bound = issue.code === "too_small" ? "at least" : "at most";
      const limit = issue.code === "too_small" ? issue.minimum : issue.maximum;
      const what =
        issue.origin === "array"
          ? "items"
          : issue.origin === "string"
            ? "characters"
            : issue.origin === "number"
              ? ""
              : "";
      return [
        {
          ...at(),
          message: `${typeName(here)} is out of range: must be ${bound} ${String(limit)}${what ? ` ${what}` : ""}`,
        },
      ];
    }
    case "custom":
      // Refinements say what is wrong: a range's ("out of range: …") reads after what the value is
      // ("a string is out of range: …"); any other (a repeat range's "max must be at least min")
      // is a sentence of its own.
      return [
        {
          ...at(),
          message: issue.message.startsWith("out of ")
            ? `${typeName(here)} is ${issue.message}`
            : issue.message,
        },
      ];
    default:
      return [{ ...at(), message: issue.message }];
  }
}

function article(expected: string): string {
  if (expected === "array") return "a list";
  if (expected === "object") return "a mapping";
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/** Picks the union branch whose issues fit the value: the one without complaints about its shape. */
function chooseBranch(branches: z.core.$ZodIssue[][], value: unknown): z.core.$ZodIssue[] | undefined {
  if (branches.length === 0) return undefined;
  const isObject = value !== null && typeof value === "object" && !Array.isArray(value);
  const scored = branches.map((issues) => {
    let score = 0;
    for (const i of issues) {
      if (i.path.length === 0 && i.code === "invalid_type") score += 100; // wrong kind of value entirely
      if (i.code === "unrecognized_keys" && i.path.length === 0) score += 10 * i.keys.length;
      if (i.code === "invalid_type" && i.path.length === 1 && isObject) {
        const k = i.path[0];
        if ((value as Record<PathKey, unknown>)[k as PathKey] === undefined) score += 5; // required key absent
      }
      score += 1;
    }
    return { issues, score };
  });
  scored.sort((a, b) => a.score - b.score);
  return scored[0]!.issues;
}

/** Stands for an array element that salvage dropped, until the array is compacted. */
const DROPPED = Symbol("dropped");

/**
 * Like {@link validate}, but on schema errors it does not give up on the file: every problem is
 * reported, then the parts the problems are about are dropped (an unknown key; a bad value; the
 * mapping that misses a required key; the test, target or scorer that cannot be read) until the rest
 * parses, and the rest is returned so that the planner's own checks (paths, weights, agents, and
 * whatever checks are added later) still run on it: one `validate` shows every mistake at once.
 * The salvaged value's paths map back to the file's lines through `src.salvage`. Returns undefined
 * only when nothing sensible is left (the file itself is not the right shape).
 */
export function validateSalvaged<S extends z.ZodType>(
  schema: S,
  src: YamlSource,
  problems: ProblemList,
): z.infer<S> | undefined {
  const first = validate(schema, src, problems);
  if (first !== undefined) return first;
  const work = structuredClone(src.value);
  const pruned: PathKey[][] = [];
  for (let round = 0; round < 50; round++) {
    const { value, toFile } = compact(work);
    const result = schema.safeParse(value);
    if (result.success) {
      src.salvage = { pruned, toFile };
      return result.data;
    }
    let progress = false;
    for (const issue of leafIssues(result.error.issues, value)) {
      const at = toFile(issue.path as PathKey[]);
      if (issue.code === "unrecognized_keys") {
        const holder = valueAt(work, at) as Record<string, unknown> | undefined;
        for (const k of issue.keys) {
          if (holder && typeof holder === "object" && k in holder) {
            delete holder[k];
            pruned.push([...at, k]);
            progress = true;
          }
        }
        continue;
      }
      let target = at;
      // A required key that is missing: the mapping that needs it goes.
      if (valueAt(work, target) === undefined) target = target.slice(0, -1);
      // An element of a list of plain values: the list goes (evalgate reads such lists whole).
      const last = target.at(-1);
      const element = valueAt(work, target);
      if (typeof last === "number" && (element === null || typeof element !== "object")) {
        target = target.slice(0, -1);
      }
      if (target.length === 0) return undefined;
      const parent = valueAt(work, target.slice(0, -1));
      const key = target.at(-1)!;
      if (parent === null || typeof parent !== "object") continue;
      if (Array.isArray(parent) && typeof key === "number") {
        if (parent[key] === DROPPED) continue;
        parent[key] = DROPPED;
      } else {
        if (!(key in parent)) continue;
        delete (parent as Record<PathKey, unknown>)[key];
      }
      pruned.push(target);
      progress = true;
    }
    if (!progress) return undefined;
  }
  return undefined;
}

/** The issues that name a concrete place: a plain union's issue becomes those of its likely branch. */
function leafIssues(issues: readonly z.core.$ZodIssue[], root: unknown): z.core.$ZodIssue[] {
  const out: z.core.$ZodIssue[] = [];
  for (const issue of issues) {
    if (issue.code === "invalid_union" && !("note" in issue && issue.note === "No matching discriminator")) {
      const chosen = chooseBranch(
        issue.errors as z.core.$ZodIssue[][],
        valueAt(root, issue.path as PathKey[]),
      );
      if (chosen && chosen.length > 0) {
        const nested = chosen.map(
          (sub) => ({ ...sub, path: [...issue.path, ...sub.path] }) as z.core.$ZodIssue,
        );
        // A value that fails every branch at its own place (a string that is no duration) goes whole.
        out.push(...leafIssues(nested, root));
        continue;
      }
    }
    out.push(issue);
  }
  return out;
}

/** A copy of `value` without dropped elements, and the map from its paths to the original's. */
function compact(value: unknown): { value: unknown; toFile: (path: readonly PathKey[]) => PathKey[] } {
  const indexMaps = new Map<string, number[]>();
  const copy = (v: unknown, at: PathKey[]): unknown => {
    if (Array.isArray(v)) {
      const kept: number[] = [];
      const out: unknown[] = [];
      v.forEach((e, i) => {
        if (e === DROPPED) return;
        kept.push(i);
        out.push(copy(e, [...at, i]));
      });
      if (kept.length !== v.length) indexMaps.set(JSON.stringify(at), kept);
      return out;
    }
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, e] of Object.entries(v)) out[k] = copy(e, [...at, k]);
      return out;
    }
    return v;
  };
  const toFile = (path: readonly PathKey[]): PathKey[] => {
    const out: PathKey[] = [];
    for (const k of path) {
      const map = typeof k === "number" ? indexMaps.get(JSON.stringify(out)) : undefined;
      out.push(map && typeof k === "number" ? (map[k] ?? k) : k);
    }
    return out;
  };
  return { value: copy(value, []), toFile };
}
