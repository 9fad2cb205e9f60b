/**
 * Validating YAML against a zod schema so that every problem names the file, the line, the key and
 * a hint, and so that one mistake does not hide the others (validateSalvaged).
 */
import type { z } from "zod";
import type { ProblemList } from "../errors.js";
import { chooseBranch, describeIssue, valueAt } from "./issues.js";
import type { PathKey, YamlSource } from "./yaml.js";

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
