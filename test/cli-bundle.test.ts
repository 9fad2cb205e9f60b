/**
 * bin/evalgate.js runs the bundled CLI (lib/cli-bundle/, scripts/bundle-cli.mjs) when it was built
 * from the lib/ beside it, and lib/ otherwise (docs/decisions/0235); on Node 20 it gives the
 * bundle's chunks V8's code cache (lib/cli/code-cache.js, docs/decisions/0221).
 */
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** A checkout with the real bin/evalgate.js and a lib/ and a bundle that say which one ran. */
function fakeCheckout(): string {
  const dir = tempDir();
  mkdirSync(path.join(dir, "bin"));
  cpSync(path.join(ROOT, "bin/evalgate.js"), path.join(dir, "bin/evalgate.js"));
  mkdirSync(path.join(dir, "lib/cli"), { recursive: true });
  cpSync(path.join(ROOT, "lib/cli/code-cache.js"), path.join(dir, "lib/cli/code-cache.js"));
  const main = (who: string) =>
    `async function main(args) { process.stdout.write("${who} " + args.join(" ") + "\\n"); return 0; }\n`;
  for (const [rel, text] of [
    ["lib/version.js", 'export const VERSION = "9.9.9";\n'],
    ["lib/cli/main.js", `export ${main("lib")}`],
    ["lib/cli-bundle/main.cjs", `${main("bundle")}exports.main = main;\n`],
    ["package.json", '{ "type": "module" }\n'],
  ] as const) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

const ran = (dir: string, ...args: string[]) =>
  spawnSync(process.execPath, [path.join(dir, "bin/evalgate.js"), ...args], { encoding: "utf8" }).stdout;

describe("bin/evalgate.js", () => {
  it("runs the bundle when it is as new as lib/cli/main.js or newer, else lib/", () => {
    const dir = fakeCheckout();
    const at = (rel: string, seconds: number) => utimesSync(path.join(dir, rel), seconds, seconds);
    at("lib/cli/main.js", 1_000_000);
    at("lib/cli-bundle/main.cjs", 1_000_000);
    // before: bin/evalgate.js always loaded lib/cli/main.js.
    expect(ran(dir, "validate", "x")).toBe("bundle validate x\n");
    // tsc ran after the bundle (a watch, a build without rolldown): the bundle is stale.
    at("lib/cli/main.js", 1_000_010);
    expect(ran(dir, "validate", "x")).toBe("lib validate x\n");
    // --version needs neither.
    expect(ran(dir, "--version")).toBe("9.9.9\n");
  });

  it("without a bundle runs lib/ (an install without devDependencies, or the npm package)", () => {
    const dir = fakeCheckout();
    rmSync(path.join(dir, "lib/cli-bundle"), { recursive: true });
    expect(ran(dir, "run")).toBe("lib run\n");
  });

  it("this build's `evalgate validate` loads the bundle alone: no file of lib/ or node_modules", () => {
    // Records every module Node resolves: ES modules through a loader hook, CommonJS through
    // Module._load, both registered before the CLI starts.
    const dir = tempDir();
    writeFileSync(
      path.join(dir, "hook.mjs"),
      'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("LOADED " + r.url + "\\n"); return r; }\n',
    );
    writeFileSync(
      path.join(dir, "register.mjs"),
      `import { register } from "node:module"; register(${JSON.stringify(`file://${dir}/hook.mjs`)});\n`,
    );
    writeFileSync(
      path.join(dir, "require.cjs"),
      'const M = require("node:module"); const load = M._load; M._load = function (id, parent, main) { try { const f = M._resolveFilename(id, parent, main); if (f.startsWith("/")) process.stderr.write("LOADED file://" + f + "\\n"); } catch {} return load.apply(this, arguments); };\n',
    );
    const r = spawnSync(
      process.execPath,
      [
        "--require",
        path.join(dir, "require.cjs"),
        "--import",
        path.join(dir, "register.mjs"),
        "bin/evalgate.js",
        "validate",
        "examples/quickstart",
      ],
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(r.status).toBe(0);
    const loaded = [...r.stderr.matchAll(/^LOADED (file:\S+)$/gm)].map((m) =>
      m[1]!.slice(`file://${ROOT}`.length),
    );
    // before: about 380 files, 281 of them in node_modules; with the ESM bundle, node_modules/picomatch
    // still (fdir's optional require of it, which the ESM hook alone did not see).
    const allowed = ["bin/evalgate.js", "lib/cli/code-cache.js", "lib/cli-bundle/main.cjs"];
    expect(loaded.filter((u) => !u.startsWith("lib/cli-bundle/") && !allowed.includes(u))).toEqual([]);
  });
});

/** Loads `dir`'s bundle through lib/cli/code-cache.js in a fresh Node; its output and each chunk's outcome. */
function cached(dir: string, flags = "default") {
  const script = `
    const { loadWithCodeCache } = await import(${JSON.stringify(path.join(ROOT, "lib/cli/code-cache.js"))});
    const stats = {};
    const { main } = loadWithCodeCache(${JSON.stringify(dir)}, ${JSON.stringify(flags)}, stats);
    process.stdout.write(main() + "\\n");
    process.stderr.write(JSON.stringify(stats));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(r.stderr).toMatch(/^\{/);
  return { status: r.status, stdout: r.stdout, chunks: JSON.parse(r.stderr) as Record<string, string> };
}

/** A bundle of two chunks, as rolldown writes them: main.cjs requires its sibling by "./name.cjs". */
function fakeBundle(answer = 42): string {
  const dir = tempDir();
  writeFileSync(
    path.join(dir, "main.cjs"),
    '"use strict";\nconst sum = require("./sum-abc.cjs");\nconst path = require("node:path");\nexports.main = () => [sum.add(40, 2), path.basename(__filename), this === exports].join(" ");\n',
  );
  writeFileSync(path.join(dir, "sum-abc.cjs"), `"use strict";\nexports.add = (a, b) => ${answer};\n`);
  return dir;
}

const cacheFiles = (dir: string) =>
  existsSync(path.join(dir, ".code-cache"))
    ? readdirSync(path.join(dir, ".code-cache"), { recursive: true, encoding: "utf8" }).sort()
    : [];

describe("lib/cli/code-cache.js (the bundle on Node 20)", () => {
  it("runs the chunks as CommonJS would, writes their cache on the first run and uses it on the next", () => {
    const dir = fakeBundle();
    // before: no code cache; every start compiled every chunk from source.
    expect(cached(dir)).toEqual({
      status: 0,
      stdout: "42 main.cjs true\n",
      chunks: { "main.cjs": "miss", "sum-abc.cjs": "miss" },
    });
    const key = `${process.version}-${process.arch}-default`;
    expect(cacheFiles(dir).filter((f) => f.startsWith(`${key}/`)).length).toBe(2);
    expect(cached(dir).chunks).toEqual({ "main.cjs": "hit", "sum-abc.cjs": "hit" });
    // Another V8 flag set keeps a cache of its own.
    expect(cached(dir, "optimize-for-size").chunks).toEqual({ "main.cjs": "miss", "sum-abc.cjs": "miss" });
    expect(cached(dir).chunks).toEqual({ "main.cjs": "hit", "sum-abc.cjs": "hit" });
  });

  it("this build's chunks call no import() of a module: a vm.Script has no ES module loader", () => {
    // before: overlay.ts's `await import("node:fs/promises")` stayed an import() in its chunk and
    // threw "A dynamic import callback was not specified" under the code cache: every run on
    // Node 20 fell back from the shared overlay to a copy (test/e2e/shared-trees.test.ts).
    const bundle = path.join(ROOT, "lib/cli-bundle");
    const found = readdirSync(bundle)
      .filter((f) => f.endsWith(".cjs"))
      .flatMap((f) =>
        [
          ...readFileSync(path.join(bundle, f), "utf8").matchAll(
            /\bimport\(\s*["'`](?!\.\/)[^"'`]+["'`]\s*\)/g,
          ),
        ].map((m) => `${f}: ${m[0]}`),
      );
    expect(found).toEqual([]);
  });

  it("never runs a chunk's old code: a chunk changed in place (same length) is compiled from its new text", () => {
    const dir = fakeBundle(42);
    cached(dir);
    // The same number of bytes, another answer, a later modification time.
    writeFileSync(path.join(dir, "sum-abc.cjs"), `"use strict";\nexports.add = (a, b) => 17;\n`);
    utimesSync(path.join(dir, "sum-abc.cjs"), new Date(), new Date(Date.now() + 5_000));
    const again = cached(dir);
    expect(again.stdout).toBe("17 main.cjs true\n");
    expect(again.chunks["sum-abc.cjs"]).toBe("miss");
  });

  it("a cache V8 refuses (damaged, another V8) is rejected, the chunk compiled from source and the cache rewritten", () => {
    const dir = fakeBundle();
    cached(dir);
    const key = `${process.version}-${process.arch}-default`;
    const file = cacheFiles(dir).find((f) => f.startsWith(`${key}/sum-abc.cjs`))!;
    writeFileSync(path.join(dir, ".code-cache", file), Buffer.alloc(64, 7));
    expect(cached(dir)).toMatchObject({
      status: 0,
      stdout: "42 main.cjs true\n",
      chunks: { "sum-abc.cjs": "rejected" },
    });
    expect(cached(dir).chunks).toEqual({ "main.cjs": "hit", "sum-abc.cjs": "hit" });
  });

  it("a cache that cannot be written changes nothing but the speed", () => {
    const dir = fakeBundle();
    // A file where the cache folder would be: every write fails.
    writeFileSync(path.join(dir, ".code-cache"), "");
    expect(cached(dir)).toEqual({
      status: 0,
      stdout: "42 main.cjs true\n",
      chunks: { "main.cjs": "miss", "sum-abc.cjs": "miss" },
    });
    expect(cached(dir).chunks).toEqual({ "main.cjs": "miss", "sum-abc.cjs": "miss" });
  });

  it("this build's `evalgate validate` runs every chunk from the cache once it is written", () => {
    const dir = path.join(ROOT, "lib/cli-bundle");
    const script = `
      const { loadWithCodeCache } = await import(${JSON.stringify(path.join(ROOT, "lib/cli/code-cache.js"))});
      const stats = {};
      const { main } = loadWithCodeCache(${JSON.stringify(dir)}, "test-validate", stats);
      const status = await main(["validate", "examples/quickstart"]);
      const crypto = process.moduleLoadList.includes("NativeModule crypto");
      process.on("exit", () => process.stderr.write("STATS " + JSON.stringify(stats) + "\\nCRYPTO " + crypto + "\\n"));
      process.exitCode = status;`;
    const run = () =>
      spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" });
    run();
    const r = run();
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ok: 1 eval file, 3 tests, 9 cases$/m);
    const stats = JSON.parse(/^STATS (.*)$/m.exec(r.stderr)![1]!) as Record<string, string>;
    expect(Object.keys(stats).length).toBeGreaterThan(5);
    expect(Object.values(stats).every((o) => o === "hit")).toBe(true);
    // before: validate evaluated execa's chunk (git.ts and environment/engine.ts imported it).
    expect(Object.keys(stats).filter((chunk) => chunk.startsWith("execa-"))).toEqual([]);
    // before: the tests scorer's module imported the report parsers, so every validate evaluated
    // fast-xml-parser and its dependencies (about 140 kB), and the exam's fingerprints node:crypto.
    const parsers = Object.keys(stats).filter((chunk) =>
      readFileSync(path.join(dir, chunk), "utf8").includes("// node_modules/fast-xml-parser/"),
    );
    expect(parsers).toEqual([]);
    expect(/^CRYPTO (\w+)$/m.exec(r.stderr)?.[1]).toBe("false");
  });
});
