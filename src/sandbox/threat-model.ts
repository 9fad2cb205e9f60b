/**
 * The threat model as data: one row per promise, whether each isolation level keeps it, and the
 * words for what is left open where it does not. docs/threat-model.md shows this table (a test keeps
 * the two the same), the console and the comment say the open rows of a run's level, and
 * summary.json lists them (`isolation.gaps`). test/e2e/threat-model.test.ts checks every cell.
 *
 * `agent` rows follow the level the agents ran under; `commands` rows (setup, and scorers, which run
 * the agent's code) follow the level those ran under: bubblewrap whenever the run has it.
 */
import type { IsolationLevel } from "./isolation.js";

export interface ThreatRow {
  id: string;
  /** Whose containment the row is about. */
  of: "agent" | "commands" | "run";
  /** The promise, as the documentation states it. */
  promise: string;
  keeps: Record<IsolationLevel, boolean>;
  /** What is left open where the promise is not kept, completing "the agent could …". */
  open: string;
}

const ALL = { bwrap: true, "pid-namespace": true, subreaper: true, none: true };
const BWRAP_ONLY = { bwrap: true, "pid-namespace": false, subreaper: false, none: false };

export const THREAT_MODEL: readonly ThreatRow[] = [
  {
    id: "survivors",
    of: "agent",
    promise:
      "No process the agent starts outlives its attempt (a double-forked `setsid` daemon included), so none rewrites the bundle after the run",
    keeps: { bwrap: true, "pid-namespace": true, subreaper: true, none: false },
    open: "leave processes running after its attempt (and rewrite the bundle once the run ended)",
  },
  {
    id: "kill-9",
    of: "agent",
    promise: "`kill -9` of evalgate ends every agent, setup and scorer process",
    keeps: { bwrap: true, "pid-namespace": true, subreaper: true, none: false },
    open: "keep running after evalgate itself was killed",
  },
  {
    id: "hold",
    of: "run",
    promise: "A process that keeps the agent's output open does not hold the run",
    keeps: ALL,
    open: "hold the run",
  },
  {
    id: "run-files",
    of: "agent",
    promise:
      "The agent cannot write the run's files: the start tree, other attempts, the capture store, the bundle, the repository, `$GITHUB_OUTPUT` and the like",
    keeps: BWRAP_ONLY,
    open: "write the run's files (the start tree, other attempts, the bundle, the repository)",
  },
  {
    id: "environ",
    of: "agent",
    promise: "The agent cannot read evalgate's environment (`/proc/<pid>/environ`: the token inputs)",
    keeps: { bwrap: true, "pid-namespace": true, subreaper: false, none: false },
    open: "read evalgate's environment",
  },
  {
    id: "answer-key-agent",
    of: "agent",
    promise:
      "The answer key is out of the agent's view: every test's verifiers and reference, the repository's `.git`, earlier bundles (`.evalgate/`), the run's work folder and other attempts",
    keeps: BWRAP_ONLY,
    open: "read the answer key (verifiers, references, the repository's .git, earlier bundles)",
  },
  {
    id: "network",
    of: "agent",
    promise:
      "The agent reaches the network only as its target's `sandbox.network` says (auto: on, bwrap: off)",
    keeps: BWRAP_ONLY,
    open: "reach the network whatever its target says",
  },
  {
    id: "commands-network",
    of: "commands",
    promise:
      "The code a scorer runs reaches the network only with the scorer's `network: true`; setup has it unless `network: false`",
    keeps: BWRAP_ONLY,
    open: "reach the network from the code its scorers run",
  },
  {
    id: "answer-key-scorers",
    of: "commands",
    promise:
      "The code a scorer runs (the agent's code, its tests) sees the workspace, the test's own verifiers and the eval file's folder, and none of the rest of the answer key",
    keeps: BWRAP_ONLY,
    open: "read the answer key from the code its scorers run",
  },
  {
    id: "scorer-files",
    of: "commands",
    promise:
      "The code a scorer or setup runs writes only the workspace (setup: the start tree) and its own HOME, TMPDIR and report folder, never the repository, the bundle or evalgate's state",
    keeps: BWRAP_ONLY,
    open: "write the run's files from the code its scorers run",
  },
  {
    id: "own-git",
    of: "run",
    promise:
      "evalgate's own git commands never run configuration an agent could have written (`core.fsmonitor`, hooks, filters, includes), and the capture ignores the agent's `.gitattributes`",
    keeps: ALL,
    open: "make evalgate's own git run its code",
  },
  {
    id: "scorer-git",
    of: "run",
    promise:
      "A scorer's git in the workspace runs no `core.fsmonitor`, hook or filter the agent planted in `.git` (its configuration, `info/` and hooks are put back first)",
    keeps: ALL,
    open: "make a scorer's git run its code",
  },
  {
    id: "report",
    of: "run",
    promise:
      "A tests scorer reads no report planted before its command ran, and with `{REPORT_FILE}` (a fresh path outside the workspace per grading) none written at a path the eval file names",
    keeps: ALL,
    open: "plant a tests scorer's report",
  },
  {
    id: "one-out",
    of: "run",
    promise: "Two runs cannot write one `--out`: the second exits 2 naming the first",
    keeps: ALL,
    open: "mix two runs in one bundle",
  },
];

/**
 * The rows a run does not keep: its agents' weakest level for the agent rows, and the level its
 * setup and scorers ran under for theirs. Empty at bwrap.
 */
export function openRows(agents: IsolationLevel, commands: IsolationLevel = agents): ThreatRow[] {
  return THREAT_MODEL.filter((r) => !r.keeps[r.of === "commands" ? commands : agents]);
}

/** "the agent could X, Y and Z", or null when every row is kept. */
export function gapSentence(rows: readonly ThreatRow[]): string | null {
  if (rows.length === 0) return null;
  const parts = rows.map((r) => r.open);
  const last = parts.pop()!;
  return `the agent could ${parts.length > 0 ? `${parts.join(", ")} and ${last}` : last}`;
}
