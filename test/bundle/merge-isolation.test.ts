/** The merged bundle's `isolation`: the weakest level of the shards, with their reasons. */
import { describe, expect, it } from "vitest";
import { mergedIsolation } from "../../src/bundle/merge-facts.js";
import type { Bundle } from "../../src/bundle/read.js";

function shard(index: number, isolation: unknown): Bundle {
  return {
    dir: `/b/s${index}`,
    sealed: true,
    rows: [],
    summary: { run: { shard: { index, total: 3 } }, ...(isolation === undefined ? {} : { isolation }) },
  } as unknown as Bundle;
}

const BWRAP = { level: "bwrap", reason: null, targets: [{ name: "a", level: "bwrap", reason: null }] };
const SUB = {
  level: "subreaper",
  reason: "bubblewrap cannot run here: no user namespaces",
  targets: [{ name: "a", level: "subreaper", reason: "bubblewrap cannot run here: no user namespaces" }],
};
const NONE = {
  level: "none",
  reason: "sandbox: none in the eval file",
  targets: [
    { name: "a", level: "bwrap", reason: null },
    { name: "b", level: "none", reason: "sandbox: none in the eval file" },
  ],
};
const NO_AGENT = { level: null, reason: "no target runs an agent program", targets: [] };

describe("mergedIsolation", () => {
  it.each([
    ["every shard under bwrap", [BWRAP, BWRAP, BWRAP], { level: "bwrap", reason: null }],
    [
      "one shard without bubblewrap makes the run subreaper, with its reason",
      [BWRAP, SUB, BWRAP],
      { level: "subreaper", reason: SUB.reason },
    ],
    ["the weakest wins over a weak one", [SUB, NONE, BWRAP], { level: "none", reason: NONE.reason }],
    [
      "shards without agents do not count",
      [NO_AGENT, SUB, NO_AGENT],
      { level: "subreaper", reason: SUB.reason },
    ],
    [
      "no agent anywhere",
      [NO_AGENT, NO_AGENT, NO_AGENT],
      { level: null, reason: "no target runs an agent program" },
    ],
    [
      "a shard that does not say counts as none",
      [BWRAP, undefined, BWRAP],
      { level: "none", reason: "shard 2/3 does not say what its agents ran under" },
    ],
    [
      "a shard with a level evalgate does not know counts as none",
      [BWRAP, BWRAP, { level: "***", reason: 5, targets: "x" }],
      { level: "none", reason: "shard 3/3 does not say what its agents ran under" },
    ],
    [
      "two shards at the weakest level with different reasons: both, by shard",
      [SUB, { ...SUB, reason: "perl is missing" }, BWRAP],
      { level: "subreaper", reason: `shard 1/3: ${SUB.reason}; shard 2/3: perl is missing` },
    ],
  ])("%s", (_what, parts, want) => {
    expect(mergedIsolation(parts.map((p, i) => shard(i + 1, p)))).toMatchObject(want);
  });

  it("each target at its weakest level over the shards", () => {
    const m = mergedIsolation([shard(1, BWRAP), shard(2, SUB), shard(3, NONE)]);
    expect(m?.targets).toEqual([
      { name: "a", level: "subreaper", reason: SUB.reason },
      { name: "b", level: "none", reason: "sandbox: none in the eval file" },
    ]);
  });

  it("no shard says (bundles of an evalgate before isolation): nothing is claimed", () => {
    expect(mergedIsolation([shard(1, undefined), shard(2, undefined), shard(3, undefined)])).toBeUndefined();
  });

  it("carries the agents that ran in containers, row by row, cases summed over the shards", () => {
    // before: the merged isolation dropped `containers`, so a merged run said nothing of its images.
    const row = { target: "a", engine: "podman", image: "localhost/e:1", digest: "sha256:1", cases: 2 };
    const inContainers = {
      level: null,
      reason: "every agent runs in its case's container (isolation.containers)",
      targets: [],
      containers: [row, { ...row, target: "b", cases: 1 }],
    };
    const m = mergedIsolation([
      shard(1, inContainers),
      shard(2, {
        ...BWRAP,
        containers: [{ ...row, cases: 3 }, { ...row, cases: "many" }, null, { target: 1 }],
      }),
      shard(3, NO_AGENT),
    ]);
    expect(m?.containers).toEqual([
      { ...row, cases: 5 },
      { ...row, target: "b", cases: 1 },
    ]);
    expect(m?.level).toBe("bwrap");
    expect(mergedIsolation([shard(1, inContainers), shard(2, NO_AGENT)])).toEqual({
      level: null,
      reason: "every agent runs in its case's container (isolation.containers)",
      targets: [],
      containers: inContainers.containers,
    });
  });
});
