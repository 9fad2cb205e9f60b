/**
 * Loading ast-grep's native parts: the `@ast-grep/napi` binding and the tree-sitter parsers of the
 * `@ast-grep/lang-*` packages.
 *
 * Two layouts are supported:
 * - an installed package (lib/, the CLI): ordinary Node resolution of `@ast-grep/napi` (which picks
 *   its per-platform package) and of each `@ast-grep/lang-*` package;
 * - a bundle (dist/, the action): bundlers cannot follow napi's platform switch, so the binary and
 *   the parsers are shipped as plain files in a `native/` folder beside the bundle
 *   (`scripts/ship-native.mjs` writes it) and loaded from there.
 *
 * Module names are computed at run time so that a bundler leaves them alone.
 * `registerDynamicLanguage` replaces earlier registrations, so it is called exactly once per
 * process, with every language found; a library path that does not exist would crash the process,
 * so each one is checked first.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { AST_GREP_LANGUAGES } from "../config/schema/scorers.js";

export type AstGrepLanguage = (typeof AST_GREP_LANGUAGES)[number];

/** The parts of `@ast-grep/napi` evalgate uses (its types are not imported: the module is optional). */
export interface NapiNode {
  text(): string;
  kind(): string;
  children(): NapiNode[];
  range(): { start: { line: number; column: number; index: number }; end: { line: number; column: number } };
  findAll(matcher: Matcher): NapiNode[];
}
/** A pattern, or ast-grep's contextual pattern (the pattern is the context, `selector` picks the node). */
export type Matcher = string | { rule: { pattern: { context: string; selector: string } } };

export function matcherOf(pattern: string, selector?: string): Matcher {
  return selector ? { rule: { pattern: { context: pattern, selector } } } : pattern;
}

export interface NapiRoot {
  root(): NapiNode;
}
export interface Napi {
  parse(lang: string, src: string): NapiRoot;
  parseAsync(lang: string, src: string): Promise<NapiRoot>;
  registerDynamicLanguage(langs: Record<string, unknown>): void;
}

interface LanguageInfo {
  /** The name napi knows the language by. */
  napiName: string;
  /** File extensions searched when `path` is a folder. */
  extensions: string[];
  /** For dynamic languages: the `@ast-grep/lang-*` package and its registration. */
  dynamic?: { pkg: string; symbol: string; expandoChar?: string };
}

/**
 * The languages evalgate offers. The dynamic ones' symbol and expando character are those their
 * packages export (a unit test compares them), repeated here because a bundle has no package to ask.
 */
export const LANGUAGES: Record<AstGrepLanguage, LanguageInfo> = {
  typescript: { napiName: "TypeScript", extensions: ["ts", "mts", "cts"] },
  tsx: { napiName: "Tsx", extensions: ["tsx"] },
  javascript: { napiName: "JavaScript", extensions: ["js", "mjs", "cjs", "jsx"] },
  html: { napiName: "Html", extensions: ["html", "htm"] },
  css: { napiName: "Css", extensions: ["css"] },
  python: {
    napiName: "python",
    extensions: ["py", "pyi"],
    dynamic: { pkg: "lang-python", symbol: "tree_sitter_python", expandoChar: "µ" },
  },
  go: {
    napiName: "go",
    extensions: ["go"],
    dynamic: { pkg: "lang-go", symbol: "tree_sitter_go", expandoChar: "µ" },
  },
  rust: {
    napiName: "rust",
    extensions: ["rs"],
    dynamic: { pkg: "lang-rust", symbol: "tree_sitter_rust", expandoChar: "µ" },
  },
  java: { napiName: "java", extensions: ["java"], dynamic: { pkg: "lang-java", symbol: "tree_sitter_java" } },
};

/** napi's platform triple, as in its binary's file name (`ast-grep-napi.<triple>.node`). */
export function platformTriple(): string {
  const { platform, arch } = process;
  if (platform === "linux") {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    return `linux-${arch}-${report?.header?.glibcVersionRuntime ? "gnu" : "musl"}`;
  }
  if (platform === "win32") return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/** The prebuild folder of the lang packages (`prebuild-Linux-X64`). */
export function prebuildDir(): string {
  const os = ({ darwin: "macOS", linux: "Linux", win32: "Windows" } as Record<string, string>)[
    process.platform
  ];
  const arch = ({ x64: "X64", arm64: "ARM64" } as Record<string, string>)[process.arch];
  return `prebuild-${os ?? process.platform}-${arch ?? process.arch}`;
}

/** The folder a bundle ships its native files in: `native/` beside the running file. */
export function bundledNativeDir(): string {
  return process.env.EVALGATE_NATIVE_DIR ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "native");
}

export interface AstGrep {
  napi: Napi;
  /** Where the binding came from (for messages and tests). */
  source: "bundle" | "node_modules";
  /** Dynamic languages that were registered. */
  available: Set<AstGrepLanguage>;
  /** Why a dynamic language is not available. */
  missing: Map<AstGrepLanguage, string>;
}

let loaded: AstGrep | { error: string } | undefined;

function loadOnce(): AstGrep | { error: string } {
  const require = createRequire(import.meta.url);
  const dir = bundledNativeDir();
  const binary = path.join(dir, `ast-grep-napi.${platformTriple()}.node`);
  let napi: Napi;
  let source: AstGrep["source"];
  try {
    if (existsSync(binary)) {
      napi = require(binary) as Napi;
      source = "bundle";
    } else {
      napi = require(["@ast-grep", "napi"].join("/")) as Napi;
      source = "node_modules";
    }
  } catch (error) {
    return {
      error: `ast-grep cannot be loaded on ${platformTriple()}: ${(error as Error).message.split("\n")[0]}`,
    };
  }
  const available = new Set<AstGrepLanguage>();
  const missing = new Map<AstGrepLanguage, string>();
  const registrations: Record<string, unknown> = {};
  for (const [lang, info] of Object.entries(LANGUAGES) as [AstGrepLanguage, LanguageInfo][]) {
    const d = info.dynamic;
    if (!d) continue;
    let libraryPath: string | undefined;
    if (source === "bundle") {
      const candidate = path.join(dir, d.pkg, prebuildDir(), "parser.so");
      if (existsSync(candidate)) libraryPath = candidate;
      else missing.set(lang, `the bundle has no ${d.pkg} parser for ${prebuildDir()} in ${dir}`);
    } else {
      try {
        libraryPath = (require(["@ast-grep", d.pkg].join("/")) as { libraryPath: string }).libraryPath;
        if (!existsSync(libraryPath)) {
          missing.set(lang, `@ast-grep/${d.pkg} names a parser that does not exist (${libraryPath})`);
          libraryPath = undefined;
        }
      } catch (error) {
        missing.set(
          lang,
          `@ast-grep/${d.pkg} is not usable here: ${(error as Error).message.split("\n")[0]}`,
        );
      }
    }
    if (!libraryPath) continue;
    registrations[info.napiName] = {
      libraryPath,
      extensions: info.extensions,
      languageSymbol: d.symbol,
      ...(d.expandoChar ? { expandoChar: d.expandoChar } : {}),
    };
    available.add(lang);
  }
  if (Object.keys(registrations).length > 0) napi.registerDynamicLanguage(registrations);
  return { napi, source, available, missing };
}

/** ast-grep with every language that could be found, or why it cannot be loaded. Loaded once. */
export function loadAstGrep(): AstGrep | { error: string } {
  loaded ??= loadOnce();
  return loaded;
}

/** Why `lang` cannot be used here, or undefined when it can. */
export function languageProblem(ag: AstGrep | { error: string }, lang: AstGrepLanguage): string | undefined {
  if ("error" in ag) return ag.error;
  if (!LANGUAGES[lang].dynamic) return undefined;
  return ag.available.has(lang) ? undefined : ag.missing.get(lang);
}

const METAVAR = /^\$(\$\$)?([A-Z_][A-Z0-9_]*)?$/;

/**
 * Why a pattern cannot be used, or undefined. ast-grep itself accepts patterns with syntax errors
 * and then silently matches nothing, so the pattern is parsed here: an ERROR node that is not just a
 * metavariable (ast-grep matches `class $C { $$$ }` in Java although `$$$` is not a class member)
 * means the pattern does not parse; ast-grep's own complaints (no node, several nodes) are kept.
 */
export function patternProblem(
  ag: AstGrep,
  lang: AstGrepLanguage,
  pattern: string,
  selector?: string,
): string | undefined {
  const info = LANGUAGES[lang];
  try {
    ag.napi.parse(info.napiName, "").root().findAll(matcherOf(pattern, selector));
  } catch (error) {
    // ast-grep explains in a chain ("rule is not configured correctly / |-> ... / |-> Kind x is
    // invalid"); the last link is the specific one.
    const chain = (error as Error).message
      .split("\n")
      .map((l) => l.replace(/^\s*\|->/, "").trim())
      .filter(Boolean);
    return `ast-grep rejects the pattern: ${chain[chain.length - 1] ?? "unknown reason"}`;
  }
  const expando = info.dynamic?.expandoChar;
  const source = expando ? pattern.replaceAll("$", expando) : pattern;
  const errors: NapiNode[] = [];
  const visit = (n: NapiNode) => {
    if (n.kind() === "ERROR") errors.push(n);
    else for (const c of n.children()) visit(c);
  };
  visit(ag.napi.parse(info.napiName, source).root());
  const real = errors.filter((e) => {
    const words = e
      .text()
      .split(/[\s,;]+/)
      .filter(Boolean)
      .map((w) => (expando ? w.replaceAll(expando, "$") : w));
    return words.length === 0 || !words.every((w) => METAVAR.test(w));
  });
  if (real.length === 0) return undefined;
  const first = real[0]!;
  const { line, column } = first.range().start;
  const text = first.text().replaceAll(expando ?? "\u0000", "$");
  const shown = text.length > 40 ? `${text.slice(0, 39)}…` : text;
  return `the pattern does not parse as ${lang}: unexpected ${JSON.stringify(shown)} at line ${line + 1}, column ${column + 1}`;
}
