/**
 * The shape docs/architecture.md draws, checked on the real source, and the checker itself checked
 * on small made-up trees (so a checker that found nothing could not pass).
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ESM script without types
import { checkArchitecture, functionsOver as over } from "../scripts/check-architecture.mjs";
import { ROOT, tempDir, writeFiles } from "./helpers.js";

const check = (root: string): string[] => checkArchitecture(root);
const functionsOver = (root: string, max?: number): string[] => over(root, max);

describe("the architecture check", () => {
  it("finds no breach in this repository's source (docs/architecture.md)", () => {
    expect(check(ROOT)).toEqual([]);
  });

  it("finds a cycle between two top-level parts and names every import in it", () => {
    const root = tempDir();
    writeFiles(root, {
      "src/gate/a.ts": 'import { b } from "../report/b.js";\nexport const a = b;\n',
      "src/report/b.ts": 'import type { X } from "../gate/c.js";\nexport const b = 1;\n',
      "src/gate/c.ts": "export type X = 1;\n",
    });
    const breaches = check(root);
    expect(breaches).toHaveLength(1);
    expect(breaches[0]).toMatch(/import cycle/);
    expect(breaches[0]).toContain("gate → report (src/gate/a.ts)");
    expect(breaches[0]).toContain("report → gate (src/report/b.ts)");
  });

  it("finds a long file, an impure import in gate/ or report/, and the core reaching into an edge", () => {
    const root = tempDir();
    writeFiles(root, {
      "src/gate/long.ts": "export const x = 1;\n".repeat(401),
      "src/report/html.ts": 'import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n',
      "src/gate/gh.ts": 'import * as core from "@actions/core";\nexport const c = core;\n',
      "src/bundle/write.ts": 'import { CLI_NAMING } from "../cli/args.js";\nexport const n = CLI_NAMING;\n',
      "src/cli/args.ts": "export const CLI_NAMING = {};\n",
    });
    const breaches = check(root).join("\n");
    expect(breaches).toMatch(/src\/gate\/long\.ts: 401 lines/);
    expect(breaches).toMatch(/src\/report\/html\.ts: imports node:fs/);
    expect(breaches).toMatch(/src\/gate\/gh\.ts: imports @actions\/core/);
    expect(breaches).toMatch(/src\/bundle\/write\.ts: imports src\/cli\/args\.ts/);
    expect(breaches).toMatch(/src\/bundle\/write\.ts: names an edge's spelling/);
  });

  it("passes a layered tree", () => {
    const root = tempDir();
    writeFiles(root, {
      "src/errors.ts": "export class UsageError extends Error {}\n",
      "src/gate/a.ts": 'import { UsageError } from "../errors.js";\nexport const a = UsageError;\n',
      "src/report/b.ts": 'import { a } from "../gate/a.js";\nexport const b = a;\n',
      "src/cli/main.ts": 'import { b } from "../report/b.js";\nexport const m = b;\n',
    });
    expect(check(root)).toEqual([]);
  });
});

/** A function declaration exactly `lines` lines long (first to last, inclusive). */
const fnOf = (name: string, lines: number): string =>
  `export function ${name}() {\n${"  void 0;\n".repeat(lines - 2)}}\n`;
const body = (lines: number): string => "  void 0;\n".repeat(lines);

// before: there was no function-length check; `functionsOver` did not exist and every row failed.
describe("functionsOver: functions over 100 lines, named", () => {
  const cases: { what: string; source: string; breaches: string[] }[] = [
    {
      what: "a 101-line function fails",
      source: fnOf("long", 101),
      breaches: ["src/x.ts:1 long: 101 lines (at most 100); give each step its name"],
    },
    { what: "a 100-line function passes", source: fnOf("fits", 100), breaches: [] },
    {
      what: "its doc comment does not count, its modifiers do",
      source: `/**\n${" * why\n".repeat(20)} */\n${fnOf("documented", 100)}\nconst x = 1;\nexport async function modified() {\n${body(99)}}\n`,
      // 22 lines of comment, 100 of `documented`, a blank line and `const x`: `modified` starts at 125.
      breaches: ["src/x.ts:125 modified: 101 lines (at most 100); give each step its name"],
    },
    {
      what: "a nested long function is named, and its parent counts it",
      source: `export function outer() {\n  function inner() {\n${body(99)}  }\n  return inner;\n}\n`,
      breaches: [
        "src/x.ts:1 outer: 104 lines (at most 100); give each step its name",
        "src/x.ts:2 inner: 101 lines (at most 100); give each step its name",
      ],
    },
    {
      what: "an arrow assigned to a const is named by the const",
      source: `export const handler = async () => {\n${body(99)}};\n`,
      breaches: ["src/x.ts:1 handler: 101 lines (at most 100); give each step its name"],
    },
    {
      what: "an arrow passed to a call is named by the function it is in",
      source: `export function each(xs: number[]) {\n  xs.forEach((x) => {\n${body(99)}  });\n}\n`,
      breaches: [
        "src/x.ts:1 each: 103 lines (at most 100); give each step its name",
        "src/x.ts:2 <arrow in each>: 101 lines (at most 100); give each step its name",
      ],
    },
    {
      what: "methods, properties and constructors by their class or their key",
      source: [
        `export class Box {\n  constructor() {\n${body(99)}  }\n`,
        `  open(): void {\n${body(99)}  }\n`,
        `  close = () => {\n${body(99)}  };\n}\n`,
        `export const provider = {\n  run: function () {\n${body(99)}  },\n`,
        `  stop() {\n${body(99)}  },\n};\n`,
      ].join(""),
      // The class (305 lines) and the object literal are not functions.
      breaches: [
        "src/x.ts:2 Box.constructor: 101 lines",
        "src/x.ts:103 Box.open: 101 lines",
        "src/x.ts:204 Box.close: 101 lines",
        "src/x.ts:307 run: 101 lines",
        "src/x.ts:408 stop: 101 lines",
      ],
    },
  ];
  it.each(cases)("$what", ({ source, breaches }) => {
    const root = tempDir();
    writeFiles(root, { "src/x.ts": source });
    const found = functionsOver(root);
    expect(found).toHaveLength(breaches.length);
    breaches.forEach((b, i) => {
      expect(found[i]).toContain(b);
    });
  });

  it("takes its limit as an argument and looks only at src/**/*.ts", () => {
    const root = tempDir();
    writeFiles(root, {
      "src/a/deep.ts": fnOf("deep", 12),
      "src/a/notes.md": fnOf("prose", 50),
      "scripts/tool.ts": fnOf("tool", 50),
    });
    expect(functionsOver(root, 11)).toEqual([
      "src/a/deep.ts:1 deep: 12 lines (at most 11); give each step its name",
    ]);
    expect(functionsOver(root, 12)).toEqual([]);
  });

  it("finds none in this repository's src/", () => {
    // before: runAttempt (256 lines), importSweBench (186), llm-judge's run (164), commandRequest (143), ...
    expect(functionsOver(ROOT)).toEqual([]);
  });
});
