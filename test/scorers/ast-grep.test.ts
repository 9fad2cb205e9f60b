import { readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AST_GREP_LANGUAGES } from "../../src/config/schema/scorers.js";
import { astGrepScorer } from "../../src/scorers/ast-grep.js";
import { type AstGrep, LANGUAGES, loadAstGrep, patternProblem } from "../../src/scorers/ast-grep-native.js";
import { ROOT } from "../helpers.js";
import { scorerContext } from "./context.js";

const PROJECT = path.join(ROOT, "test", "fixtures", "scorers", "ast-grep", "project");

function filesOf(dir: string, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir)) {
    const abs = path.join(dir, e);
    if (statSync(abs).isDirectory()) Object.assign(out, filesOf(abs, `${prefix}${e}/`));
    else out[`${prefix}${e}`] = readFileSync(abs, "utf8");
  }
  return out;
}

/** The fixture project, plus files that only exist at run time (the repository ignores them). */
const files = () => ({
  ...filesOf(PROJECT),
  "node_modules/dep/index.ts": "export const run = (code: string) => eval(code);\n",
  ".gitignore": "generated/\n",
});

async function score(
  options: Record<string, unknown>,
  change?: Record<string, string | null>,
  timeoutMs?: number,
) {
  const ctx = await scorerContext({
    files: files(),
    change: { "generated/schema.ts": "export const parse = (t: string) => eval(t);\n", ...change },
    options: { type: "ast-grep", ...options },
    timeoutMs,
  });
  return astGrepScorer.run(ctx);
}

describe("ast-grep's native parts", () => {
  it("loads from node_modules with every language registered", () => {
    const ag = loadAstGrep();
    expect("error" in ag).toBe(false);
    const ok = ag as AstGrep;
    expect(ok.source).toBe("node_modules");
    expect([...ok.available].sort()).toEqual(["go", "java", "python", "rust"]);
  });

  it("describes each language package as the package itself does", () => {
    const require = createRequire(import.meta.url);
    for (const [lang, info] of Object.entries(LANGUAGES)) {
      if (!info.dynamic) continue;
      const pkg = require(`@ast-grep/${info.dynamic.pkg}`) as {
        languageSymbol: string;
        extensions: string[];
        expandoChar?: string;
      };
      expect(info.dynamic.symbol, lang).toBe(pkg.languageSymbol);
      expect(info.dynamic.expandoChar ?? "$", lang).toBe(pkg.expandoChar ?? "$");
      for (const ext of pkg.extensions) expect(info.extensions, lang).toContain(ext);
    }
  });

  const ag = loadAstGrep() as AstGrep;
  it.each([
    ["typescript", "eval($$$)"],
    ["typescript", "console.log($A, $$$REST)"],
    ["tsx", "<$C $$$PROPS />"],
    ["python", "def $F($$$):\n    $$$"],
    ["python", "print($$$)"],
    ["go", "fmt.Println($$$)"],
    ["go", "if err != nil { $$$ }"],
    ["rust", "$A.unwrap()"],
    ["java", "class $C { $$$ }"],
    ["java", "System.out.println($A)"],
  ] as [(typeof AST_GREP_LANGUAGES)[number], string][])("accepts the %s pattern %j", (lang, pattern) => {
    expect(patternProblem(ag, lang, pattern)).toBeUndefined();
  });

  it.each([
    ["python", "def f(", /does not parse as python: unexpected "def f\(" at line 1, column 1/],
    ["typescript", "a +", /does not parse as typescript/],
    ["go", "fmt.Println(", /does not parse as go/],
    ["rust", "$A.unwrap(", /does not parse as rust: unexpected "\$A\.unwrap\("/],
    ["java", "$A.equals(", /does not parse as java/],
    ["typescript", "$A $B", /ast-grep rejects the pattern: Multiple AST nodes/],
  ] as [
    (typeof AST_GREP_LANGUAGES)[number],
    string,
    RegExp,
  ][])("refuses the %s pattern %j", (lang, pattern, why) => {
    expect(patternProblem(ag, lang, pattern)).toMatch(why);
  });

  it("checks a contextual pattern's selector", () => {
    expect(patternProblem(ag, "go", "func t() { fmt.Println($$$) }", "call_expression")).toBeUndefined();
    expect(patternProblem(ag, "go", "func t() { fmt.Println($$$) }", "no_such_kind")).toMatch(
      /Kind `no_such_kind` is invalid/,
    );
    expect(patternProblem(ag, "go", "func t() { fmt.Println($$$) }", "if_statement")).toMatch(
      /selector `if_statement` matches no node/,
    );
  });
});

describe("the ast-grep scorer", () => {
  it("present: passes with matches in TypeScript, including files named in .gitignore, never node_modules", async () => {
    const r = await score({ lang: "typescript", pattern: "eval($$$)", path: "." });
    expect(r).toMatchObject({ state: "complete", passed: true, score: 1 });
    expect(r.details).toMatchObject({ match_count: 2, files_with_matches: 2 });
    const where = (r.details!.matches as { file: string; line: number }[]).map((m) => `${m.file}:${m.line}`);
    expect(where).toEqual(["generated/schema.ts:1", "src/cart.ts:12"]);
  });

  it("absent: fails and says where the matches are", async () => {
    const r = await score({ lang: "typescript", pattern: "eval($$$)", path: "src", expect: "absent" });
    expect(r).toMatchObject({ state: "complete", passed: false, score: 0 });
    expect(r.reason).toBe(
      "1 match of eval($$$) in 1 of 2 typescript files, expected none: src/cart.ts:12 eval(text)",
    );
  });

  it("absent: passes once the agent removed the match", async () => {
    const fixed = readFileSync(path.join(PROJECT, "src/cart.ts"), "utf8").replace(
      "eval(text)",
      "Number(text)",
    );
    const r = await score(
      { lang: "typescript", pattern: "eval($$$)", path: "src", expect: "absent" },
      {
        "src/cart.ts": fixed,
      },
    );
    expect(r).toMatchObject({
      state: "complete",
      passed: true,
      reason: "no match of eval($$$) in 2 typescript files",
    });
  });

  it("count: checks min and max on TypeScript and Python", async () => {
    const ts = await score({
      lang: "typescript",
      pattern: "console.log($$$)",
      expect: "count",
      min: 2,
      max: 2,
    });
    expect(ts).toMatchObject({ passed: true });
    const py = await score({ lang: "python", pattern: "print($$$)", path: "app", expect: "count", max: 2 });
    expect(py).toMatchObject({ passed: false });
    expect(py.reason).toMatch(/^3 matches of print\(\$\$\$\) in 1 of 1 python file, expected at most 2/);
    const one = await score({
      lang: "python",
      pattern: "print($A)",
      path: "app",
      expect: "count",
      min: 1,
      max: 1,
    });
    expect(one).toMatchObject({ passed: true, details: { match_count: 1 } });
  });

  it("present and absent on Python", async () => {
    const present = await score({ lang: "python", pattern: "open($PATH)", path: "app/orders.py" });
    expect(present).toMatchObject({ passed: true, details: { match_count: 1 } });
    const absent = await score({ lang: "python", pattern: "eval($$$)", expect: "absent" });
    expect(absent).toMatchObject({ passed: false });
    expect(absent.reason).toMatch(/app\/orders\.py:3 eval\(f\.read\(\)\)/);
  });

  it("only_changed: searches only the files the agent added or changed", async () => {
    const untouched = await score(
      { lang: "typescript", pattern: "eval($$$)", path: "src", expect: "absent", only_changed: true },
      { "generated/schema.ts": null, "src/fresh.ts": "export const one = 1;\n" },
    );
    expect(untouched).toMatchObject({ passed: true, details: { files_searched: 1 } });
    const added = await score(
      { lang: "typescript", pattern: "eval($$$)", path: "src", expect: "absent", only_changed: true },
      { "src/fresh.ts": "export const two = eval('1+1');\n" },
    );
    expect(added).toMatchObject({ passed: false });
    expect(added.reason).toMatch(/src\/fresh\.ts:1/);
    expect(added.reason).not.toMatch(/cart\.ts/);
    const none = await score(
      { lang: "python", pattern: "eval($$$)", expect: "absent", only_changed: true },
      { "src/fresh.ts": "export const one = 1;\n" },
    );
    expect(none).toMatchObject({
      state: "complete",
      passed: true,
      reason: "no match of eval($$$) in 0 changed python files",
    });
  });

  it("takes a glob and exclude globs", async () => {
    const r = await score({
      lang: "typescript",
      pattern: "eval($$$)",
      path: "**/*.ts",
      exclude: ["generated/**"],
    });
    expect(r).toMatchObject({ passed: true, details: { match_count: 1, files_searched: 2 } });
  });

  it("is an error when there is nothing to search", async () => {
    const missing = await score({ lang: "typescript", pattern: "eval($$$)", path: "scr", expect: "absent" });
    expect(missing).toEqual({ state: "error", reason: "scr does not exist in the workspace" });
    const noFiles = await score({ lang: "go", pattern: "fmt.Println($$$)", expect: "absent" });
    expect(noFiles).toEqual({ state: "error", reason: "no go file to search in the workspace" });
  });

  it("is an error when it runs out of time", async () => {
    const r = await score({ lang: "typescript", pattern: "eval($$$)" }, undefined, 0);
    expect(r).toMatchObject({ state: "error", timedOut: true });
  });

  it("finds matches in Go, Rust and Java files", async () => {
    const ctx = await scorerContext({
      files: {
        "main.go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n',
        "src/lib.rs": "fn f(x: Option<u8>) -> u8 {\n    x.unwrap()\n}\n",
        "App.java": 'class App {\n  void m() { System.out.println("x"); }\n}\n',
      },
      options: { type: "ast-grep", lang: "go", pattern: "fmt.Println($$$)" },
    });
    // At the top level Go reads `fmt.Println(x)` as a type conversion, so the bare pattern misses
    // the call; a contextual pattern (selector) finds it.
    expect(await astGrepScorer.run(ctx)).toMatchObject({ passed: false, details: { match_count: 0 } });
    ctx.spec.options = {
      type: "ast-grep",
      lang: "go",
      pattern: "func t() { fmt.Println($$$) }",
      selector: "call_expression",
    };
    expect(await astGrepScorer.run(ctx)).toMatchObject({ passed: true, details: { match_count: 1 } });
    for (const [lang, pattern] of [
      ["rust", "$A.unwrap()"],
      ["java", "System.out.println($A)"],
    ] as const) {
      ctx.spec.options = { type: "ast-grep", lang, pattern };
      expect(await astGrepScorer.run(ctx), lang).toMatchObject({ passed: true, details: { match_count: 1 } });
    }
  });

  it("reports option mistakes before anything runs", () => {
    const problems = astGrepScorer.check!(
      { type: "ast-grep", lang: "python", pattern: "def f(", path: "/etc", expect: "absent", min: 1 },
      "/",
    );
    expect(problems.map((p) => p.at?.join("."))).toEqual(["min", "path", "pattern"]);
    const count = astGrepScorer.check!(
      { type: "ast-grep", lang: "go", pattern: "go $F()", expect: "count" },
      "/",
    );
    expect(count.map((p) => p.message)).toEqual(["expect: count needs min, max or both"]);
  });
});
