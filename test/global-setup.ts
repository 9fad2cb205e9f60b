/**
 * vitest's global setup: one folder per test run for the fixtures that test files share
 * (test/shared-fixtures.ts), handed to them with provide/inject, and checked and removed at the end.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { DOWNLOADS } from "./agent-cli.js";
import { changedFixtures } from "./shared-fixtures.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The folder of this run's shared fixtures. */
    fixtureRoot: string;
  }
}

export default function setup(project: TestProject): () => void {
  announceDownloads(project);
  const root = mkdtempSync(path.join(os.tmpdir(), "evalgate-test-run-"));
  project.provide("fixtureRoot", root);
  // Setup's package cache (docs/eval-files.md) of this test run only: a test's npm setup neither
  // reads nor fills the developer's own (~/.cache/evalgate), so no run depends on an earlier one.
  process.env.EVALGATE_CACHE_DIR ??= path.join(root, "package-cache");
  return () => {
    const changed = changedFixtures(root);
    if (!process.env.EVALGATE_KEEP_TEST_DIRS) rmSync(root, { recursive: true, force: true });
    if (changed.length > 0) {
      // The test files that used them fail first (helpers.ts); this catches what they cannot see.
      // vitest reports an error thrown here but keeps its exit status, so set it too.
      process.exitCode = 1;
      throw new Error(
        `a test wrote into the shared fixtures ${changed.join(", ")} (copy them first: copyFixture)`,
      );
    }
  };
}

/**
 * Says, before the first test starts, what this run will download from npm: the agent CLIs of the
 * real-agent tests, about 1 GB on a first run, then kept in node_modules/.cache/. Only the files
 * this run selects count (`npm run test:unit` and a run of one file download nothing).
 */
function announceDownloads(project: TestProject): void {
  // The file filters of `vitest run FILTER...` (vitest's own field; without it, every file runs).
  const filters = (project.vitest as { filenamePattern?: string[] }).filenamePattern ?? [];
  const pending = DOWNLOADS.filter((d) => {
    const file = path.join(project.config.root, d.file);
    const selected = filters.length === 0 || filters.some((f) => file.includes(f.replace(/^\.\//, "")));
    return selected && project.matchesTestGlob(file) && !existsSync(d.marker);
  });
  if (pending.length === 0) return;
  const mb = pending.reduce((sum, d) => sum + d.mb, 0);
  process.stderr.write(
    [
      `evalgate tests: this run downloads agent CLIs from npm, about ${mb >= 1000 ? `${(mb / 1000).toFixed(1)} GB` : `${mb} MB`}, once:`,
      ...pending.map((d) => `  - ${d.what} (~${d.mb} MB), for ${d.file}`),
      "  They are kept in node_modules/.cache/ (evalgate-agents/, evalgate-tool-cache/) for later runs.",
      "  To run without them: npm run test:unit (the fast lane: no end-to-end tests), or",
      "  npx vitest run --exclude 'test/e2e/*-real.test.ts' --exclude test/e2e/agent-version.test.ts",
      "",
    ].join("\n"),
  );
}
