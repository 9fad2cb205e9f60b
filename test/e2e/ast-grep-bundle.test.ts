/**
 * ast-grep through the CLI, and through a bundle built the way the action's dist/ is (ncc, then
 * scripts/ship-native.mjs), run from a folder where no node_modules can be found: the bundle must
 * load the native binding and the language parsers from its own native/ folder.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  contentKey,
  copyFixture,
  ROOT,
  readJson,
  readJsonl,
  runCli,
  sharedFixture,
  tempDir,
} from "../helpers.js";

const FIXTURE = path.join(ROOT, "test", "fixtures", "scorers", "ast-grep");

interface Row {
  target: string;
  verdict: string;
  runs: { grading_path: string | null }[];
}
interface Grading {
  scorers: {
    name: string;
    state: string;
    passed: boolean | null;
    reason: string;
    details: Record<string, unknown>;
  }[];
}

function node(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, CI: "1" },
    timeout: 120_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The bundle: ncc over the CLI entry, then the native files beside it. Built once for its inputs
 * (the built CLI, the locked dependencies, ship-native) and kept between test runs; each file gets
 * a copy in a folder of its own.
 */
function buildBundle(): string {
  const key = contentKey(
    ["bin", "lib", "package-lock.json", "scripts/ship-native.mjs"].map((p) => path.join(ROOT, p)),
    [process.version, process.arch],
  );
  const built = sharedFixture(
    "ncc-cli-bundle",
    (dir) => {
      const ncc = spawnSync(
        path.join(ROOT, "node_modules", ".bin", "ncc"),
        ["build", path.join(ROOT, "bin", "evalgate.js"), "-o", dir, "--quiet"],
        { cwd: ROOT, encoding: "utf8", timeout: 120_000 },
      );
      if (ncc.status !== 0) throw new Error(`ncc failed: ${ncc.stderr}`);
      const ship = node([path.join(ROOT, "scripts", "ship-native.mjs"), dir], ROOT);
      if (ship.code !== 0) throw new Error(`ship-native failed: ${ship.stderr}`);
      return null;
    },
    key,
  );
  return copyFixture(built.dir, path.join(tempDir("evalgate-bundle-"), "dist"));
}

/** Every ast-grep scorer of the fixer target, complete and passed, as both bundles must grade it. */
const FIXER_PASSES = ["no-eval", "uses-number", "prints", "new-python-clean"].map((name) => [
  name,
  "complete",
  true,
]);

function grading(out: string, target: string): Grading {
  const row = readJsonl<Row>(path.join(out, "index.jsonl")).find((r) => r.target === target)!;
  return readJson<Grading>(path.join(out, row.runs[0]!.grading_path!));
}

const COBOL = `targets: [{ name: none, provider: noop }]
workspace: { seed: { empty: true } }
tests:
  - id: legacy
    instruction: modernise it
    scorers:
      - { type: ast-grep, lang: cobol, pattern: "MOVE $A TO $B" }
`;

describe("the ast-grep scorer through the CLI", () => {
  it("rejects lang: cobol at validation, listing the supported languages", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "legacy.eval.yaml"), COBOL);
    const r = runCli(["validate", "legacy.eval.yaml"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("legacy.eval.yaml:7: tests[0].scorers[0].lang:");
    expect(r.stderr).toContain("use one of: typescript, tsx, javascript, html, css, python, go, rust, java");
  });

  it("rejects a pattern that does not parse at validation, with file, line and key", () => {
    const dir = tempDir();
    const text = COBOL.replace('lang: cobol, pattern: "MOVE $A TO $B"', 'lang: python, pattern: "def f("');
    writeFileSync(path.join(dir, "broken.eval.yaml"), text);
    const r = runCli(["validate", "broken.eval.yaml"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'broken.eval.yaml:7: tests[0].scorers[0].pattern: the pattern does not parse as python: unexpected "def f(" at line 1, column 1',
    );
  });
});

describe("a bundled evalgate (ncc + ship-native) runs ast-grep scorers", () => {
  const bundle = buildBundle();
  // The bundle is run from a folder of its own: nothing above it has a node_modules.
  const home = tempDir("evalgate-bundle-run-");
  const evals = path.join(home, "evals");
  cpSync(FIXTURE, evals, { recursive: true });

  it("ships the binding and a parser per extra language, and cannot reach node_modules", () => {
    const native = readdirSync(path.join(bundle, "native")).sort();
    expect(native).toEqual([
      "ast-grep-napi.linux-x64-gnu.node",
      "lang-go",
      "lang-java",
      "lang-python",
      "lang-rust",
    ]);
    const require = createRequire(path.join(bundle, "index.js"));
    expect(() => require.resolve("@ast-grep/napi")).toThrow();
    expect(existsSync(path.join(bundle, "native", "lang-python", "prebuild-Linux-X64", "parser.so"))).toBe(
      true,
    );
  });

  it("grades TypeScript and Python patterns end to end", () => {
    const out = path.join(home, "bundle-out");
    const r = node([path.join(bundle, "index.js"), "run", "evals", "--out", out], home);
    expect(r.stderr).toBe("");
    const verdicts = Object.fromEntries(
      readJsonl<Row>(path.join(out, "index.jsonl")).map((x) => [x.target, x.verdict]),
    );
    expect(verdicts).toEqual({ fixer: "pass", noop: "fail" });
    const fixer = grading(out, "fixer").scorers;
    expect(fixer.map((s) => [s.name, s.state, s.passed])).toEqual(FIXER_PASSES);
    expect(fixer[3]!.reason).toBe("no match of eval($$$) in 1 changed python file");
    const noop = grading(out, "noop").scorers;
    expect(noop[0]!.reason).toBe(
      "1 match of eval($$$) in 1 of 2 typescript files, expected none: src/cart.ts:12 eval(text)",
    );
    expect(noop[2]!.details).toMatchObject({ match_count: 3, files_searched: 1 });
  });

  it("validates patterns with the bundled parsers", () => {
    writeFileSync(
      path.join(home, "legacy.eval.yaml"),
      COBOL.replace('lang: cobol, pattern: "MOVE $A TO $B"', 'lang: rust, pattern: "$A.unwrap("'),
    );
    const r = node([path.join(bundle, "index.js"), "validate", "legacy.eval.yaml"], home);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'tests[0].scorers[0].pattern: the pattern does not parse as rust: unexpected "$A.unwrap("',
    );
  });

  it("says clearly when a bundle was shipped without its native files", () => {
    const bare = path.join(tempDir("evalgate-bare-"), "dist");
    mkdirSync(bare);
    // Everything ncc wrote (the CLI loads its commands lazily, so there are chunks beside index.js)
    // but the native files.
    for (const name of readdirSync(bundle).filter((n) => n !== "native"))
      cpSync(path.join(bundle, name), path.join(bare, name), { recursive: true });
    const r = node([path.join(bare, "index.js"), "validate", "evals"], home);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /lang: ast-grep cannot use typescript here: ast-grep cannot be loaded on linux-x64-gnu/,
    );
  });
});

describe("the committed dist/ (the action) runs ast-grep scorers", () => {
  it("grades TypeScript and Python patterns from a copy that cannot reach node_modules", () => {
    const root = tempDir("evalgate-dist-run-");
    const dist = path.join(root, "dist");
    cpSync(path.join(ROOT, "dist"), dist, { recursive: true });
    const home = path.join(root, "home");
    cpSync(FIXTURE, path.join(home, "evals"), { recursive: true });
    const outputs = path.join(root, "outputs.txt");
    const event = path.join(root, "event.json");
    writeFileSync(outputs, "");
    writeFileSync(event, "{}");
    const r = spawnSync(process.execPath, [path.join(dist, "index.js")], {
      cwd: home,
      encoding: "utf8",
      timeout: 120_000,
      // The runner's variables of a workflow_dispatch job, without GitHub to talk to: nothing is
      // posted (comment: off), and the upload is skipped with a warning.
      env: {
        PATH: process.env.PATH,
        HOME: root,
        GITHUB_ACTIONS: "true",
        GITHUB_REPOSITORY: "acme/shop",
        GITHUB_EVENT_NAME: "workflow_dispatch",
        GITHUB_EVENT_PATH: event,
        GITHUB_SHA: "0".repeat(40),
        GITHUB_REF: "refs/heads/main",
        GITHUB_RUN_ID: "1",
        GITHUB_API_URL: "http://127.0.0.1:9",
        GITHUB_OUTPUT: outputs,
        GITHUB_WORKSPACE: home,
        RUNNER_TEMP: tempDir("evalgate-dist-temp-"),
        INPUT_EVALS: "evals",
        INPUT_COMMENT: "off",
        INPUT_BASELINE: "off",
        INPUT_OUT: "bundle-out",
        "INPUT_GITHUB-TOKEN": "",
      },
    });
    // The noop target fails its case, so the gate fails: exit 1, and no internal error.
    expect(r.stdout + r.stderr).not.toMatch(/internal error|cannot be loaded/);
    expect(r.status).toBe(1);
    expect(readFileSync(outputs, "utf8")).toMatch(/^verdict<<(\S+)\nfail\n\1$/m);
    const out = path.join(home, "bundle-out");
    const fixer = grading(out, "fixer").scorers;
    expect(fixer.map((s) => [s.name, s.state, s.passed])).toEqual(FIXER_PASSES);
    expect(grading(out, "noop").scorers[0]!.passed).toBe(false);
  });
});
