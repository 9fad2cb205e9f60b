/**
 * What the shards' summaries say of how their attempts ran (what the agents ran under, how setup's
 * trees were shared), merged into the whole run's. A shard is an artifact: read field by field.
 */
import { ISOLATION_LEVELS, type IsolationLevel, weakerLevel } from "../sandbox/isolation.js";
import { openRows } from "../sandbox/threat-model.js";
import type { Bundle } from "./read.js";
import { SETUP_TREE_MODES, type SetupTreeMode, wireSetupTrees } from "./summary.js";
import type { WireContainerIsolation, WireIsolation, WireSummary } from "./wire.js";

/**
 * How the whole run's attempts got what setup built: each mode's attempts summed over the shards,
 * every shard's reasons. Undefined when no shard's setup built a tree.
 */
export function mergedSetupTrees(shards: readonly Bundle[]): WireSummary["setup_trees"] {
  const attempts: Partial<Record<SetupTreeMode, number>> = {};
  const reasons: string[] = [];
  for (const b of shards) {
    const trees = b.summary.setup_trees;
    if (!trees) continue;
    for (const mode of SETUP_TREE_MODES) {
      const n = trees.attempts[mode];
      if (n) attempts[mode] = (attempts[mode] ?? 0) + n;
    }
    reasons.push(...trees.reasons);
  }
  return wireSetupTrees(attempts, reasons);
}

const isLevel = (v: unknown): v is IsolationLevel =>
  typeof v === "string" && (ISOLATION_LEVELS as readonly string[]).includes(v);

/**
 * What the agents of the whole run ran under: the weakest level of the shards, each target at its
 * weakest, with the reasons of the shards at that level (docs/decisions/0130). A shard is an
 * artifact, so its `isolation` is read field by field: one that does not say (an older evalgate)
 * or says something unknown counts as `none`, never as isolated. Undefined when no shard says.
 */
export function mergedIsolation(shards: readonly Bundle[]): WireIsolation | undefined {
  if (!shards.some((b) => b.summary.isolation)) return undefined;
  const parts = shards.map((b) => {
    const name = b.summary.run.shard
      ? `shard ${b.summary.run.shard.index}/${b.summary.run.shard.total}`
      : b.dir;
    const iso = b.summary.isolation as Partial<Record<keyof WireIsolation, unknown>> | undefined;
    const unknown = {
      level: "none" as IsolationLevel,
      reason: `${name} does not say what its agents ran under`,
    };
    if (!iso || typeof iso !== "object") return { name, ...unknown, targets: [] };
    const targets = (Array.isArray(iso.targets) ? iso.targets : []).flatMap((t: unknown) => {
      const x = (t && typeof t === "object" ? t : {}) as Record<string, unknown>;
      if (typeof x.name !== "string") return [];
      const level = isLevel(x.level) ? x.level : "none";
      const reason = isLevel(x.level) ? (typeof x.reason === "string" ? x.reason : null) : unknown.reason;
      return [{ name: x.name, level, reason }];
    });
    if (iso.level === null) return { name, level: null, reason: null, targets };
    if (!isLevel(iso.level)) return { name, ...unknown, targets };
    return { name, level: iso.level, reason: typeof iso.reason === "string" ? iso.reason : null, targets };
  });
  const byTarget = new Map<string, WireIsolation["targets"][number]>();
  for (const p of parts) {
    for (const t of p.targets) {
      const seen = byTarget.get(t.name);
      if (!seen || weakerLevel(seen.level, t.level) !== seen.level) byTarget.set(t.name, t);
    }
  }
  const levels = parts.flatMap((p) => (p.level ? [p.level] : []));
  const containers = mergedContainers(shards);
  if (levels.length === 0) {
    return {
      level: null,
      reason:
        containers.length > 0
          ? "every agent runs in its case's container (isolation.containers)"
          : "no target runs an agent program",
      targets: [...byTarget.values()],
      ...(containers.length > 0 ? { containers } : {}),
    };
  }
  const level = levels.reduce(weakerLevel);
  const weakest = parts.filter((p) => p.level === level);
  // What any shard left open, as it says, or by its level (an older evalgate).
  const gaps = new Set<string>();
  shards.forEach((b, i) => {
    const said = (b.summary.isolation as { gaps?: unknown } | undefined)?.gaps;
    const lvl = parts[i]!.level;
    if (Array.isArray(said)) for (const g of said) if (typeof g === "string") gaps.add(g);
    if (!Array.isArray(said) && lvl) for (const r of openRows(lvl)) gaps.add(r.open);
  });
  const reasons = [...new Set(weakest.map((p) => p.reason).filter((r): r is string => r !== null))];
  const reason =
    reasons.length === 0
      ? null
      : reasons.length === 1
        ? reasons[0]!
        : weakest
            .filter((p) => p.reason !== null)
            .map((p) => `${p.name}: ${p.reason}`)
            .join("; ");
  return {
    level,
    reason,
    targets: [...byTarget.values()],
    ...(gaps.size > 0 ? { gaps: [...gaps] } : {}),
    ...(containers.length > 0 ? { containers } : {}),
  };
}

/** The shards' `isolation.containers`, row by row (an artifact: each field checked), cases summed. */
function mergedContainers(shards: readonly Bundle[]): WireContainerIsolation[] {
  const rows = new Map<string, WireContainerIsolation>();
  for (const b of shards) {
    const said = (b.summary.isolation as { containers?: unknown } | undefined)?.containers;
    if (!Array.isArray(said)) continue;
    for (const r of said as Record<string, unknown>[]) {
      const { target, engine, image, digest, cases } = r ?? {};
      if (![target, engine, image, digest].every((v) => typeof v === "string")) continue;
      if (typeof cases !== "number" || !Number.isInteger(cases) || cases < 0) continue;
      const key = JSON.stringify([target, engine, image, digest]);
      const row = rows.get(key);
      if (row) row.cases += cases;
      else rows.set(key, { target, engine, image, digest, cases } as WireContainerIsolation);
    }
  }
  return [...rows.values()];
}
