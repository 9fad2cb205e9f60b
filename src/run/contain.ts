/**
 * One sandbox for everything that runs the agent's code (docs/decisions/0185): what the run hides
 * from every contained process, and the view a scorer gets. A scorer is the eval author's, but it
 * executes the agent's code (its tests import it), so under bubblewrap it sees what the agent saw
 * and little more: the workspace writable, its own HOME, TMPDIR and report folder, the eval file's
 * folder read-only with the answer key masked, no network unless the scorer says `network: true`.
 */
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import path from "node:path";
import { answerKeyOf } from "../config/answer-key.js";
import type { CaseSpec, Plan, ScorerSpec } from "../config/types.js";
import { type ContainedView, type Containment, containedRunner } from "../sandbox/bwrap.js";
import type { OverlayMount } from "../sandbox/overlay.js";
import type { ProcessRunner } from "../sandbox/process.js";

/**
 * What no contained process (agent, setup, scorer) may read wherever it lies: every test's answer
 * key (verifiers, reference, a reference script's own folder: config/answer-key.ts), the bundle, the run's work folder (other attempts, the start trees, the capture
 * stores), and every `.git` and `.evalgate` folder on the way to an eval file or the bundle (the
 * repository's history holds the answer key; `.evalgate/results` holds earlier bundles).
 */
export function runHidden(plan: Plan, workRoot: string, bundleDir?: string, packageCache?: string): string[] {
  const out = new Set<string>();
  // The package cache: setup gets copies of it, never the cache itself (docs/decisions/0220).
  if (packageCache) out.add(packageCache);
  for (const c of plan.cases) for (const k of answerKeyOf(c, plan.cases)) out.add(k);
  // With the exam from another commit: the checkout's copies of the answer keys (config/plan/exam.ts).
  for (const k of plan.answerKeys ?? []) out.add(k);
  if (bundleDir) out.add(bundleDir);
  out.add(workRoot);
  const starts = new Set([...plan.cases.map((c) => c.evalDir), ...(bundleDir ? [bundleDir] : [])]);
  const seen = new Set<string>();
  for (const from of starts) {
    for (let d = path.resolve(from); !seen.has(d); d = path.dirname(d)) {
      seen.add(d);
      for (const name of [".git", ".evalgate"]) {
        if (existsSync(path.join(d, name))) out.add(path.join(d, name));
      }
      if (d === path.dirname(d)) break;
    }
  }
  return [...out];
}

/** The processes of one attempt's grading: a runner and, for a tests scorer, a fresh report folder. */
export interface ScorerProcesses {
  forScorer(s: ScorerSpec): Promise<{ runner: ProcessRunner; reportDir?: string }>;
}

export function scorerProcesses(
  runner: ProcessRunner,
  containment: Containment,
  spec: CaseSpec,
  dirs: {
    workspace: string;
    attempt: string;
    home: string;
    tmp: string;
    /** What setup built, shared with the attempt's upper layer (run/share.ts). */
    overlays?: readonly OverlayMount[];
  },
  /** In an environment: the case's image shown the same view (run/environment.ts), not bubblewrap. */
  placed?: (inner: ProcessRunner, view: ContainedView & { hidden: readonly string[] }) => ProcessRunner,
): ScorerProcesses {
  // The test's own verifiers are in the workspace by design; everyone else's stay hidden.
  const own = new Set(spec.test.workspace.verifiers.map((v) => v.from));
  const hidden = containment.hidden.filter((h) => !own.has(h));
  return {
    async forScorer(s) {
      // Fresh per grading, named by chance: the code under test cannot have planted a report there.
      const reportDir = s.type === "tests" ? await mkdtemp(path.join(dirs.attempt, "report-")) : undefined;
      const o = s.options as { network?: boolean; read_only?: string[] };
      const view = {
        network: o.network ?? false,
        readOnly: [s.evalDir, ...(o.read_only ?? []).map((p) => path.resolve(s.evalDir, p))],
        writable: [dirs.workspace, dirs.home, dirs.tmp, ...(reportDir ? [reportDir] : [])],
        hidden,
        fix: `add {DIR} to the scorer's \`read_only:\` (scorer ${s.name})`,
        ...(dirs.overlays?.length ? { overlays: dirs.overlays } : {}),
      };
      const contained = placed ? placed(runner, view) : containedRunner(runner, containment, view);
      return { runner: contained, ...(reportDir ? { reportDir } : {}) };
    },
  };
}
