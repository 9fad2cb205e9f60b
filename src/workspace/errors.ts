/** Why a workspace could not be prepared. */
import type { SetupRecord } from "./start.js";

/**
 * `config`: the user's mistake, found while preparing (a ref or subdir that does not exist, a token
 * variable that is not set or not accepted, an archive that is refused): reported as a ConfigError
 * before any agent runs. `seed` and `setup`: the seed could not be fetched or setup failed; every
 * attempt of the affected cases ends as `workspace_error` or `setup_error`.
 */
export type WorkspaceFailure = "config" | "seed" | "setup";

export interface WorkspaceErrorDetails {
  /** The setup log, when setup ran. */
  setupLog?: string;
  /** What setup ran and how long it took, when it ran. */
  setup?: SetupRecord;
  /** For `config`: the key under the seed that is wrong, e.g. `git.ref`. */
  key?: string;
  /** For `config`: what to do about it. */
  hint?: string;
}

export class WorkspaceError extends Error {
  readonly setupLog?: string;

  constructor(
    readonly failure: WorkspaceFailure,
    message: string,
    readonly details: WorkspaceErrorDetails = {},
  ) {
    super(message);
    this.name = "WorkspaceError";
    if (details.setupLog) this.setupLog = details.setupLog;
  }
}
