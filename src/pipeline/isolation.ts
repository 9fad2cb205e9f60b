/** The run's isolation: the machine probed once, each target's level decided and said on the console. */
import type { WireContainerIsolation } from "../bundle/wire.js";
import type { FinishedCase } from "../bundle/write.js";
import type { Plan } from "../config/types.js";
import { UsageError } from "../errors.js";
import type { Logger } from "../log.js";
import {
  isolationGap,
  planIsolation,
  probeIsolation,
  type Reaper,
  type RunIsolation,
} from "../sandbox/isolation.js";

/**
 * Probes the machine once per run and decides each target's isolation (docs/decisions/0090). When a
 * target asks for sandbox: bwrap, bubblewrap must be installed and able to create namespaces here:
 * checked before anything runs, so the run stops with one clear message instead of failing every
 * attempt.
 */
export async function isolationOf(plan: Plan, logger: Logger): Promise<RunIsolation & { reaper: Reaper }> {
  // The agents that run on the runner; one whose every case has an environment runs in containers.
  const targets = new Map<string, Plan["cases"][number]["target"]>();
  const contained = new Set<string>();
  for (const c of plan.cases) {
    if (c.target.provider === "reference" || c.target.provider === "noop") continue;
    if (c.environment) contained.add(c.target.name);
    else targets.set(c.target.name, c.target);
  }
  const inContainers = [...contained].filter((name) => !targets.has(name));
  if (inContainers.length > 0)
    logger.info(`isolation: container for ${inContainers.join(", ")} (each case's environment)`);
  // Setup and the scorers that run commands run under bubblewrap when the run has it (0185).
  const commands = plan.cases.some(
    (c) =>
      c.test.workspace.setup.command !== undefined ||
      c.test.scorers.some((s) => s.type === "command" || s.type === "script" || s.type === "tests"),
  );
  const probe = await probeIsolation(commands || [...targets.values()].some((t) => t.sandbox));
  for (const note of probe.provisioned ?? []) logger.info(`isolation: ${note}`);
  const strict = [...targets.values()].filter((t) => t.sandbox?.kind === "bwrap").map((t) => t.name);
  if (strict.length > 0 && !probe.bwrap.ok) {
    const who = `target${strict.length > 1 ? "s" : ""} ${strict.join(", ")}`;
    throw new UsageError(
      `${who} use${strict.length > 1 ? "" : "s"} sandbox: bwrap, but ${probe.bwrap.message}`,
    );
  }
  const planned = planIsolation([...targets.values()], probe);
  if (targets.size === 0 && inContainers.length > 0)
    planned.reason = "every agent runs in its case's container (isolation.containers)";
  return { ...planned, reaper: probe.reaper };
}

/**
 * summary.json `isolation.containers`: each target's agent in the containers of each image, from
 * what its attempts recorded (an image that could not be made ready ran nothing).
 */
export function containerIsolation(finished: readonly FinishedCase[]): WireContainerIsolation[] {
  const rows = new Map<string, WireContainerIsolation>();
  for (const c of finished) {
    const { name, provider } = c.spec.target;
    if (provider === "reference" || provider === "noop") continue;
    const seen = new Set<string>();
    for (const t of c.tries) {
      const e = t.environment;
      if (!e) continue;
      const key = JSON.stringify([name, e.engine, e.image, e.digest]);
      const row = rows.get(key) ?? {
        target: name,
        engine: e.engine,
        image: e.image,
        digest: e.digest,
        cases: 0,
      };
      if (!seen.has(key)) row.cases++;
      seen.add(key);
      rows.set(key, row);
    }
  }
  return [...rows.values()];
}

/** One line on the console; a warning, with what is left open, when an agent runs without bubblewrap. */
export function reportIsolation(isolation: RunIsolation, logger: Logger): void {
  if (isolation.level === null) return;
  const weak = isolation.targets.filter((t) => t.level !== "bwrap");
  if (weak.length === 0) {
    logger.info("isolation: bwrap (every agent runs under bubblewrap)");
    return;
  }
  const byLevel = new Map<string, typeof weak>();
  for (const t of weak) byLevel.set(t.level, [...(byLevel.get(t.level) ?? []), t]);
  for (const [level, ts] of byLevel) {
    logger.warn(
      `isolation: ${level} for ${ts.map((t) => t.name).join(", ")}: ${isolationGap(ts[0]!.level, isolation.commandsLevel)}. Why: ${ts[0]!.reason}`,
    );
  }
}
