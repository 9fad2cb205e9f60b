/**
 * The shape docs/architecture.md draws, checked on the real source, and the checker itself checked
 * on small made-up trees (so a checker that found nothing could not pass).
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ESM script without types
import { checkArchitecture } from "../scripts/check-architecture.mjs";
import { ROOT, tempDir, writeFiles } from "./helpers.js";

const check = (root: string): string[] => checkArchitecture(root);

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
