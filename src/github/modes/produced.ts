/** What every action mode hands to the publishing of a step (github/outcome.ts): one bundle and its context. */
import type { Bundle } from "../../bundle/read.js";
import { baselineForSuites } from "../../bundle/suites.js";
import type { WireSummary } from "../../bundle/wire.js";
import type { Logger } from "../../log.js";
import type { Progress } from "../../report/console.js";
import type { ReportView } from "../../report/view.js";
import type { ProcessRunner } from "../../sandbox/process.js";
import type { Baseline } from "../baseline.js";
import type { GitHubClient } from "../client.js";

export interface Produced {
  dir: string;
  summary: WireSummary;
  /** The baseline compared with, if any. */
  baseline?: Bundle;
  /** Why there is no baseline. */
  baselineNote?: string;
  /** Which run's bundle `baseline: auto` used, the newer ones it skipped and why, how the suites fit. */
  baselineReport?: { used?: string; skipped: string[]; fit?: string };
  /** This step made the bundle (run, merge), so it uploads it; a published bundle is not uploaded again. */
  made: boolean;
  /** Set when this step made the bundle: the view its reports were rendered from. */
  view?: ReportView;
  /** Set when the bundle came from a workflow_run: the PR and commit it belongs to. */
  from?: { pr: number | null; sha: string };
}

/** What the modes use of the step: GitHub, the log, the environment. */
export interface ModeDeps {
  client: GitHubClient | undefined;
  logger: Logger;
  env: NodeJS.ProcessEnv;
}

/** The run mode also runs agents and scorers: with the edge's process runner and progress, as the CLI's run. */
export interface RunModeDeps extends ModeDeps {
  runner: ProcessRunner;
  progress: Progress;
}

/** A bundle this step made (run, merge), with the baseline it was compared with or why there was none. */
export function madeHere(
  dir: string,
  made: { summary: WireSummary; view: ReportView },
  base: Baseline,
  /** The suites of the run: a baseline of other suites is compared over the shared ones only. */
  suites?: readonly string[],
): Produced {
  const fit = base.bundle && suites ? baselineForSuites(base.bundle, suites).note : undefined;
  return {
    dir,
    summary: made.summary,
    view: made.view,
    ...(base.bundle ? { baseline: base.bundle } : {}),
    ...(base.note ? { baselineNote: base.note } : {}),
    ...(base.used || base.skipped?.length || fit
      ? {
          baselineReport: {
            ...(base.used ? { used: base.used } : {}),
            skipped: base.skipped ?? [],
            ...(fit ? { fit } : {}),
          },
        }
      : {}),
    made: true,
  };
}
