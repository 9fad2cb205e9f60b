/**
 * vitest's global setup: one folder per test run for the fixtures that test files share
 * (test/shared-fixtures.ts), handed to them with provide/inject, and checked and removed at the end.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { changedFixtures } from "./shared-fixtures.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The folder of this run's shared fixtures. */
    fixtureRoot: string;
  }
}

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(path.join(os.tmpdir(), "evalgate-test-run-"));
  project.provide("fixtureRoot", root);
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
