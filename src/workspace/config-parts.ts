/**
 * The part of a shared configuration file that configures the tests: keys of a `package.json`, the
 * `[tool.pytest…]` tables of a `pyproject.toml`, the `[tool:pytest]` section of a `setup.cfg`. The
 * rest of such a file is the agent's to change (a dependency, a linter setting); this part is
 * compared with the start tree's and put back on its own (test-config.ts).
 */
import { isDeepStrictEqual } from "node:util";
import { parse as parseToml } from "smol-toml";

/** What one kind of file protects, and how it reads, compares and puts back that part. */
export interface ConfigPart {
  /** How the part is named in a report: `(scripts, jest)`, `[tool.pytest]`. */
  describe(changedKeys: readonly string[]): string;
  /**
   * The keys of the part that differ between `now` and `was` (file texts; `was` undefined for a
   * file new in the workspace), or undefined when `now` cannot be read (then the whole file is put
   * back). An empty list: the part is the same.
   */
  differs(now: string, was: string | undefined): string[] | undefined;
  /** `now` with the part as in `was` (absent when `was` is undefined); undefined when it cannot be done. */
  restore(now: string, was: string | undefined): string | undefined;
}

/** `package.json`: the scripts a scorer runs, and the test runners' own configuration keys. */
export const PACKAGE_JSON_KEYS = ["scripts", "jest", "mocha", "ava", "vitest", "c8", "nyc"] as const;

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    // npm reads a file that starts with a byte order mark; JSON.parse does not.
    const v: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export const packageJsonPart: ConfigPart = {
  describe: (keys) => `(${keys.join(", ")})`,
  differs(now, was) {
    const a = jsonObject(now);
    if (!a) return undefined;
    const b = (was === undefined ? {} : jsonObject(was)) ?? {};
    return PACKAGE_JSON_KEYS.filter((k) => !isDeepStrictEqual(a[k], b[k]));
  },
  restore(now, was) {
    const a = jsonObject(now);
    const b = (was === undefined ? {} : jsonObject(was)) ?? {};
    if (!a) return undefined;
    for (const k of PACKAGE_JSON_KEYS) {
      if (k in b) a[k] = b[k];
      else delete a[k];
    }
    // The file keeps its indentation and final newline.
    const indent = /^\{\r?\n([ \t]+)"/.exec(now)?.[1] ?? "  ";
    return `${JSON.stringify(a, null, indent)}${now.endsWith("\n") ? "\n" : ""}`;
  },
};

interface Section {
  name: string;
  /** Line indexes: the header and the lines up to the next header. */
  start: number;
  end: number;
}

/** The sections of an INI or TOML text by their header lines (`[name]`, `[[name]]`). */
function sections(lines: readonly string[], normalize: (name: string) => string): Section[] {
  const out: Section[] = [];
  lines.forEach((line, i) => {
    const m = /^\s*\[\[?([^[\]]+)\]\]?\s*([#;].*)?$/.exec(line);
    if (!m) return;
    if (out.length > 0) out[out.length - 1]!.end = i;
    out.push({ name: normalize(m[1]!), start: i, end: lines.length });
  });
  return out;
}

/** Replaces the sections of `now` that `isPart` names with those of `was`, appended at the end. */
function swapSections(
  now: string,
  was: string | undefined,
  isPart: (name: string) => boolean,
  normalize: (name: string) => string,
): string {
  const nowLines = now.split("\n");
  const drop = new Set<number>();
  for (const s of sections(nowLines, normalize).filter((s) => isPart(s.name))) {
    for (let i = s.start; i < s.end; i++) drop.add(i);
  }
  const kept = nowLines.filter((_, i) => !drop.has(i)).join("\n");
  if (was === undefined) return kept;
  const wasLines = was.split("\n");
  const added = sections(wasLines, normalize)
    .filter((s) => isPart(s.name))
    .map((s) => wasLines.slice(s.start, s.end).join("\n").replace(/\n+$/, ""));
  if (added.length === 0) return kept;
  return `${kept.replace(/\n*$/, "\n\n")}${added.join("\n\n")}\n`;
}

const tomlName = (name: string) =>
  name
    .split(".")
    .map((p) => p.trim().replace(/^(["'])(.*)\1$/, "$2"))
    .join(".");

function pytestTable(text: string): { ok: boolean; value: unknown } {
  try {
    const doc = parseToml(text) as { tool?: { pytest?: unknown } };
    return { ok: true, value: doc.tool?.pytest };
  } catch {
    return { ok: false, value: undefined };
  }
}

/** `pyproject.toml`: `[tool.pytest]` (pytest 9) and `[tool.pytest.ini_options]`, however written. */
export const pyprojectPart: ConfigPart = {
  describe: () => "[tool.pytest]",
  differs(now, was) {
    const a = pytestTable(now);
    if (!a.ok) return undefined;
    const b = was === undefined ? undefined : pytestTable(was).value;
    return isDeepStrictEqual(a.value, b) ? [] : ["tool.pytest"];
  },
  restore(now, was) {
    const isPart = (n: string) => n === "tool.pytest" || n.startsWith("tool.pytest.");
    const text = swapSections(now, was, isPart, tomlName);
    // Written some other way (dotted keys, an inline table): the caller puts the whole file back.
    const got = pytestTable(text);
    const want = was === undefined ? undefined : pytestTable(was).value;
    return got.ok && isDeepStrictEqual(got.value, want) ? text : undefined;
  },
};

const iniName = (name: string) => name.trim();

function iniSection(text: string, name: string): string[] {
  const lines = text.split("\n");
  return sections(lines, iniName)
    .filter((s) => s.name === name)
    .flatMap((s) => lines.slice(s.start, s.end).map((l) => l.trimEnd()))
    .filter((l) => l !== "");
}

/** `setup.cfg`: its `[tool:pytest]` section. */
export const setupCfgPart: ConfigPart = {
  describe: () => "[tool:pytest]",
  differs(now, was) {
    const b = was === undefined ? [] : iniSection(was, "tool:pytest");
    return isDeepStrictEqual(iniSection(now, "tool:pytest"), b) ? [] : ["tool:pytest"];
  },
  restore(now, was) {
    const text = swapSections(now, was, (n) => n === "tool:pytest", iniName);
    const want = was === undefined ? [] : iniSection(was, "tool:pytest");
    return isDeepStrictEqual(iniSection(text, "tool:pytest"), want) ? text : undefined;
  },
};
