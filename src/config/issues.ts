/**
 * A zod issue in words: the file, the line, the key, what is wrong and a hint (the keys allowed
 * there, the nearest known name, the branch of a union the user meant).
 */
import { z } from "zod";
import { type ConfigProblem, didYouMean } from "../errors.js";
import { SLUG_RULE, suggestSlug } from "./schema/values.js";
import { keyPath, lineOf, type PathKey, type YamlSource } from "./yaml.js";

export function valueAt(root: unknown, path: readonly PathKey[]): unknown {
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

export function describeIssue(
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
      return issue.keys.map((k) => ({ ...at(k), ...unknownKey(k, allowed) }));
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
      return [{ ...at(), message: rangeMessage(issue, here) }];
    }
    case "custom":
      return [{ ...at(), message: customMessage(issue.message, here) }];
    default:
      return [{ ...at(), message: issue.message }];
  }
}

/** An unknown key, with the nearest allowed one or the list of them. */
function unknownKey(key: string, allowed: readonly string[]): Pick<ConfigProblem, "message" | "hint"> {
  const guess = didYouMean(key, [...allowed]);
  return {
    message: `unknown key "${key}"`,
    hint: guess ? `did you mean "${guess}"?` : `allowed keys here: ${allowed.join(", ")}`,
  };
}

/** A value past its bound: what it is, and the bound with its unit. */
function rangeMessage(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig, here: unknown): string {
  const bound = issue.code === "too_small" ? "at least" : "at most";
  const limit = issue.code === "too_small" ? issue.minimum : issue.maximum;
  const what = issue.origin === "array" ? "items" : issue.origin === "string" ? "characters" : "";
  return `${typeName(here)} is out of range: must be ${bound} ${String(limit)}${what ? ` ${what}` : ""}`;
}

/**
 * A refinement's message: a range's ("out of range: …") reads after what the value is ("a string
 * is out of range: …"); any other (a repeat range's "max must be at least min") is a sentence of its own.
 */
function customMessage(message: string, here: unknown): string {
  return message.startsWith("out of ") ? `${typeName(here)} is ${message}` : message;
}

function article(expected: string): string {
  if (expected === "array") return "a list";
  if (expected === "object") return "a mapping";
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/** Picks the union branch whose issues fit the value: the one without complaints about its shape. */
export function chooseBranch(branches: z.core.$ZodIssue[][], value: unknown): z.core.$ZodIssue[] | undefined {
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
