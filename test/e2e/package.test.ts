/**
 * evalgate as a user gets it: `npm pack` of this checkout, installed into a fresh project from the
 * tarball (the runtime dependencies come from the npm registry or npm's cache), then
 * `npx evalgate --version` and `npx evalgate run` on the quickstart suite. Also what the tarball
 * holds: the CLI's run-time files only (no sources, tests, source maps, dist/ or the action's edge).
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers.js";

interface PackInfo {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string }[];
}

function npm(args: string[], cwd: string) {
  const r = spawnSync("npm", args, {
    cwd,
    encoding: "utf8",
    timeout: 300_000,
    env: {
      ...process.env,
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
    },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe("the npm package", () => {
  let info: PackInfo;
  let tarball: string;
  beforeAll(() => {
    const dest = tempDir("evalgate-pack-");
    // --ignore-scripts: lib/ is built by the test run already (prepare would rebuild it).
    const r = npm(["pack", "--json", "--ignore-scripts", "--pack-destination", dest], ROOT);
    expect(r.stderr).not.toMatch(/npm (error|ERR!)/);
    expect(r.code).toBe(0);
    info = (JSON.parse(r.stdout) as PackInfo[])[0]!;
    tarball = path.join(dest, info.filename);
  }, 120_000);

  it("ships the CLI's run-time files and nothing else", () => {
    const files = info.files.map((f) => f.path).sort();
    expect(files).toContain("bin/evalgate.js");
    expect(files).toContain("lib/cli/main.js");
    expect(files).toContain("lib/version.js");
    expect(files).toContain("schema/eval.schema.json");
    // The bundle files' JSON Schemas, for tools that read a bundle.
    expect(files).toContain("schema/summary.schema.json");
    expect(files).toContain("package.json");
    expect(files).toContain("README.md");
    const unexpected = files.filter(
      (f) =>
        !/^(bin\/evalgate\.js|lib\/.+\.js|schema\/(eval|summary|index-row|case-summary)\.schema\.json|package\.json|README\.md|LICENSE)$/.test(
          f,
        ),
    );
    expect(unexpected).toEqual([]);
    // The action's edge needs @actions/* (bundled into dist/ for the action, not the CLI's dependencies).
    expect(files.filter((f) => f === "lib/index.js" || f.startsWith("lib/github/"))).toEqual([]);
    // Every module the CLI can load is there: each relative import of a shipped file resolves.
    const shipped = new Set(files);
    for (const f of files.filter((x) => x.startsWith("lib/"))) {
      const text = readFileSync(path.join(ROOT, f), "utf8");
      for (const m of text.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), m[1]!));
        expect(shipped.has(target), `${f} imports ${m[1]}`).toBe(true);
      }
    }
  });

  it("is small: under 400 kB packed, 1.5 MB unpacked", () => {
    expect(info.size).toBeLessThan(400_000);
    expect(info.unpackedSize).toBeLessThan(1_500_000);
  });

  it("needs no package at run time that only the action's bundle uses", () => {
    for (const name of Object.keys(pkg.dependencies))
      expect(name, "dist/ bundles these; the CLI never loads them").not.toMatch(/^@(actions|octokit)\//);
    for (const name of ["@actions/core", "@actions/github", "@actions/artifact"])
      expect(pkg.devDependencies[name]).toBeDefined();
  });

  it("installs from the tarball into a fresh project, and npx evalgate runs the quickstart suite", () => {
    const project = tempDir("evalgate-user-");
    writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({ name: "user-project", private: true }),
    );
    const install = npm(["install", "--no-save", "--prefer-offline", tarball], project);
    expect(install.stderr).not.toMatch(/npm (error|ERR!)/);
    expect(install.stderr, "no engine warnings on a supported Node").not.toMatch(/EBADENGINE/);
    expect(install.code).toBe(0);
    expect(existsSync(path.join(project, "node_modules/@actions"))).toBe(false);

    const version = spawnSync("npx", ["--no-install", "evalgate", "--version"], {
      cwd: project,
      encoding: "utf8",
    });
    expect(version.stdout.trim()).toBe(pkg.version);

    cpSync(path.join(ROOT, "examples/quickstart"), path.join(project, "evals/quickstart"), {
      recursive: true,
    });
    cpSync(path.join(ROOT, "examples/agents"), path.join(project, "evals/agents"), { recursive: true });
    const run = spawnSync(
      "npx",
      ["--no-install", "evalgate", "run", "evals/quickstart", "--out", "bundle", "--concurrency", "2"],
      { cwd: project, encoding: "utf8", timeout: 300_000, env: { ...process.env, CI: "1" } },
    );
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/✓ pass\s+quickstart\/empty-cart-total\s+reference/);
    expect(run.status).toBe(0);
    const summary = JSON.parse(readFileSync(path.join(project, "bundle/summary.json"), "utf8")) as {
      gate: { verdict: string };
    };
    expect(summary.gate.verdict).toBe("pass");
  }, 600_000);
});
