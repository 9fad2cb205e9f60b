/**
 * bin/evalgate.js runs the bundled CLI (lib/cli-bundle/, scripts/bundle-cli.mjs) when it was built
 * from the lib/ beside it, and lib/ otherwise (docs/decisions/0235).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
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
  const main = (who: string) =>
    `export async function main(args) { process.stdout.write("${who} " + args.join(" ") + "\\n"); return 0; }\n`;
  for (const [rel, text] of [
    ["lib/version.js", 'export const VERSION = "9.9.9";\n'],
    ["lib/cli/main.js", main("lib")],
    ["lib/cli-bundle/main.js", main("bundle")],
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
    at("lib/cli-bundle/main.js", 1_000_000);
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
    // Records every module Node resolves (a loader hook registered before the CLI starts).
    const dir = tempDir();
    writeFileSync(
      path.join(dir, "hook.mjs"),
      'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("LOADED " + r.url + "\\n"); return r; }\n',
    );
    writeFileSync(
      path.join(dir, "register.mjs"),
      `import { register } from "node:module"; register(${JSON.stringify(`file://${dir}/hook.mjs`)});\n`,
    );
    const r = spawnSync(
      process.execPath,
      ["--import", path.join(dir, "register.mjs"), "bin/evalgate.js", "validate", "examples/quickstart"],
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(r.status).toBe(0);
    const loaded = [...r.stderr.matchAll(/^LOADED (file:\S+)$/gm)].map((m) =>
      m[1]!.slice(`file://${ROOT}`.length),
    );
    expect(loaded.filter((u) => u.startsWith("lib/cli-bundle/")).length).toBeGreaterThan(0);
    // before: about 380 files, 281 of them in node_modules.
    expect(loaded.filter((u) => !u.startsWith("lib/cli-bundle/") && u !== "bin/evalgate.js")).toEqual([]);
  });
});
