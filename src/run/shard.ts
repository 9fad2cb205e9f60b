/**
 * Which cases a shard runs. With the baseline's durations: longest case first onto the shard with
 * the least time so far (LPT), so the shards finish together even when one target is a slow LLM agent
 * and another a quick script. Without them: by count, each target's cases dealt round the shards in
 * turn, so no shard gets one target's every case. Every shard computes the same assignment from the
 * same inputs (the cases and the baseline), which is what keeps the shards disjoint. The durations
 * are handed in (the pipeline reads them from the baseline bundle): this stage reads no bundle.
 */
import type { CaseSpec } from "../config/types.js";

export interface ShardAssignment {
  /** For each shard (0-based), the keys of its cases. */
  shards: string[][];
  /** For each shard, the summed baseline durations of its cases (ms); cases the baseline lacks count as the mean. */
  loads: number[];
  by: "duration" | "count";
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Case key → the case's time in the baseline (ms, bundle/durations.ts), for `assignShards`. */
export type Durations = ReadonlyMap<string, number>;

/**
 * Assigns `cases` (identity key and target) to `total` shards. `durations` by identity key: when
 * any case has one, the assignment balances time; else count, with targets interleaved.
 */
export function assignShards(
  cases: readonly { key: string; target: string }[],
  total: number,
  durations?: Durations,
): ShardAssignment {
  const shards: string[][] = Array.from({ length: total }, () => []);
  const loads = new Array<number>(total).fill(0);
  const known = cases.map((c) => durations?.get(c.key)).filter((d): d is number => d !== undefined);
  if (known.length === 0) {
    // By target, then identity: dealing in turn spreads each target's cases over every shard.
    const order = [...cases].sort((a, b) => cmp(a.target, b.target) || cmp(a.key, b.key));
    order.forEach((c, i) => {
      shards[i % total]!.push(c.key);
      loads[i % total]! += 1;
    });
    return { shards, loads, by: "count" };
  }
  const mean = known.reduce((a, d) => a + d, 0) / known.length;
  const weighted = cases
    .map((c) => ({ key: c.key, ms: durations?.get(c.key) ?? mean }))
    .sort((a, b) => b.ms - a.ms || cmp(a.key, b.key));
  for (const c of weighted) {
    let least = 0;
    for (let i = 1; i < total; i++) if (loads[i]! < loads[least]!) least = i;
    shards[least]!.push(c.key);
    loads[least]! += c.ms;
  }
  return { shards, loads, by: "duration" };
}

/** The cases of shard `index` (1-based) of `total`. */
export function casesOfShard<C extends Pick<CaseSpec, "key" | "target">>(
  cases: readonly C[],
  shard: { index: number; total: number },
  durations?: Durations,
): C[] {
  const a = assignShards(
    cases.map((c) => ({ key: c.key, target: c.target.name })),
    shard.total,
    durations,
  );
  const mine = new Set(a.shards[shard.index - 1]);
  return cases.filter((c) => mine.has(c.key));
}
