/** Where evalgate makes its scratch folders. */
import os from "node:os";

/** The runner's temp folder on GitHub Actions (RUNNER_TEMP), else the system's. */
export function tempRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.RUNNER_TEMP || os.tmpdir();
}
